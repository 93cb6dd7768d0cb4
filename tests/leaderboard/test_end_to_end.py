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
    env = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "Q_CLUSTER_NAME": cpu.queue,
        "DKB_DATA_DIR": str(tpch_data),
        "DKB_SANDBOX": "bubblewrap",
        "DKB_VAR_DIR": str(settings.VAR_DIR),
        "PYTHONUNBUFFERED": "1",
    }
    with log.open("w") as out:
        # Its own session, so the cluster's sentinel and worker processes stop with it.
        process = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield log
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        assert process.returncode is not None


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
