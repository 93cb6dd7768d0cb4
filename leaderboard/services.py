"""Every write the leaderboard makes. Views, the API, admin actions, commands and tasks call these.

Services are keyword-only `<entity>_<action>` functions; each runs in one transaction and queues work only
after that transaction commits, so a worker never sees a half-stored submission.
"""

from __future__ import annotations

import datetime
import logging
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.text import slugify
from rest_framework.authtoken.models import Token

import evaluator
from evaluator.errors import SubmissionError
from evaluator.kernelset import KernelSet
from evaluator.report import Report
from leaderboard import highlighting
from leaderboard.models import (
    BaselineCalibration,
    EvaluationRun,
    Hardware,
    Kernel,
    LanguageModel,
    Query,
    QueryResult,
    Submission,
    report_timing,
)

log = logging.getLogger(__name__)

GENERATION_KEY = "dkb:generation"
EVALUATION_TASK = "leaderboard.tasks.evaluation_execute"
RECLAIM_TASK = "leaderboard.tasks.evaluation_reclaim"
CALIBRATION_TASK = "leaderboard.tasks.baseline_calibrate"
# How long past the evaluation limit a run may stay "running" before its worker counts as lost.
RECLAIM_GRACE_S = 600


def cache_generation() -> str:
    """The current results generation; cached pages and charts put it in their keys."""
    generation = cache.get(GENERATION_KEY)
    if generation is None:
        generation = results_changed()
    return generation


def results_changed() -> str:
    """Start a new cache generation: everything cached under the old one is never read again."""
    # A random token rather than a counter: no read-modify-write race between web and worker processes.
    generation = uuid.uuid4().hex[:12]
    cache.set(GENERATION_KEY, generation, timeout=None)
    return generation


def language_model_get_or_create(*, name: str) -> LanguageModel:
    """The model of exactly this name, as the manifest gives it. Names that slugify alike ("gpt 4o" and
    "GPT-4o", two emoji) are different models: the slug is only an address, numbered when taken."""
    name = name[:100]
    for _ in range(5):
        if existing := LanguageModel.objects.filter(name=name).first():
            return existing
        base = slugify(name)[:90] or "model"
        slug, number = base, 2
        while LanguageModel.objects.filter(slug=slug).exists():
            slug, number = f"{base}-{number}", number + 1
        try:
            with transaction.atomic():
                return LanguageModel.objects.create(name=name, slug=slug)
        except IntegrityError:
            continue  # another upload took this name or slug meanwhile: look again
    raise RuntimeError(f"could not store the model name {name!r}")


@transaction.atomic
def submission_create(
    *,
    uploader: User,
    kernel_set: KernelSet,
    archive_sha256: str = "",
    enqueue: bool = True,
    kind: str = EvaluationRun.Kind.RANKED,
    hardware: list[Hardware] | None = None,
) -> Submission:
    """Store a validated kernel set and queue a run of `kind` on every active hardware (or on `hardware`:
    none for a set whose results come from elsewhere, `evaluation_import`).

    A feedback run evaluates only the set's own queries and is never ranked: the repair loop's quick
    answer. With `enqueue=False` the runs are created but not sent to a worker (the caller evaluates
    them itself, as `manage.py dkb_submit --wait` does).
    """
    queries = {q.number: q for q in Query.objects.filter(number__in=kernel_set.kernels)}
    unknown = sorted(set(kernel_set.kernels) - set(queries))
    if unknown:
        names = ", ".join(f"q{n:02d}.py" for n in unknown)
        raise SubmissionError("query_not_in_benchmark", f"{names}: not in the benchmark yet")
    manifest = kernel_set.manifest
    submission = Submission.objects.create(
        uploader=uploader,
        language_model=language_model_get_or_create(name=manifest.model),
        language=manifest.language,
        scope=manifest.scope,
        context=manifest.context,
        agent=manifest.agent,
        repair_rounds=manifest.repair_rounds,
        notes=manifest.notes,
        archive_sha256=archive_sha256,
    )
    Kernel.objects.bulk_create(
        # bulk_create skips Kernel.save: each source is highlighted here, once.
        Kernel(
            submission=submission,
            query=queries[number],
            source=source,
            source_html=highlighting.to_html(source, "python"),
        )
        for number, source in sorted(kernel_set.kernels.items())
    )
    for machine in Hardware.objects.active() if hardware is None else hardware:
        evaluation_enqueue(submission=submission, hardware=machine, kind=kind, enqueue=enqueue)
    return submission


def submission_upload(
    *,
    uploader: User,
    kernel_set: KernelSet,
    archive_sha256: str,
    kind: str = EvaluationRun.Kind.RANKED,
) -> tuple[Submission, bool]:
    """A researcher's upload: the set they already uploaded with the same archive hash and kind, or a new
    one (`submission_create`); True when new. A repeated upload would only queue the same work again."""
    if archive_sha256:
        earlier = (
            Submission.objects.uploads_of(user=uploader, kind=kind)
            .filter(archive_sha256=archive_sha256)
            .order_by("-created", "-id")
            .first()
        )
        if earlier is not None:
            return earlier, False
    return submission_create(
        uploader=uploader, kernel_set=kernel_set, archive_sha256=archive_sha256, kind=kind
    ), True


@transaction.atomic
def evaluation_enqueue(
    *,
    submission: Submission,
    hardware: Hardware,
    kind: str = EvaluationRun.Kind.RANKED,
    rerun_of: EvaluationRun | None = None,
    enqueue: bool = True,
) -> EvaluationRun:
    """Create a queued run and hand its id to the hardware's worker once the transaction commits."""
    run = EvaluationRun.objects.create(submission=submission, hardware=hardware, kind=kind, rerun_of=rerun_of)
    if enqueue:
        transaction.on_commit(lambda: _send_to_worker(run))
    return run


def _send_to_worker(run: EvaluationRun) -> None:
    # Imported here: django_q's broker modules read settings at import time.
    from django_q.tasks import async_task

    async_task(EVALUATION_TASK, run.id, cluster=run.hardware.queue, task_name=f"evaluate-run-{run.id}")


def evaluation_rerun(*, run: EvaluationRun) -> EvaluationRun:
    """Evaluate the same submission on the same hardware again, as a new run beside the old one."""
    return evaluation_enqueue(submission=run.submission, hardware=run.hardware, kind=run.kind, rerun_of=run)


@transaction.atomic
def evaluation_rerun_top(*, hardware: Hardware, count: int) -> list[EvaluationRun]:
    """Queue, as one batch, a rerun of the hardware's `count` best ranked sets under the current harness
    version: those whose ranked run was measured by another version and that have no run waiting or
    running there already. Returns the new runs, best set first; they reach the worker once this commits.
    """
    if not hardware.active:
        raise ValueError(f"{hardware.name} is inactive: no worker evaluates on it")
    top = EvaluationRun.objects.ranked(hardware=hardware)[:count]
    waiting = set(
        EvaluationRun.objects.pending().filter(hardware=hardware).values_list("submission", flat=True)
    )
    return [
        evaluation_rerun(run=run)
        for run in top
        if run.harness_version != evaluator.HARNESS_VERSION and run.submission_id not in waiting
    ]


class RunLeaseLost(Exception):
    """The worker's attempt at a run is over: the run was reclaimed (queued again, or failed) meanwhile, so
    what this worker found must not be stored."""


def evaluation_claim(*, run_id: int, backend: str, worker: str = "") -> EvaluationRun | None:
    """Move a queued run to running, as a new attempt leased to `worker` (its `attempts` is the attempt's
    number); None when it is gone or another worker already has it."""
    now = timezone.now()
    claimed = EvaluationRun.objects.filter(id=run_id, status=EvaluationRun.Status.QUEUED).update(
        status=EvaluationRun.Status.RUNNING,
        started=now,
        sandbox_backend=backend,
        attempts=F("attempts") + 1,
        worker=worker[:200],
        heartbeat=now,
    )
    if not claimed:
        return None
    return EvaluationRun.objects.select_related("hardware", "submission").get(id=run_id)


def evaluation_heartbeat(*, run: EvaluationRun, attempt: int) -> bool:
    """Renew the worker's lease on its attempt at a run; False once that attempt is no longer running
    (reclaimed as lost, failed by an admin, finished). A run this connection cannot see (deleted, or not
    committed yet) counts as renewed: recording its report is what fails then."""
    runs = EvaluationRun.objects.filter(id=run.pk)
    renewed = runs.filter(status=EvaluationRun.Status.RUNNING, attempts=attempt).update(
        heartbeat=timezone.now()
    )
    return bool(renewed) or not runs.exists()


@transaction.atomic
def evaluation_record(
    *, run: EvaluationRun, report: dict[str, Any], attempt: int | None = None
) -> EvaluationRun:
    """Store a finished evaluation's report, its per-query results and the set-level scores.

    A worker passes its `attempt`: RunLeaseLost when that attempt no longer runs, so a worker thought lost
    never stores over the attempt that replaced it.
    """
    run = EvaluationRun.objects.select_for_update().select_related("hardware").get(id=run.pk)
    lease_lost = RunLeaseLost(
        f"run {run.pk}: attempt {attempt} is over (now {run.status}, attempt {run.attempts})"
    )
    if attempt is not None and run.attempts != attempt:
        raise lease_lost
    if run.is_final:
        raise ValueError(f"run {run.pk} is already {run.status}; a rerun is a new run")
    if attempt is not None and run.status != EvaluationRun.Status.RUNNING:
        raise lease_lost  # queued again for its next attempt
    parsed = Report.from_dict(report)  # the report's shape has one source: evaluator/report.py
    queries = {q.number: q for q in Query.objects.all()}
    results = []
    for row in parsed.queries:
        query = queries.get(row.query)
        if query is None:
            log.warning("run %s: report has Q%s, which is not loaded; skipped", run.pk, row.query)
            continue
        results.append(
            QueryResult(
                run=run,
                query=query,
                status=row.status,
                reason=row.reason[:10000],
                baseline_ms=row.baseline_ms,
                kernel_ms=row.kernel_ms,
                speedup=row.speedup,
                roofline_fraction=row.roofline_fraction,
                kernel_time_share=row.kernel_time_share,
                launches=row.launches,
                trials=row.trials,
                stats=row.stats,
            )
        )
    QueryResult.objects.bulk_create(results)
    run.report = report
    run.harness_version = parsed.harness_version
    run.sandbox_backend = str(parsed.sandbox.get("backend", run.sandbox_backend))
    for field in ("overall_speedup", "geomean_speedup", "pass_rate", "fast_1", "fast_2"):
        setattr(run, field, getattr(parsed, field))
    run.timing_ranked, run.timing_override = report_timing(report, hardware=run.hardware)
    run.status = EvaluationRun.Status.SUCCEEDED
    run.finished = timezone.now()
    run.error = ""
    run.save()  # leaderboard.signals starts a new cache generation once this commits
    return run


@transaction.atomic
def evaluation_import(
    *, submission: Submission, hardware: Hardware, report: dict[str, Any], finished: datetime.datetime
) -> EvaluationRun | None:
    """Store a report the harness wrote elsewhere (an H200 session's, docs/results) as a ranked run of
    `hardware` on `submission` that finished at `finished`; None when the set already has this very report
    on that hardware, so importing twice adds nothing."""
    stored = EvaluationRun.objects.filter(submission=submission, hardware=hardware, report__isnull=False)
    if any(run.report == report for run in stored.only("report")):
        return None
    run = evaluation_enqueue(submission=submission, hardware=hardware, enqueue=False)
    run = evaluation_record(run=run, report=report)
    # Dated as measured, not as imported: the run list and the latest-run rankings go by these.
    started = finished - datetime.timedelta(seconds=float(report.get("wall_s") or 0))
    EvaluationRun.objects.filter(pk=run.pk).update(created=started, started=started, finished=finished)
    transaction.on_commit(results_changed)
    run.refresh_from_db()
    return run


def evaluation_progress(*, run: EvaluationRun, progress: dict[str, Any], attempt: int | None = None) -> bool:
    """Keep where a running evaluation is (renewing the lease of `attempt` when given); False once the run
    (or that attempt) is no longer running.

    One UPDATE of the one column: the worker's copy of the row is never saved, so a status set meanwhile
    (an admin failing the run, the stale-run reclaim) stays.
    """
    runs = EvaluationRun.objects.filter(id=run.pk, status=EvaluationRun.Status.RUNNING)
    if attempt is None:
        return bool(runs.update(progress=progress))
    return bool(runs.filter(attempts=attempt).update(progress=progress, heartbeat=timezone.now()))


def evaluation_fail(
    *, run: EvaluationRun, error: str, retryable: bool, attempt: int | None = None
) -> EvaluationRun:
    """Record that the evaluation itself could not be done (not that kernels failed: that is a result).
    A worker passes its `attempt`, which fails the run only while that attempt still runs."""
    if not run.mark_failed(error=error[:20000], retryable=retryable, attempt=attempt):
        log.warning("run %s had already finished or moved on; failure not recorded: %s", run.pk, error)
    return run


def evaluation_reclaim_stale(*, now: datetime.datetime | None = None) -> int:
    """Reclaim the runs whose worker is gone; returns how many were queued again or failed.

    A worker killed mid-run (host reboot, OOM killer, a container stopped) leaves its run "running": the
    report is recorded in one transaction or not at all, so nothing half-stored remains. Its lease tells a
    dead worker from a slow one: a live worker renews it every quarter of DKB_WORKER_LEASE_S however long
    a query takes (`leaderboard.leases`). A run whose lease ran out is queued again on its hardware while
    it has had fewer than DKB_RUN_ATTEMPTS attempts, else failed (retryably: an admin may rerun it); each
    lost attempt is kept in `lost_attempts`. A run still running past any evaluation's limit whose lease is
    renewed (a worker stuck, not dead) or was never taken (a worker from before leases) is failed, never
    queued again, since its worker may still hold it.
    """
    now = now or timezone.now()
    lease = datetime.timedelta(seconds=settings.DKB_WORKER_LEASE_S)
    reclaimed = 0
    for run in EvaluationRun.objects.lease_expired(renewed_before=now - lease).select_related("hardware"):
        reclaimed += _reclaim_lost(run=run, now=now)
    limit = datetime.timedelta(seconds=settings.DKB_EVAL_TIMEOUT_S + RECLAIM_GRACE_S)
    for run in EvaluationRun.objects.stale(started_before=now - limit):
        if run.mark_failed(
            error=f"worker lost: still running {limit} after it started; rerun it", retryable=True
        ):
            reclaimed += 1
    return reclaimed


@transaction.atomic
def _reclaim_lost(*, run: EvaluationRun, now: datetime.datetime) -> int:
    """Queue again (or fail, its attempts spent) a run whose worker's lease ran out; 0 when the worker
    renewed it meanwhile or the run moved on."""
    lost = {
        "attempt": run.attempts,
        "worker": run.worker,
        "started": run.started.isoformat() if run.started else None,
        "heartbeat": run.heartbeat.isoformat() if run.heartbeat else None,
        "reclaimed": now.isoformat(),
        "reason": (
            f"worker {run.worker or '(unknown)'} lost: no lease renewal for "
            f"{(now - run.heartbeat).total_seconds():.0f} s (lease {settings.DKB_WORKER_LEASE_S} s)"
            if run.heartbeat
            else "worker lost"
        ),
    }
    # The same attempt with the same last renewal, still running: a worker that renewed meanwhile keeps it.
    same = EvaluationRun.objects.filter(
        id=run.pk, status=EvaluationRun.Status.RUNNING, attempts=run.attempts, heartbeat=run.heartbeat
    )
    history = [*run.lost_attempts, lost]
    if run.attempts < settings.DKB_RUN_ATTEMPTS:
        if not same.update(
            status=EvaluationRun.Status.QUEUED, progress=None, heartbeat=None, lost_attempts=history
        ):
            return 0
        log.warning("run %s: %s; queued again for attempt %s", run.pk, lost["reason"], run.attempts + 1)
        transaction.on_commit(lambda: _send_to_worker(run))
        return 1
    error = (
        f"worker lost on each of its {run.attempts} attempt(s), the most a run is given "
        f"(DKB_RUN_ATTEMPTS={settings.DKB_RUN_ATTEMPTS}); last: {lost['reason']}. Not queued again: "
        "an admin can rerun it"
    )
    updated = same.update(
        status=EvaluationRun.Status.FAILED, finished=now, error=error, retryable=True, lost_attempts=history
    )
    if updated:
        log.error("run %s: %s", run.pk, error)
    return int(bool(updated))


@transaction.atomic
def submission_publish(*, submission: Submission, user: User) -> Submission:
    """Make the uploader's set public: its page, its ranked runs' results, the rankings and charts.

    Only the uploader decides this, staff included (they moderate by hiding). Publishing twice keeps the
    first date. A set with feedback runs only has nothing that may be shown (feedback is never public).
    """
    if submission.uploader_id != user.pk:
        raise PermissionDenied("only the set's uploader can publish it")
    if submission.is_published:
        return submission
    if not submission.runs.filter(kind=EvaluationRun.Kind.RANKED).exists():
        raise SubmissionError(
            "nothing_to_publish", "this set has feedback runs only, which are never public: upload it again"
        )
    submission.published_at = timezone.now()
    submission.save(update_fields=["published_at"])  # leaderboard.signals starts a new cache generation
    return submission


@transaction.atomic
def submission_hide(*, submission: Submission, hidden: bool = True, reason: str = "") -> Submission:
    """Take a set off every ranking and listing, with a reason its page shows (or show it again)."""
    submission.hidden = hidden
    submission.hidden_reason = reason[:500] if hidden else ""
    submission.save(update_fields=["hidden", "hidden_reason"])  # and a new cache generation (signals)
    return submission


@transaction.atomic
def api_token_rotate(*, user: User) -> Token:
    """Replace the user's API token with a new one; the old one stops working at once."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def api_token_revoke(*, user: User) -> bool:
    """Delete the user's API token, which stops working at once; False when they had none."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


def baseline_calibrate(
    *,
    hardware: Hardware,
    queries: list[int] | None = None,
    jobs: int = 4,
    echo: Callable[[str], object] | None = None,
) -> list[BaselineCalibration]:
    """Calibrate each query's baseline mode on this machine for the hardware's scale factor, into the
    data folder's record (what evaluations read) and into `BaselineCalibration` rows (what pages show).

    Runs on the hardware itself, on an otherwise idle machine: the timings are the hardware's.
    """
    # Imported here: the generator and the calibration's key import torch, which web processes avoid.
    from evaluator.harness import baselines
    from evaluator.tpch.generate import prepare

    numbers = queries or sorted(Query.objects.values_list("number", flat=True))
    data_dir = settings.DKB_DATA_DIR
    sf_folder = prepare(data_dir, hardware.scale_factor, progress=False)
    rows = baselines.calibrate(
        data_dir, sf_folder, hardware.scale_factor, hardware.device, numbers, jobs=jobs, echo=echo
    )
    return baseline_calibration_store(hardware=hardware, rows=rows, key=baselines.key(hardware.device))


@transaction.atomic
def baseline_calibration_store(
    *, hardware: Hardware, rows: list[dict[str, Any]], key: dict[str, str]
) -> list[BaselineCalibration]:
    """Keep calibration rows (`evaluator.baselines.calibrate`'s) for the hardware; a failed row, or one for
    a query not loaded, is skipped; a row for the same setup replaces the older one."""
    queries = {q.number: q for q in Query.objects.all()}
    stored = []
    for row in rows:
        number = row.get("query")
        query = queries.get(number) if isinstance(number, int) else None
        if "error" in row or query is None:
            log.warning("calibration of Q%s on %s not stored: %s", row.get("query"), hardware.slug, row)
            continue
        calibration, _ = BaselineCalibration.objects.update_or_create(
            hardware=hardware,
            query=query,
            scale_factor=hardware.scale_factor,
            harness_version=key["harness"],
            torch_version=key["torch"],
            defaults={
                "mode": row["mode"],
                "eager_ms": row["eager_ms"],
                "compiled_ms": row.get("compiled_ms"),
                "eager_stderr_pct": row.get("eager_stderr_pct"),
                "compiled_stderr_pct": row.get("compiled_stderr_pct"),
                "rounds": row.get("rounds") or 0,
                "compile_s": row.get("compile_s") or 0.0,
                "measured_at": timezone.now(),
            },
        )
        stored.append(calibration)
    return stored


def baseline_calibration_enqueue(*, hardware: Hardware) -> None:
    """Have the hardware's own worker calibrate its baselines (`baseline_calibrate`), after commit."""

    def send() -> None:
        from django_q.tasks import async_task

        async_task(
            CALIBRATION_TASK, hardware.pk, cluster=hardware.queue, task_name=f"calibrate-{hardware.slug}"
        )

    transaction.on_commit(send)
