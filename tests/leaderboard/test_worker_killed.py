"""A worker killed halfway through an evaluation (SIGKILL: the OOM killer, a reboot) leaves its run
unrecorded and, once the reclaim task sees it, failed and retryable. Nothing is faked: a real child
process runs `leaderboard.tasks.evaluation_execute` on the test database, with the bubblewrap sandbox."""

from __future__ import annotations

import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
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

# Q1 answers at once (wrongly); Q6 never returns, so the worker is killed while it runs. Both pass a
# Triton set's admission.
QUICK = "import torch\n\n\ndef run_query(tables, **params):\n    return {}\n"
ENDLESS = "def run_query(tables, **params):\n    while True:\n        pass\n"


def sandboxes_of(run_id: int, slug: str = "") -> list[int]:
    """Pids of the bubblewrap processes running a kernel of this run (its kernel folder is bound in),
    for one query's runner (its scratch folder `dkb-<slug>-...`) when a slug is given."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if command.split(b"\0")[0].endswith(b"bwrap") and f"/dkb-run-{run_id}-".encode() in command:
            if f"/dkb-{slug}-".encode() in command:
                pids.append(int(proc.name))
    return pids


def database_url() -> str:
    """The test database, for the worker process (PostgreSQL in CI; see test_end_to_end.py for SQLite)."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


def test_a_worker_killed_mid_run_leaves_the_run_unrecorded_then_failed_and_retryable(
    q6, cpu, uploader, kernel_set, tpch_data: Path, tmp_path: Path
) -> None:
    Query.objects.create(number=1, name=QUERIES[1].name, sql=QUERIES[1].sql(), torchplan_source="")
    submission = services.submission_create(
        uploader=uploader,
        kernel_set=KernelSet(manifest=kernel_set.manifest, kernels={1: QUICK, 6: ENDLESS}),
        kind=EvaluationRun.Kind.FEEDBACK,  # only the set's own queries: Q1, then Q6
        enqueue=False,
    )
    run = submission.runs.get()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DKB_DATA_DIR": str(tpch_data),
        "DKB_SANDBOX": "bubblewrap",
        "DKB_VAR_DIR": str(settings.VAR_DIR),
    }
    code = f"import django; django.setup(); from leaderboard import tasks; tasks.evaluation_execute({run.pk})"
    log = (tmp_path / "worker.log").open("w")
    worker = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while not sandboxes_of(run.pk, "q06"):  # Q1 done, Q6's runner started
            alive = worker.poll() is None and time.monotonic() < deadline
            assert alive, f"the worker never reached Q6:\n{(tmp_path / 'worker.log').read_text()[-3000:]}"
            time.sleep(0.5)
        run.refresh_from_db()
        assert run.status == EvaluationRun.Status.RUNNING
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    finally:
        log.close()
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        for scratch in Path(tempfile.gettempdir()).glob(f"dkb-run-{run.pk}-*"):
            shutil.rmtree(scratch, ignore_errors=True)  # a killed worker cleans up nothing

    for _ in range(50):  # --die-with-parent: the sandbox goes with its worker
        if not sandboxes_of(run.pk):
            break
        time.sleep(0.1)
    assert sandboxes_of(run.pk) == []
    run.refresh_from_db()
    # Never half-recorded: Q1's result was known when the worker died, and none of it was stored.
    assert run.status == EvaluationRun.Status.RUNNING
    assert run.results.count() == 0 and run.report is None and run.finished is None

    # The reclaim task (every few minutes) frees it once any evaluation would have ended.
    soon = timezone.now() + datetime.timedelta(seconds=60)
    assert services.evaluation_reclaim_stale(now=soon) == 0  # not before
    later = timezone.now() + datetime.timedelta(
        seconds=settings.DKB_EVAL_TIMEOUT_S + services.RECLAIM_GRACE_S + 1
    )
    assert services.evaluation_reclaim_stale(now=later) == 1
    run.refresh_from_db()
    assert (run.status, run.retryable) == (EvaluationRun.Status.FAILED, True)
    assert "worker lost" in run.error and run.results.count() == 0
    rerun = services.evaluation_rerun(run=run)
    assert rerun.status == EvaluationRun.Status.QUEUED and rerun.rerun_of == run
