"""A worker killed halfway through an evaluation (SIGKILL: the OOM killer, a reboot, a container stopped)
leaves its run unrecorded; once its lease runs out the reclaim queues the run again, and a live worker
evaluates it to completion; a slow worker that renews its lease keeps its run; a run whose worker is lost
on every attempt fails, saying so. Nothing is faked where it runs: real child processes run
`leaderboard.tasks.evaluation_execute` on the test database, with the bubblewrap sandbox."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from evaluator.kernelset import KernelSet
from evaluator.queries import QUERIES
from leaderboard import services
from leaderboard.models import EvaluationRun, Query

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 180

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    # The worker is a second process on the test database: SQLite's in-memory test database is this
    # process's alone (the SQLite path is test_end_to_end.py's).
    pytest.mark.skipif(
        "postgres" not in os.environ.get("DATABASE_URL", ""), reason="needs PostgreSQL (DATABASE_URL)"
    ),
]

# Q1 answers at once (wrongly); Q6 takes SLOW_S per call (wrongly too), long enough to kill the worker
# while it runs, short enough for the next worker to finish. Both pass a Triton set's admission (which
# allows datetime, not time).
QUICK = "import torch\n\n\ndef run_query(tables, **params):\n    return {}\n"
SLOW_S = 15
SLOW = f"""import datetime


def run_query(tables, **params):
    end = datetime.datetime.now() + datetime.timedelta(seconds={SLOW_S})
    while datetime.datetime.now() < end:
        pass
    return {{}}
"""
LEASE_S = 4  # the workers renew it every second


def parent_of(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])  # after the command's name, which may hold spaces


def sandboxes_of(worker: int, slug: str = "") -> list[int]:
    """Pids of the bubblewrap processes the worker started (for one query's runner, when a slug is given:
    the compile job id `dkb-<slug>` its command sets). By ancestry, not by run id: other sessions on this
    machine evaluate runs of the same ids on test databases of their own."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        runner = not slug or f"\0dkb-{slug}\0".encode() in command
        if command.split(b"\0")[0].endswith(b"bwrap") and runner:
            ancestor = int(proc.name)
            while ancestor > 1 and ancestor != worker:
                ancestor = parent_of(ancestor)
            if ancestor == worker:
                pids.append(int(proc.name))
    return pids


def still_running(pids: list[int]) -> list[int]:
    """Those of these bubblewrap processes still running (a zombie's command line reads empty)."""
    running = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"bwrap"):
                running.append(pid)
        except OSError:
            continue
    return running


def database_url() -> str:
    """The test database, for the worker process (PostgreSQL in CI; see test_end_to_end.py for SQLite)."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


def start_worker(run: EvaluationRun, tpch_data: Path, log_path: Path) -> subprocess.Popen[bytes]:
    """A real worker process evaluating the run, as django-q2's would: `tasks.evaluation_execute(id)`."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DKB_DATA_DIR": str(tpch_data),
        "DKB_SANDBOX": "bubblewrap",
        "DKB_VAR_DIR": str(settings.VAR_DIR),
        "DKB_WORKER_LEASE_S": str(LEASE_S),
    }
    code = (
        "import django; django.setup(); from leaderboard import tasks; "
        f"print(tasks.evaluation_execute({run.pk}))"
    )
    with log_path.open("w") as log:
        return subprocess.Popen(
            [sys.executable, "-c", code], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )


def stop(worker: subprocess.Popen[bytes], run: EvaluationRun) -> None:
    if worker.poll() is None:
        worker.kill()
        worker.wait()
    for scratch in Path(tempfile.gettempdir()).glob(f"dkb-run-{run.pk}-*"):
        shutil.rmtree(scratch, ignore_errors=True)  # a killed worker cleans up nothing


def test_a_worker_killed_mid_run_has_its_run_queued_again_and_completed_by_a_live_worker(
    q6, cpu, uploader, uploader_client, kernel_set, tpch_data: Path, tmp_path: Path, settings
) -> None:
    settings.DKB_WORKER_LEASE_S = LEASE_S
    Query.objects.create(number=1, name=QUERIES[1].name, sql=QUERIES[1].sql(), torchplan_source="")
    submission = services.submission_create(
        uploader=uploader,
        kernel_set=KernelSet(manifest=kernel_set.manifest, kernels={1: QUICK, 6: SLOW}),
        kind=EvaluationRun.Kind.FEEDBACK,  # only the set's own queries: Q1, then Q6
        enqueue=False,
    )
    run = submission.runs.get()
    first = start_worker(run, tpch_data, tmp_path / "first.log")
    try:
        deadline = time.monotonic() + WAIT_S
        while not sandboxes_of(first.pid, "q06"):  # Q1 done, Q6's runner started
            alive = first.poll() is None and time.monotonic() < deadline
            assert alive, f"the worker never reached Q6:\n{(tmp_path / 'first.log').read_text()[-3000:]}"
            time.sleep(0.5)
        run.refresh_from_db()
        assert (run.status, run.attempts) == (EvaluationRun.Status.RUNNING, 1)
        assert run.worker == f"{socket.gethostname()}:{first.pid}"

        # Slow is not dead: past a whole lease in one query, the live worker has renewed it, keeps its run.
        time.sleep(LEASE_S + 2)
        assert first.poll() is None
        assert services.evaluation_reclaim_stale() == 0
        run.refresh_from_db()
        assert run.status == EvaluationRun.Status.RUNNING and run.heartbeat > timezone.now() - timedelta(
            seconds=LEASE_S
        )

        sandboxes = sandboxes_of(first.pid)
        assert sandboxes
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        stop(first, run)

    for _ in range(50):  # --die-with-parent: the sandboxes go with their worker
        if not still_running(sandboxes):
            break
        time.sleep(0.1)
    assert still_running(sandboxes) == []
    run.refresh_from_db()
    # Never half-recorded: Q1's result was known when the worker died, and none of it was stored.
    assert run.status == EvaluationRun.Status.RUNNING
    assert run.results.count() == 0 and run.report is None and run.finished is None
    # Not before its lease ran out (timed from its last renewal, so a slow host cannot make this flaky).
    assert services.evaluation_reclaim_stale(now=run.heartbeat + timedelta(seconds=LEASE_S - 1)) == 0

    time.sleep(LEASE_S + 1)
    assert services.evaluation_reclaim_stale() == 1
    run.refresh_from_db()
    assert (run.status, run.attempts, run.progress) == (EvaluationRun.Status.QUEUED, 1, None)
    (lost,) = run.lost_attempts
    assert (lost["attempt"], lost["worker"]) == (1, f"{socket.gethostname()}:{first.pid}")
    assert "no lease renewal" in lost["reason"]
    assert services.evaluation_reclaim_stale() == 0  # queued once, not twice

    second = start_worker(run, tpch_data, tmp_path / "second.log")
    try:
        second.wait(timeout=WAIT_S)
    finally:
        stop(second, run)
    log = (tmp_path / "second.log").read_text()
    assert second.returncode == 0 and f"run {run.pk}: succeeded" in log, log[-3000:]
    run.refresh_from_db()
    assert (run.status, run.attempts) == (EvaluationRun.Status.SUCCEEDED, 2)
    assert run.worker == f"{socket.gethostname()}:{second.pid}"
    assert dict(run.results.values_list("query__number", "status")) == {1: "wrong_answer", 6: "wrong_answer"}
    assert run.lost_attempts == [lost]

    # Nothing lost on the run's API and page: how many attempts it took, and why it was retried.
    body = uploader_client.get(f"/api/runs/{run.pk}/").json()
    assert (body["status"], body["attempts"], body["max_attempts"]) == ("succeeded", 2, 2)
    assert body["lost_attempts"] == [lost]
    page = uploader_client.get(run.get_absolute_url()).content.decode()
    assert "Attempt 2 of at most 2." in page and lost["reason"] in page


def test_a_run_whose_worker_is_lost_on_every_attempt_fails_saying_so_and_a_lost_worker_records_nothing(
    q6, cpu, uploader, uploader_client, kernel_set, make_report, settings
) -> None:
    settings.DKB_WORKER_LEASE_S = LEASE_S
    run = services.submission_create(uploader=uploader, kernel_set=kernel_set, enqueue=False).runs.get()
    later = timezone.now() + timedelta(seconds=LEASE_S + 1)

    first = services.evaluation_claim(run_id=run.pk, backend="bubblewrap", worker="host-a:11")
    assert first is not None and services.evaluation_reclaim_stale(now=later) == 1
    page = uploader_client.get(run.get_absolute_url()).content.decode()
    assert "Queued again for attempt 2 of at most 2." in page and "worker host-a:11 lost" in page
    second = services.evaluation_claim(run_id=run.pk, backend="bubblewrap", worker="host-b:22")
    assert second is not None and second.attempts == 2

    # The first worker was only cut off (a paused VM, a partition), not dead: its attempt is over.
    assert not services.evaluation_heartbeat(run=run, attempt=1)
    assert not services.evaluation_progress(run=run, progress={"done": 1, "total": 1}, attempt=1)
    with pytest.raises(services.RunLeaseLost):
        services.evaluation_record(run=run, report=make_report(), attempt=1)
    services.evaluation_fail(run=run, error="late", retryable=True, attempt=1)
    run.refresh_from_db()
    assert (run.status, run.attempts, run.worker, run.error) == ("running", 2, "host-b:22", "")

    assert services.evaluation_reclaim_stale(now=later + timedelta(seconds=LEASE_S + 1)) == 1
    run.refresh_from_db()
    assert (run.status, run.retryable, run.results.count()) == ("failed", True, 0)
    assert run.error.startswith("worker lost on each of its 2 attempt(s)")
    assert [(a["attempt"], a["worker"]) for a in run.lost_attempts] == [(1, "host-a:11"), (2, "host-b:22")]
    page = uploader_client.get(run.get_absolute_url()).content.decode()
    assert "The evaluation could not be completed." in page and "worker lost on each of its 2" in page
    assert "Attempt 2 of at most 2." in page and "worker host-a:11 lost" in page
    rerun = services.evaluation_rerun(run=run)
    assert rerun.status == EvaluationRun.Status.QUEUED and rerun.rerun_of == run
