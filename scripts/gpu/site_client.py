"""The client half of scripts/gpu/site.sh: upload kernel sets through the site's REST API as a user
would, wait for their runs, read the results back (API and page) and write a summary.

Standard library only, and the submit client's multipart body (the GPU host has no network and nothing
installed beyond torch; site.sh puts the project on PYTHONPATH). Everything it
learns lies in STATE (one JSON file per upload), so consecutive device calls continue where the last
stopped; the summary is rebuilt from STATE every time.

    site_client.py upload  --base URL --token-file F --state DIR NAME=FOLDER ...
    site_client.py wait    --base URL --token-file F --state DIR --out OUT --deadline EPOCH_S
    site_client.py summary --state DIR --out OUT
"""

from __future__ import annotations

import argparse
import io
import json
import re
import statistics
import sys
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

from evaluator.tools.submit import multipart  # standard library only, like this script

FINAL = ("succeeded", "failed")
POLL_S = 2.0
# What examples/planted/README.md expects of each planted set; "caught" is any verdict but a clean pass.
PLANTED = {
    "float32-literal": "wrong_answer",
    "hardcoded-default": "wrong_answer",
    "torch-fallback": "passed + framework_fallback label (GPU only)",
}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# --- HTTP -----------------------------------------------------------------------------------------


def request(
    base: str, path: str, token: str | None = None, body: bytes | None = None, content_type: str = ""
) -> tuple[int, bytes]:
    req = urllib.request.Request(base.rstrip("/") + path, data=body, method="POST" if body else "GET")
    if token:
        req.add_header("Authorization", f"Token {token}")
    if content_type:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def zipped(folder: Path, repeat: str = "") -> bytes:
    """The set as an upload: manifest.json and the qNN.py files, nothing else the folder holds. A
    repeat's manifest notes say which upload it is: the site answers the same archive from the same
    user with the existing submission, and a repeat is meant to be a new evaluation (a new seed)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            data = path.read_bytes()
            if path.name == "manifest.json" and repeat:
                manifest = json.loads(data)
                manifest["notes"] = f"{manifest.get('notes', '')} ({repeat})".strip()
                data = json.dumps(manifest, indent=1).encode()
            if path.name == "manifest.json" or re.fullmatch(r"q\d\d\.py", path.name):
                archive.writestr(path.name, data)
    return buffer.getvalue()


# --- state ----------------------------------------------------------------------------------------


def uploads(state: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((state / "uploads").glob("*.json"), key=_order)]


def _order(path: Path) -> float:
    return json.loads(path.read_text()).get("uploaded_at", 0.0)


def save(state: Path, upload: dict[str, Any]) -> None:
    folder = state / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{_slug(upload['name'])}.tmp"
    tmp.write_text(json.dumps(upload, indent=1))
    tmp.replace(folder / f"{_slug(upload['name'])}.json")


def free_name(state: Path, name: str) -> str:
    """`name`, or name#2, name#3 ... when that set was uploaded before (a repeat: a new secret seed)."""
    taken = {u["name"] for u in uploads(state)}
    if name not in taken:
        return name
    n = 2
    while f"{name}#{n}" in taken:
        n += 1
    return f"{name}#{n}"


# --- steps ----------------------------------------------------------------------------------------


def upload_sets(base: str, token: str, state: Path, specs: list[str], kind: str) -> int:
    failed = 0
    for spec in specs:
        name, _, folder = spec.partition("=")
        name = free_name(state, name)
        repeat = f"upload {name.partition('#')[2]}" if "#" in name else ""
        body, content_type = multipart(
            {"kind": kind}, {"archive": (f"{Path(folder).name}.zip", zipped(Path(folder), repeat))}
        )
        started = time.time()
        status, raw = request(base, "/api/submissions/", token, body, content_type)
        record: dict[str, Any] = {
            "name": name,
            "folder": folder,
            "uploaded_at": started,
            "http_status": status,
        }
        try:
            answer = json.loads(raw)
        except ValueError:
            answer = {"detail": raw[:500].decode(errors="replace")}
        if status in (200, 202):  # 200: the same archive again, answered with the existing submission
            record |= {"submission": answer["submission"], "page": answer["url"], "runs": answer["runs"]}
            log(f"upload {name}: submission {answer['submission']}, runs {[r['id'] for r in answer['runs']]}")
            if answer.get("duplicate"):
                failed += 1
                record["error"] = f"a duplicate of submission {answer['submission']}: no new evaluation"
            elif not answer["runs"]:
                record["error"] = "no run: no active hardware"
            record["published"] = publish(base, token, answer)
        else:
            failed += 1
            record["error"] = f"HTTP {status}: {answer.get('code', '')} {answer.get('detail', '')}".strip()
            log(f"upload {name}: refused, {record['error']}")
        save(state, record)
    return failed


def publish(base: str, token: str, answer: dict[str, Any]) -> bool:
    """Make the set public, as its uploader would: private sets show to no one else, and the summary's
    page check reads the page anonymously."""
    path = "/" + answer["publish_url"].split("://", 1)[-1].split("/", 1)[1]
    status, raw = request(base, path, token, body=b"{}", content_type="application/json")
    if status != 200:
        log(f"publishing submission {answer['submission']}: HTTP {status} {raw[:200]!r}")
    return status == 200


def pending(upload: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in upload.get("runs", []) if r.get("status") not in FINAL]


def wait(base: str, token: str, state: Path, out: Path, deadline: float) -> int:
    """Poll every unfinished run until it is final or `deadline` (epoch s) passes; 0 when all are final."""
    announced: dict[int, str] = {}
    while True:
        waiting = 0
        for upload in uploads(state):
            changed = False
            for run in pending(upload):
                status, raw = request(base, f"/api/runs/{run['id']}/", token)
                if status != 200:
                    log(f"{upload['name']}: run {run['id']}: HTTP {status}")
                    waiting += 1
                    continue
                detail = json.loads(raw)
                if announced.get(run["id"]) != detail["status"]:
                    announced[run["id"]] = detail["status"]
                    log(f"{upload['name']}: run {run['id']} {detail['status']}")
                run["status"] = detail["status"]
                changed = True
                if detail["status"] not in FINAL:
                    waiting += 1
                    continue
                run["seen_final_at"] = time.time()
                run["upload_to_result_s"] = round(run["seen_final_at"] - upload["uploaded_at"], 1)
                reports = state / "reports"
                reports.mkdir(parents=True, exist_ok=True)
                (reports / f"{_slug(upload['name'])}-run{run['id']}.json").write_text(
                    json.dumps(detail, indent=1)
                )
                run["page_check"] = page_check(base, upload, detail)
                took = run["upload_to_result_s"]
                log(f"{upload['name']}: run {run['id']} {detail['status']} after {took} s")
            if changed:
                save(state, upload)
        if not waiting:
            return 0
        if time.time() >= deadline:
            log(f"{waiting} run(s) not finished within the budget; a later `wait` continues")
            return 3
        time.sleep(POLL_S)


def page_check(base: str, upload: dict[str, Any], detail: dict[str, Any]) -> str:
    """ "ok" when the submission page renders the run's status and each of its queries' verdicts."""
    status, raw = request(base, f"/submissions/{upload['submission']}/?run={detail['id']}")
    if status != 200:
        return f"HTTP {status}"
    html = raw.decode(errors="replace")
    # Pages call a succeeded run "evaluated" (leaderboard/templatetags/leaderboard.py, `run_state`); the
    # API keeps "succeeded".
    shown = "evaluated" if detail["status"] == "succeeded" else detail["status"]
    missing = [] if f">{shown}<" in html else [f"run status {shown}"]
    own = set(_own_queries(upload, detail))
    for row in (detail.get("report") or {}).get("queries", []):
        if row["query"] in own and f'badge {row["status"]}"' not in html:
            missing.append(f"Q{row['query']:02d} {row['status']}")
    return "ok" if not missing else "missing: " + ", ".join(missing)


def _own_queries(upload: dict[str, Any], detail: dict[str, Any]) -> list[int]:
    folder = Path(upload.get("folder", ""))
    numbers = sorted(int(p.stem[1:]) for p in folder.glob("q[0-9][0-9].py")) if folder.is_dir() else []
    return numbers or [r["query"] for r in (detail.get("report") or {}).get("queries", [])]


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "-", name).strip(".-")  # not a dotfile: "./reference/x"


# --- summary --------------------------------------------------------------------------------------


def _fmt(value: Any, spec: str = ".2f") -> str:
    return "–" if value is None else format(value, spec)


def _detail(state: Path, upload: dict[str, Any], run: dict[str, Any]) -> dict[str, Any] | None:
    path = state / "reports" / f"{_slug(upload['name'])}-run{run['id']}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _row(*cells: Any) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _on_cpu(report: dict[str, Any]) -> bool:
    return (report.get("hardware") or {}).get("device", "cpu") == "cpu"


def _seconds(start: str | None, end: str | None) -> float | None:
    from datetime import datetime

    if not start or not end:
        return None
    return round((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds(), 1)


def summary(state: Path, out: Path) -> str:
    rows, queries, repeats, planted = [], [], {}, []
    for upload in uploads(state):
        if not upload.get("runs"):
            rows.append(f"| {upload['name']} | – | – | {upload.get('error', '')} |" + " |" * 9)
            continue
        for run in upload["runs"]:
            detail = _detail(state, upload, run)
            if detail is None:
                rows.append(
                    f"| {upload['name']} | {upload['submission']} | {run['id']} | "
                    f"not finished ({run.get('status', 'queued')}) |" + " |" * 9
                )
                continue
            report = detail.get("report") or {}
            timing = report.get("timing") or {}
            timing_text = (
                ("ranked" if timing.get("ranked") else f"unranked: {timing.get('reason', '')}")
                if timing
                else "–"
            )
            status = detail["status"] + (f": {detail['error'][:120]}" if detail.get("error") else "")
            rows.append(
                _row(
                    upload["name"],
                    upload["submission"],
                    run["id"],
                    status,
                    _fmt(run.get("upload_to_result_s"), ".1f"),
                    _fmt(_seconds(detail["created"], detail["started"]), ".1f"),
                    _fmt(_seconds(detail["started"], detail["finished"]), ".1f"),
                    _fmt(report.get("wall_s"), ".1f"),
                    _fmt(detail.get("overall_speedup"), ".3f"),
                    _fmt(detail.get("geomean_speedup"), ".3f"),
                    _fmt(detail.get("pass_rate"), ".0%"),
                    timing_text,
                    run.get("page_check", "–"),
                )
            )
            own = set(_own_queries(upload, detail))
            speeds = {}
            for q in report.get("queries", []):
                if q["query"] not in own:
                    continue
                labels = ", ".join(
                    k for k in ("framework_fallback", "unstable") if (q.get("stats") or {}).get(k)
                )
                reason = (q.get("reason") or "").replace("|", "/").replace("\n", " ")[:140]
                queries.append(
                    _row(
                        upload["name"],
                        f"Q{q['query']:02d}",
                        q["status"],
                        _fmt(q.get("speedup"), ".3f"),
                        _fmt(q.get("baseline_ms"), ".3f"),
                        _fmt(q.get("kernel_ms"), ".3f"),
                        (q.get("stats") or {}).get("baseline_mode", "–"),
                        labels,
                        reason,
                    )
                )
                passed = q["status"] == "passed"
                paired = ((q.get("stats") or {}).get("kernel") or {}).get("paired_speedup")
                speeds[(q["query"], "")] = q.get("speedup") if passed else None
                speeds[(q["query"], " paired")] = paired if passed else None
                if "planted" in upload.get("folder", ""):
                    flaw = Path(upload["folder"]).name
                    caught = q["status"] != "passed" or bool(labels)
                    verdict = "caught" if caught else "NOT caught"
                    if not caught and "GPU only" in PLANTED.get(flaw, "") and _on_cpu(report):
                        verdict += " (as expected on a CPU: no device time to attribute)"
                    planted.append(
                        f"| {upload['name']} | {PLANTED.get(flaw, '?')} | {q['status']} | {labels or '–'} | "
                        f"{verdict} |"
                    )
            if report.get("queries"):  # a run that failed has no speeds to compare
                repeats.setdefault(upload["name"].split("#")[0], []).append(speeds)
    text = ["# The site's own path: uploads through the REST API, results through the API and the page", ""]
    text += [
        "| set | submission | run | status | upload→result s | queued s | evaluating s | report wall s | "
        "overall | geomean | pass rate | timing | page |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "## Per query",
        "",
        "| set | query | status | speedup | baseline ms | kernel ms | baseline mode | labels | reason |",
        "|---|---|---|---|---|---|---|---|---|",
        *queries,
    ]
    repeated = {name: runs for name, runs in repeats.items() if len(runs) > 1}
    for name, runs in repeated.items():
        text += ["", f"## {name}: {len(runs)} uploads, {len(runs)} secret seeds", ""]
        text += [
            "| query | "
            + " | ".join(f"upload {i + 1}" for i in range(len(runs)))
            + " | max relative spread |"
        ]
        text += ["|---|" + "---|" * (len(runs) + 1)]
        spreads: dict[str, list[float]] = {"": [], " paired": []}
        for number, which in sorted({key for r in runs for key in r}):
            values = [r.get((number, which)) for r in runs]
            known = [v for v in values if v]
            spread = (max(known) - min(known)) / statistics.median(known) if len(known) > 1 else None
            if spread is not None:
                spreads[which].append(spread)
            cells = " | ".join(_fmt(v, ".3f") for v in values)
            text.append(f"| Q{number:02d}{which} | {cells} | {_fmt(spread, '.1%')} |")
        for which, found in spreads.items():
            largest = _fmt(max(found) if found else None, ".1%")
            what = "paired speedup" if which else "speedup"
            text.append(
                f"\nlargest relative spread of the {what}, (max − min) / median, over the queries: {largest}"
            )
    if planted:
        text += ["", "## Planted bugs (caught: any verdict but a clean pass)", ""]
        text += ["| set | expected | status | labels | verdict |", "|---|---|---|---|---|", *planted]
    calibration = state / "calibration.json"
    if calibration.exists():
        c = json.loads(calibration.read_text())
        text += [
            "",
            f"Baseline calibration (separate step): {c.get('seconds', 0):.0f} s for {c.get('queries', '?')}",
        ]
    body = "\n".join(text) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text(body)
    reports = out / "reports"
    reports.mkdir(exist_ok=True)
    for path in (state / "reports").glob("*.json"):
        (reports / path.name).write_bytes(path.read_bytes())
    return body


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("step", choices=("upload", "wait", "summary"))
    parser.add_argument("sets", nargs="*", help="upload: NAME=FOLDER ...")
    parser.add_argument("--base", default="http://127.0.0.1:8765")
    parser.add_argument("--token-file", type=Path)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("out-site"))
    parser.add_argument("--deadline", type=float, default=0.0, help="wait: epoch seconds to stop at")
    parser.add_argument("--kind", default="ranked", choices=("ranked", "feedback"))
    args = parser.parse_intermixed_args()
    token = args.token_file.read_text().strip() if args.token_file else ""
    if args.step == "upload":
        return 1 if upload_sets(args.base, token, args.state, args.sets, args.kind) else 0
    if args.step == "wait":
        return wait(args.base, token, args.state, args.out, args.deadline)
    print(summary(args.state, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
