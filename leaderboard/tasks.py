"""django-q2 tasks: they receive ids, claim the row atomically and call services."""

from __future__ import annotations

import logging
import os
import socket
import tempfile
from dataclasses import asdict
from pathlib import Path

from django.conf import settings

from evaluator import evaluation
from evaluator.errors import EvaluatorError
from evaluator.tpch.scales import check_scale_factors
from leaderboard import services
from leaderboard.leases import Lease
from leaderboard.models import EvaluationRun, Hardware

log = logging.getLogger(__name__)

PROCESS_SANDBOX_WARNING = (
    "WARNING: DKB_SANDBOX=process: submitted kernels run WITHOUT isolation (no bubblewrap). "
    "Use this only for your own kernels; every run records that it was not isolated."
)


def evaluation_execute(run_id: int) -> str:
    """Evaluate one queued run in the sandbox and record its report; returns what happened, for the log."""
    backend = settings.DKB_SANDBOX
    worker = f"{socket.gethostname()}:{os.getpid()}"
    run = services.evaluation_claim(run_id=run_id, backend=backend, worker=worker)
    if run is None:
        return f"run {run_id}: not queued (gone, or claimed by another worker)"
    if backend == "process":
        print(PROCESS_SANDBOX_WARNING, flush=True)
    with Lease(run=run, attempt=run.attempts) as lease:
        return _evaluate(run, backend, lease)


def _evaluate(run: EvaluationRun, backend: str, lease: Lease) -> str:
    run_id, attempt = run.pk, lease.attempt
    hardware = run.hardware
    job_timeout = settings.DKB_EVAL_TIMEOUT_S

    def report_progress(event: evaluation.Progress) -> None:
        # Between queries: an attempt whose run was reclaimed or failed meanwhile stops here, once the
        # lease thread has seen it, rather than evaluate on for nothing (recording would be refused).
        if lease.lost:
            raise services.RunLeaseLost(f"run {run_id}: attempt {attempt} was reclaimed")
        services.evaluation_progress(run=run, progress=asdict(event), attempt=attempt)

    try:
        with tempfile.TemporaryDirectory(prefix=f"dkb-run-{run.pk}-") as scratch:
            kernel_dir = Path(scratch) / "kernels"
            kernel_set = run.submission.kernel_set()
            kernel_set.write(kernel_dir)
            # A feedback run reports the set's own queries only; a ranked one all 22 (only the set's own
            # get a runner either way).
            feedback = run.kind == EvaluationRun.Kind.FEEDBACK
            report = evaluation.evaluate(
                evaluation.Job(
                    kernel_dir=kernel_dir,
                    data_dir=settings.DKB_DATA_DIR,
                    scale_factor=hardware.scale_factor,
                    device=hardware.device,
                    timeout_s=job_timeout,
                    queries=tuple(sorted(kernel_set.kernels)) if feedback else (),
                    check_scale_factors=check_scale_factors(
                        settings.DKB_CHECK_SCALE_FACTORS, hardware.scale_factor
                    ),
                ),
                backend=backend,
                progress=report_progress,
            )
    except services.RunLeaseLost as exc:
        log.warning("%s; its evaluation stopped", exc)
        return f"run {run_id}: attempt {attempt} reclaimed, not recorded"
    except EvaluatorError as exc:
        # Ours, not the submitter's: kept on the run for admins, retryable by a rerun.
        log.error("run %s: evaluation failed: %s", run.pk, exc)
        services.evaluation_fail(
            run=run, error=f"{type(exc).__name__}: {exc}", retryable=True, attempt=attempt
        )
        return f"run {run_id}: failed ({type(exc).__name__})"
    except Exception as exc:
        log.exception("run %s: unexpected error", run.pk)
        services.evaluation_fail(
            run=run, error=f"internal error: {type(exc).__name__}: {exc}", retryable=True, attempt=attempt
        )
        raise
    try:
        services.evaluation_record(run=run, report=report, attempt=attempt)
    except services.RunLeaseLost as exc:
        log.warning("%s; its report is not recorded", exc)
        return f"run {run_id}: attempt {attempt} reclaimed, not recorded"
    except Exception as exc:
        # A report the database refuses must not leave the run "running" until the stale-run reclaim
        # frees it: the evaluation is ours to redo, so it fails retryably now.
        log.exception("run %s: the report could not be recorded", run.pk)
        services.evaluation_fail(
            run=run,
            error=f"report not recorded: {type(exc).__name__}: {exc}",
            retryable=True,
            attempt=attempt,
        )
        raise
    return f"run {run_id}: succeeded"


def baseline_calibrate(hardware_id: int) -> str:
    """Queued by the admin on a hardware's own queue: calibrate its baselines (`dkb_baselines`)."""
    hardware = Hardware.objects.get(id=hardware_id)
    rows = services.baseline_calibrate(hardware=hardware, echo=log.info)
    return f"{hardware.slug}: {len(rows)} baseline(s) calibrated"


def evaluation_reclaim() -> str:
    """Scheduled every minute (dkb_setup): queue again (or fail) the runs whose worker died mid-evaluation."""
    return f"{services.evaluation_reclaim_stale()} run(s) of lost workers queued again or failed"
