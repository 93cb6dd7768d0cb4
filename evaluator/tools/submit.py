"""`python -m evaluator submit DIR --server URL --token T`: upload a kernel set to a leaderboard, follow its
runs while they are queued and running, then print each run's per-query results and overall speedup.

Standard library only (urllib): a researcher needs nothing but this package and an API token (the upload
page makes one). The set is checked here first with the evaluator's own reader, so a malformed set fails
with the same error code it would get from the server, without an upload.
"""

from __future__ import annotations

import io
import json
import time
import urllib.error
import urllib.request
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.errors import EvaluatorError, SubmissionError
from evaluator.kernelset import kernel_set_from_dir

# Zip entries carry this date rather than the files' own: the same set zips to the same bytes, so the
# server recognises an upload it already has (by the archive's hash) and answers with that submission.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
USER_AGENT = "datakernelbench-submit/1"


def archive_of(directory: Path) -> bytes:
    """The set's manifest.json and qNN.py files as a zip, after checking them as the server will."""
    kernel_set = kernel_set_from_dir(directory)
    names = ["manifest.json", *(f"q{number:02d}.py" for number in sorted(kernel_set.kernels))]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in names:
            archive.writestr(zipfile.ZipInfo(name, _ZIP_DATE), (directory / name).read_bytes())
    return buffer.getvalue()


@dataclass(frozen=True)
class Client:
    """The leaderboard's REST API as seen from a script: JSON in and out, errors raised as exceptions."""

    server: str
    token: str
    timeout_s: float = 60.0

    def url(self, path: str) -> str:
        return path if "://" in path else self.server.rstrip("/") + path

    def call(
        self, method: str, path: str, *, body: bytes | None = None, content_type: str | None = None
    ) -> dict[str, Any]:
        """The answer's JSON. A 4xx raises SubmissionError with the server's code; anything else that is
        not an answer (5xx, no connection, not JSON) raises EvaluatorError."""
        headers = {"Authorization": f"Token {self.token}", "Accept": "application/json"}
        headers["User-Agent"] = USER_AGENT
        if content_type:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(self.url(path), data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise _http_error(exc) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EvaluatorError(f"cannot reach {self.url(path)}: {reason}") from None
        try:
            answer = json.loads(raw)
        except ValueError:
            raise EvaluatorError(f"{self.url(path)} did not answer JSON: {raw[:200]!r}") from None
        if not isinstance(answer, dict):
            raise EvaluatorError(f"{self.url(path)} answered {type(answer).__name__}, not an object")
        return answer

    def upload(self, archive: bytes, *, kind: str) -> dict[str, Any]:
        body, content_type = multipart({"kind": kind}, {"archive": ("set.zip", archive)})
        return self.call("POST", "/api/submissions/", body=body, content_type=content_type)


def _http_error(exc: urllib.error.HTTPError) -> Exception:
    raw = exc.read()
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = {}
    detail = answer.get("detail") if isinstance(answer, dict) else None
    if exc.code == 401:
        return SubmissionError("unauthorized", f"the server refused the token: {detail or exc.reason}")
    if 400 <= exc.code < 500:
        code = answer.get("code") if isinstance(answer, dict) else None
        return SubmissionError(str(code or f"http_{exc.code}"), str(detail or exc.reason))
    return EvaluatorError(f"{exc.url} answered {exc.code} {exc.reason}: {raw[:300]!r}")


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body and its Content-Type."""
    boundary = uuid.uuid4().hex
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        )
    for name, (filename, data) in files.items():
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        )
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def progress_line(run: dict[str, Any]) -> str:
    """Where a run is, in a few words: "queued", "running: query 2 of 5, Q06 ended (passed)"."""
    p = run.get("progress")
    if run["status"] != "running" or not isinstance(p, dict) or not p.get("total"):
        return str(run["status"])
    # "started": the query ending next is the (done + 1)th; "ended": it was the done-th.
    position = int(p.get("done", 0)) + (1 if p.get("phase") == "started" else 0)
    line = f"running: query {position} of {p['total']}, Q{int(p.get('query', 0)):02d} {p.get('phase', '')}"
    return line + (f" ({p['status']})" if p.get("status") else "")


def _number(value: Any, spec: str, unit: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{unit}"


def results_table(results: dict[str, Any]) -> str:
    """A run's per-query results (GET /api/runs/<id>/results/) as a text table and its scores."""
    lines = [f"{'query':<6}{'status':<15}{'baseline ms':>12}{'kernel ms':>11}{'speedup':>9}  note"]
    for row in results["rows"]:
        note = row.get("reason") or row.get("flagged") or row.get("unstable") or ""
        line = (
            f"Q{row['query']:02d}   {row['status']:<15}{_number(row['baseline_ms'], '.3f'):>12}"
            f"{_number(row['kernel_ms'], '.3f'):>11}{_number(row['speedup'], '.2f', 'x'):>9}  "
            + " ".join(str(note).split())[:80]
        )
        lines.append(line.rstrip())
    pass_rate = results.get("pass_rate")
    lines.append(
        f"overall speedup {_number(results.get('overall_speedup'), '.2f', 'x')}, "
        f"geomean {_number(results.get('geomean_speedup'), '.2f', 'x')}, "
        f"pass rate {_number(None if pass_rate is None else pass_rate * 100, '.0f', '%')}"
        + ("" if results.get("ranked") else " (timing not ranked: the run's page says why)")
    )
    return "\n".join(lines)


def submit(
    directory: Path,
    *,
    client: Client,
    kind: str = "ranked",
    publish: bool = False,
    wait: bool = True,
    poll_s: float = 5.0,
    wait_s: float = 3600.0,
    echo: Callable[[str], object] = print,
    sleep: Callable[[float], object] = time.sleep,
) -> int:
    """Upload the set, publish it if asked, follow its runs until they end (or `wait_s` passes) and echo
    their results. 0 when every run succeeded, 1 otherwise; bad input raises SubmissionError."""
    archive = archive_of(directory)
    answer = client.upload(archive, kind=kind)
    what = "already uploaded as" if answer.get("duplicate") else "uploaded"
    echo(f"{what} submission #{answer['submission']}: {answer['url']}")
    if publish:
        published = client.call("POST", answer["publish_url"])
        echo(f"published at {published['published_at']}")
    else:
        echo(f"private until you publish it: POST {answer['publish_url']} (or --publish)")
    runs = {run["id"]: run for run in answer["runs"]}
    if not wait or not runs:
        return 0
    shown: dict[int, str] = {}
    deadline = time.monotonic() + wait_s
    while True:
        for run_id, run in runs.items():
            if not run.get("final"):
                runs[run_id] = run = client.call("GET", run.get("url") or f"/api/runs/{run_id}/")
            line = progress_line(run)
            if shown.get(run_id) != line:
                echo(f"run {run_id} on {run['hardware']}: {line}")
                shown[run_id] = line
        if all(run.get("final") for run in runs.values()):
            break
        if time.monotonic() > deadline:
            echo(f"gave up waiting after {wait_s:.0f} s; the runs go on: {answer['url']}")
            return 1
        sleep(poll_s)
    ok = True
    for run_id, run in runs.items():
        if run["status"] != "succeeded":
            ok = False
            echo(f"run {run_id} on {run['hardware']} failed: {run.get('error') or 'no reason given'}")
            continue
        echo(f"\nrun {run_id} on {run['hardware']} ({run['kind']}):")
        echo(results_table(client.call("GET", f"/api/runs/{run_id}/results/")))
    return 0 if ok else 1
