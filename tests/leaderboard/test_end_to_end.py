"""The whole path with nothing faked: an API upload, a real `manage.py qcluster` worker on the test
database, the bubblewrap sandbox, real TPC-H data, and the result on the submission page."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection

from leaderboard.models import EvaluationRun

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 300
STOP_S = 20

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_database_url() -> str:
    """A DATABASE_URL for the database this test runs on, so the worker writes where the test reads."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    credentials = quote(db["USER"] or "") + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
    return f"postgres://{credentials}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


test_database_url.__test__ = False  # a helper, not a test


@pytest.fixture
def worker(cpu, tpch_data: Path, tmp_path: Path) -> Iterator[Path]:
    """A real qcluster listening on the CPU hardware's queue; yields its log file."""
    log = tmp_path / "worker.log"
    process = start_worker(cpu.queue, tpch_data, log)
    try:
        yield log
    finally:
        stop(process)


def start_worker(queue: str, tpch_data: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "Q_CLUSTER_NAME": queue,
        "DKB_DATA_DIR": str(tpch_data),
        "DKB_SANDBOX": "bubblewrap",
        "DKB_VAR_DIR": str(settings.VAR_DIR),
        "PYTHONUNBUFFERED": "1",
    }
    with log.open("w") as out:
        # Its own session, so what is left of the cluster and its sandboxes can be killed as one group.
        return subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop(process: subprocess.Popen[bytes]) -> float:
    """Stop a worker as docker and `make run` do: SIGTERM to qcluster alone (sent to its whole group, the
    children die under the cluster's feet and it never exits: django-q2 issue #66), then SIGKILL to what
    is left. The seconds the clean stop took; inf where it needed the kill."""
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_S)
        return time.monotonic() - started
    except subprocess.TimeoutExpired:
        return float("inf")
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # its sandboxes and workers, if any are left
        except ProcessLookupError:
            pass
        process.wait()


def wait_for_final(run_id: int, log: Path) -> EvaluationRun:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        run = EvaluationRun.objects.get(pk=run_id)
        if run.is_final:
            return run
        time.sleep(1)
    pytest.fail(f"run {run_id} still {run.status} after {WAIT_S} s; worker log:\n{log.read_text()[-4000:]}")


def test_an_api_upload_is_evaluated_by_a_real_worker_and_shown_on_its_page(
    api_client, anonymous, q6, cpu, worker: Path, example_dir: Path
) -> None:
    with (example_dir / "manifest.json").open("rb") as manifest, (example_dir / "q06.py").open("rb") as q06:
        response = api_client.post(
            "/api/submissions/", {"manifest": manifest, "kernels": q06}, format="multipart"
        )
    assert response.status_code == 202, response.content
    [queued] = response.json()["runs"]

    run = wait_for_final(queued["id"], worker)

    assert run.status == EvaluationRun.Status.SUCCEEDED, (
        f"{run.error}\nworker log:\n{worker.read_text()[-4000:]}"
    )
    assert run.sandbox_backend == "bubblewrap" and run.isolated
    result = run.results.get(query__number=6)  # the only Query row the test loaded
    assert result.status == "passed", result.reason
    assert result.baseline_ms and result.kernel_ms
    assert "evaluating in the bubblewrap sandbox" in worker.read_text()

    assert anonymous.get(response.json()["url"]).status_code == 404  # private until published
    published = api_client.post(response.json()["publish_url"])
    assert published.status_code == 200 and published.json()["published_at"]
    page = anonymous.get(response.json()["url"])
    html = page.content.decode()
    assert page.status_code == 200
    assert "DataKernelBench example" in html
    assert '<span class="badge passed">passed</span>' in html
    assert "CPU timings through the Triton interpreter" in html

    body = api_client.get(queued["url"]).json()
    assert body["status"] == "succeeded"
    statuses = {q["query"]: q["status"] for q in body["report"]["queries"]}
    assert statuses[6] == "passed"
    assert set(statuses.values()) == {"passed", "missing"}  # every other query: the baseline stands in


def test_an_idle_worker_stops_on_sigterm_without_being_killed(cpu, tpch_data: Path, tmp_path: Path) -> None:
    # What docker stop and `make run`'s Ctrl-C rely on: SIGTERM to qcluster alone ends it in seconds.
    log = tmp_path / "worker.log"
    process = start_worker(cpu.queue, tpch_data, log)
    deadline = time.monotonic() + 60
    while "running." not in log.read_text() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert "running." in log.read_text(), log.read_text()[-4000:]
    took = stop(process)
    assert took < STOP_S, f"qcluster needed SIGKILL; its log:\n{log.read_text()[-4000:]}"
