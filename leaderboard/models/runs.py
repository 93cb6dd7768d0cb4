"""Evaluation runs of a set on a hardware, their per-query results, and which of them are ranked."""

from __future__ import annotations

import datetime
import enum
from typing import Any, NamedTuple

from django.conf import settings
from django.db import models
from django.db.models import Avg, Count, Exists, ExpressionWrapper, F, OuterRef, Q, Subquery, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from evaluator.report import UNCALIBRATED
from evaluator.report import Status as ReportStatus
from leaderboard.models.calibrations import BaselineCalibration
from leaderboard.models.catalogue import Hardware, Query
from leaderboard.models.submissions import Submission


class Interval(NamedTuple):
    """One side's median as a query's page shows it, with the rounds the host probe set aside."""

    name: str  # "baseline" or "kernel"
    median_ms: float
    stderr_pct: float  # relative standard error of the median
    n: int  # samples counted
    set_aside: int  # rounds timed while the host ran slow, not counted (evaluator/timing.py)
    aside_median_ms: float | None  # their median (harness 0.6.12 on): were they slower?


class EvaluationRunQuerySet(models.QuerySet["EvaluationRun"]):
    def listed(self) -> EvaluationRunQuerySet:
        """Runs public pages may show: ranked-kind runs of listed sets (a feedback run is never public)."""
        return self.filter(
            kind=EvaluationRun.Kind.RANKED, submission__published_at__isnull=False, submission__hidden=False
        )

    def visible_to(self, user: Any) -> EvaluationRunQuerySet:
        """Runs the user may open: ranked-kind runs of published sets, every run of their own sets, all for
        staff."""
        if user.is_staff:
            return self.all()
        public = Q(kind=EvaluationRun.Kind.RANKED, submission__published_at__isnull=False)
        if user.is_authenticated:
            return self.filter(public | Q(submission__uploader=user))
        return self.filter(public)

    def latest_ranked(self) -> EvaluationRunQuerySet:
        """The runs `ranked` lists, on any hardware and in any scope, neither scored nor ordered: what a page
        filters other rows by."""
        # The latest *stable* one: a rerun whose medians came out unsure does not unrank a measurement
        # of the same set on the same hardware that was sure.
        latest = _scored_runs(timing_ranked=True).order_by("-finished", "-id").values("id")[:1]
        return self.listed().filter(id=Subquery(latest))

    def latest_unranked(self) -> EvaluationRunQuerySet:
        """The runs `unranked` lists, on any hardware and in any scope, unordered."""
        latest = _scored_runs().order_by("-finished", "-id").values("id")[:1]
        return (
            self.listed()
            .filter(timing_ranked=False, id=Subquery(latest))
            .exclude(Exists(_scored_runs(timing_ranked=True)))
        )

    def without_report(self) -> EvaluationRunQuerySet:
        """The runs without their report (~100 KB of JSON each) and progress: the little that listings show
        of the report is read by the database instead (`baseline`, `timing_label`, `timing_reason`)."""
        return self.defer("report", "progress").annotate(
            report_present=ExpressionWrapper(Q(report__isnull=False), output_field=models.BooleanField()),
            report_baseline=KT("report__baseline"),
            report_timing_reason=KT("report__timing__reason"),
        )

    def ranked(self, *, hardware: Hardware | None = None, scope: str | None = None) -> EvaluationRunQuerySet:
        """The latest succeeded ranked run with stable timing per visible submission and hardware, best
        first; without their reports (`without_report`)."""
        runs = self.latest_ranked()
        if hardware is not None:
            runs = runs.filter(hardware=hardware)
        if scope is not None:
            runs = runs.filter(submission__scope=scope)
        # How close the passing kernels come to the bandwidth floor, and how many the harness flagged for
        # review (near the floor, or over 10x): what a visitor checks before trusting a speedup. Subqueries
        # per run rather than a join and GROUP BY over every result (a third of the time at 1,000 sets).
        results = QueryResult.objects.filter(run=OuterRef("pk")).order_by().values("run")
        passed = results.filter(status=QueryResult.Status.PASSED)
        flagged = results.filter(stats__has_key="flagged")
        runs = runs.without_report().annotate(
            mean_roofline=Subquery(
                passed.annotate(mean=Avg("roofline_fraction")).values("mean"),
                output_field=models.FloatField(),
            ),
            flagged_count=Coalesce(
                Subquery(flagged.annotate(n=Count("*")).values("n"), output_field=models.IntegerField()), 0
            ),
        )
        return runs.select_related("submission__language_model", "submission__uploader", "hardware").order_by(
            F("overall_speedup").desc(nulls_last=True), F("pass_rate").desc(nulls_last=True), "finished"
        )

    def unranked(
        self, *, hardware: Hardware | None = None, scope: str | None = None
    ) -> EvaluationRunQuerySet:
        """The latest succeeded ranked-kind run per visible submission and hardware whose timing cannot be
        ranked (a CPU's, or unstable), where no stable one exists; best pass rate first; without their
        reports (`without_report`)."""
        runs = self.latest_unranked()
        if hardware is not None:
            runs = runs.filter(hardware=hardware)
        if scope is not None:
            runs = runs.filter(submission__scope=scope)
        return (
            runs.without_report()
            .select_related("submission__language_model", "submission__uploader", "hardware")
            .order_by(F("pass_rate").desc(nulls_last=True), "-finished")
        )

    def kernels_only_speedups(self) -> dict[int, float]:
        """Per run, its passing kernels' speedup without the paper's fallback: the sum of their baseline
        times over the sum of their kernel times. Below 1 when they are slower; absent when none passed."""
        rows = (
            QueryResult.objects.filter(
                run__in=self.order_by().values("id"),
                status=QueryResult.Status.PASSED,
                kernel_ms__gt=0,
                baseline_ms__isnull=False,
            )
            .values("run_id")
            .annotate(baseline=Sum("baseline_ms"), kernel=Sum("kernel_ms"))
        )
        return {row["run_id"]: row["baseline"] / row["kernel"] for row in rows}

    def pending(self) -> EvaluationRunQuerySet:
        """Runs still waiting for or in evaluation."""
        return self.filter(status__in=[EvaluationRun.Status.QUEUED, EvaluationRun.Status.RUNNING])

    def ahead_of(self, run: EvaluationRun) -> int:
        """How many queued runs, of anyone, wait before this one on its hardware's queue (oldest first)."""
        earlier = Q(created__lt=run.created) | Q(created=run.created, id__lt=run.pk)
        return self.filter(
            earlier, status=EvaluationRun.Status.QUEUED, hardware__queue=run.hardware.queue
        ).count()

    def stale(self, *, started_before: datetime.datetime) -> EvaluationRunQuerySet:
        """Runs still marked running that a worker started before `started_before`: past any evaluation's
        limit, whether or not their worker still renews its lease."""
        return self.filter(status=EvaluationRun.Status.RUNNING, started__lt=started_before)

    def lease_expired(self, *, renewed_before: datetime.datetime) -> EvaluationRunQuerySet:
        """Running runs whose worker last renewed its lease before `renewed_before`: that worker is gone."""
        return self.filter(status=EvaluationRun.Status.RUNNING, heartbeat__lt=renewed_before)

    def newest_first(self) -> EvaluationRunQuerySet:
        """All runs, the latest first, with their hardware."""
        return self.select_related("hardware").order_by("-created", "-id")


def _scored_runs(**filters: Any) -> models.QuerySet[EvaluationRun]:
    """Succeeded ranked-kind runs of the outer query's submission on its hardware."""
    return EvaluationRun.objects.filter(
        submission=OuterRef("submission"),
        hardware=OuterRef("hardware"),
        status=EvaluationRun.Status.SUCCEEDED,
        kind=EvaluationRun.Kind.RANKED,
        **filters,
    )


def report_timing_ranked(report: dict[str, Any], *, hardware: Hardware) -> bool:
    """Whether a report's speed scores may be ranked: what its "timing" says.

    Reports before schema 3 carry no "timing"; they count as ranked where the hardware is not a CPU
    (a CPU's timings never were: Triton's interpreter), since they cannot be checked for stability now.
    Migration 0005 applied the same rule to the runs stored then.
    """
    timing = report.get("timing")
    if isinstance(timing, dict) and "ranked" in timing:
        return bool(timing["ranked"])
    return not hardware.is_cpu


class EvaluationRun(models.Model):
    """One evaluation of a submission on one hardware. Reruns add rows; history is never overwritten."""

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        SUCCEEDED = "succeeded", "succeeded"
        FAILED = "failed", "failed"

        # nonmember: a plain tuple in an enum body would itself become a member.
        FINAL = enum.nonmember(("succeeded", "failed"))

    class Kind(models.TextChoices):
        RANKED = "ranked", "ranked"
        FEEDBACK = "feedback", "feedback only"

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="runs")
    hardware = models.ForeignKey(Hardware, on_delete=models.PROTECT, related_name="runs")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.RANKED)
    rerun_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="reruns"
    )
    created = models.DateTimeField(default=timezone.now)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # The lease of the worker evaluating the run: who ("host:pid") and when it last said it still works
    # on it (`leaderboard.leases`). Attempts its worker was lost in, oldest first, as dicts: "attempt",
    # "worker", "started", "heartbeat", "reclaimed", "reason" (`evaluation_reclaim_stale`).
    worker = models.CharField(max_length=200, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True)
    lost_attempts = models.JSONField(default=list, blank=True)
    harness_version = models.CharField(max_length=40, blank=True)
    sandbox_backend = models.CharField(max_length=20, blank=True)
    report = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    retryable = models.BooleanField(default=False)
    overall_speedup = models.FloatField(null=True, blank=True)
    geomean_speedup = models.FloatField(null=True, blank=True)
    pass_rate = models.FloatField(null=True, blank=True)
    fast_1 = models.FloatField(null=True, blank=True)
    fast_2 = models.FloatField(null=True, blank=True)
    # Copied from the report (`report_timing_ranked`) so rankings filter on a column.
    timing_ranked = models.BooleanField(
        default=False, help_text="its speed scores may be ranked: a GPU run whose medians are all sure"
    )
    # The latest `evaluator.evaluation.Progress` as a dict, while the run is evaluated.
    progress = models.JSONField(null=True, blank=True)

    objects = EvaluationRunQuerySet.as_manager()

    # Not a column: set by the submission page on its queued runs (`ahead_of`).
    queued_ahead: int

    class Meta:
        ordering = ["-created"]
        indexes = [
            # Covers the rankings (`latest_ranked`, `latest_unranked`, `ranked`'s order): the latest run per
            # set and hardware, and the columns they sort by, are read from the index without touching the
            # rows, which on SQLite means walking each ~100 KB report's overflow pages to reach the columns
            # stored after it (a cold ranking at 1,000 sets: 26 ms of ids, 4 ms with it).
            models.Index(
                fields=[
                    "submission",
                    "hardware",
                    "status",
                    "kind",
                    "timing_ranked",
                    "finished",
                    "overall_speedup",
                    "pass_rate",
                ],
                name="run_ranking_idx",
            )
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "succeeded", "failed"]), name="run_status_known"
            ),
            models.CheckConstraint(
                condition=Q(pass_rate__isnull=True) | Q(pass_rate__gte=0, pass_rate__lte=1),
                name="run_pass_rate_is_a_fraction",
            ),
            # A succeeded run always carries the report it was scored from.
            models.CheckConstraint(
                condition=~Q(status="succeeded") | Q(report__isnull=False, finished__isnull=False),
                name="run_succeeded_has_report",
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of submission #{self.submission_id} on {self.hardware_id} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("submission_detail", args=[self.submission_id]) + f"?run={self.pk}"

    @property
    def is_final(self) -> bool:
        return self.status in self.Status.FINAL

    def _report_value(self, annotation: str, key: str, *path: str) -> Any:
        """The report's value at key (then path), or "": from the row's annotation where the queryset left
        the report out (`without_report`), without loading it."""
        if annotation in self.__dict__:
            return self.__dict__[annotation] or ""
        value: Any = self.report or {}
        for part in (key, *path):
            value = value.get(part) if isinstance(value, dict) else None
        return value or ""

    def _report_stored(self) -> bool:
        if "report_present" in self.__dict__:
            return bool(self.__dict__["report_present"])
        return bool(self.report)

    @property
    def isolated(self) -> bool | None:
        """Whether the kernels ran in an isolating sandbox; None before a report exists."""
        if not self.report:
            return None
        return bool((self.report.get("sandbox") or {}).get("isolated"))

    @property
    def baseline(self) -> str:
        """What the kernels were timed against: "recorded" (each query's calibrated mode, schema 3), or
        "compiled", "eager" or "best" in older reports."""
        return str(self._report_value("report_baseline", "baseline"))

    @property
    def baseline_summary(self) -> str:
        """What this run's kernels were timed against, in words, as its report says ("" before one)."""
        if self.baseline == "recorded":
            modes: dict[tuple[bool, str], list[str]] = {}  # (not calibrated, mode): query labels
            for result in self.results.all():
                if result.baseline_mode:
                    key = (not result.baseline_calibrated, result.baseline_mode)
                    modes.setdefault(key, []).append(result.query.label)
            recorded = "each query's TorchPlan in the mode this hardware's calibration recorded"
            default = "the default mode (compiled on a GPU, eager on a CPU)"
            uncalibrated_flags = {uncalibrated for uncalibrated, _ in modes}
            mixed = len(uncalibrated_flags) == 2
            if True not in uncalibrated_flags:
                said = recorded
            elif not mixed:
                said = f"each query's TorchPlan in {default}: this hardware's calibration recorded none"
                said += " of them"
            else:
                said = f"{recorded}, else in {default}"
            per_mode = "; ".join(
                f"{mode}{' (not calibrated)' if mixed and uncalibrated else ''} for {', '.join(labels)}"
                for (uncalibrated, mode), labels in sorted(modes.items())
            )
            return said + (f": {per_mode}" if per_mode else "")
        return {
            "compiled": "the compiled TorchPlan (torch.compile) for every query",
            "eager": "the eager TorchPlan for every query (torch.compile was not used)",
            "best": "the faster of the eager and the compiled TorchPlan, per query, timed beside the kernel",
        }.get(self.baseline, "")

    @property
    def timing_label(self) -> str:
        """Why this succeeded run is not ranked, in two words ("correctness only", "unstable timing",
        "uncalibrated baselines"); "" when it is ranked or has no report."""
        if self.timing_ranked or not self._report_stored():
            return ""
        reason = self.timing_reason
        if reason.startswith("unstable"):
            return "unstable timing"
        if reason.startswith(UNCALIBRATED):
            return "uncalibrated baselines"
        return (
            "correctness only" if self.hardware.is_cpu or reason.startswith("correctness") else "not ranked"
        )

    @property
    def timing_reason(self) -> str:
        """The report's sentence on why its timing is not ranked ("" when it is, or it gave none)."""
        return str(self._report_value("report_timing_reason", "timing", "reason"))

    @property
    def timing_detail(self) -> str:
        """`timing_reason` as said beside `timing_label`: without the label it begins with, where it does
        ("correctness only: timed on a CPU" beside "correctness only" is "timed on a CPU"; "unstable timing:
        Q06" is "unsure medians in Q06")."""
        label, reason = self.timing_label, self.timing_reason
        detail = reason.removeprefix(f"{label}: ")
        if label == "unstable timing" and detail != reason:
            return f"unsure medians in {detail}"
        return detail

    @property
    def progress_text(self) -> str:
        """Where a running evaluation is, e.g. "query 3 of 5: Q06 started"; "" before the first event."""
        p = self.progress
        if not isinstance(p, dict) or not p.get("total"):
            return ""
        # "started": the query ending next is the (done + 1)th; "ended": it was the done-th.
        position = p.get("done", 0) + (1 if p.get("phase") == "started" else 0)
        text = f"query {position} of {p['total']}: Q{p.get('query', 0):02d} {p.get('phase', '')}"
        if p.get("status"):
            text += f" ({p['status'].replace('_', ' ')})"
        return text

    @property
    def duration_s(self) -> float | None:
        if self.started and self.finished:
            return (self.finished - self.started).total_seconds()
        return None

    @property
    def max_attempts(self) -> int:
        """How many times a run is evaluated at most when its worker is lost (DKB_RUN_ATTEMPTS)."""
        return int(settings.DKB_RUN_ATTEMPTS)

    def mark_failed(self, *, error: str, retryable: bool, attempt: int | None = None) -> bool:
        """Fail this run unless it already finished (or, given `attempt`, unless that attempt no longer runs:
        its worker lost the run, which is queued again or evaluated by another); False when it had."""
        runs = EvaluationRun.objects.filter(id=self.pk)
        if attempt is not None:
            runs = runs.filter(attempts=attempt, status=self.Status.RUNNING)
        updated = runs.exclude(status__in=self.Status.FINAL).update(
            status=self.Status.FAILED, finished=timezone.now(), error=error, retryable=retryable
        )
        self.refresh_from_db()
        return bool(updated)


class QueryResultQuerySet(models.QuerySet["QueryResult"]):
    def cells(self, *, run_ids: list[int]) -> dict[tuple[int, int], tuple[str, float | None]]:
        """(status, speedup) per (run id, query number) of these runs: a whole matrix in one query."""
        rows = self.filter(run_id__in=run_ids).values_list("run_id", "query__number", "status", "speedup")
        return {(run_id, number): (status, speedup) for run_id, number, status, speedup in rows}

    def bandwidth_floors(self, *, query: Query) -> list[tuple[str, float, float]]:
        """(hardware name, scale factor, floor ms) per hardware from the newest published result of the
        query that reports one: its columns read once at the hardware's peak bandwidth."""
        rows = (
            self.filter(query=query, run__in=EvaluationRun.objects.listed().order_by().values("id"))
            .filter(stats__has_key="roofline_floor_ms")
            .order_by("run__hardware__name", "-run__finished", "-id")
            .values_list(
                "run__hardware_id",
                "run__hardware__name",
                "run__hardware__scale_factor",
                "stats__roofline_floor_ms",
            )
        )
        floors: dict[int, tuple[str, float, float]] = {}
        for hardware_id, name, scale_factor, floor_ms in rows:
            if isinstance(floor_ms, int | float):
                floors.setdefault(hardware_id, (name, scale_factor, float(floor_ms)))
        return list(floors.values())

    def reported_calibrations(self, *, query: Query) -> list[BaselineCalibration]:
        """Per hardware and scale factor, the calibration the newest published result of the query records
        in its report (what its baseline was timed by), as unsaved rows with `reported_by`, that result's
        run. Candidates are ordered by columns alone; each hardware's newest are read a few at a time."""
        listed = EvaluationRun.objects.listed().order_by().values("id")
        candidates = (
            self.filter(query=query, run__in=listed)
            .order_by("run__hardware__name", "run__hardware_id", "-run__finished", "-id")
            .values_list("id", "run__hardware_id", "run__hardware__scale_factor")
        )
        per_setup: dict[tuple[int, float], list[int]] = {}
        for pk, hardware_id, scale_factor in candidates:
            per_setup.setdefault((hardware_id, scale_factor), []).append(pk)
        reported = []
        for (_, scale_factor), ids in per_setup.items():
            for start in range(0, len(ids), REPORTED_BATCH):
                chunk = ids[start : start + REPORTED_BATCH]
                found = {r.pk: r for r in self.filter(id__in=chunk).select_related("run__hardware", "query")}
                result = next((found[pk] for pk in chunk if found[pk].reported_calibration), None)
                if result is not None:
                    reported.append(result.reported_calibration_row(scale_factor=scale_factor))
                    break
        return reported


# How many of a hardware's newest results `reported_calibrations` reads at a time (nearly always the first).
REPORTED_BATCH = 8


class QueryResult(models.Model):
    """The outcome of one query's kernel in one run, copied out of the report for tables and rankings."""

    class Status(models.TextChoices):
        PASSED = ReportStatus.PASSED, "passed"
        WRONG_ANSWER = ReportStatus.WRONG_ANSWER, "wrong answer"
        BUILD_ERROR = ReportStatus.BUILD_ERROR, "build error"
        RUNTIME_ERROR = ReportStatus.RUNTIME_ERROR, "runtime error"
        TIMEOUT = ReportStatus.TIMEOUT, "timeout"
        OUT_OF_MEMORY = ReportStatus.OUT_OF_MEMORY, "out of memory"
        CRASHED = ReportStatus.CRASHED, "crashed"
        NEEDS_GPU = ReportStatus.NEEDS_GPU, "needs a GPU"
        MISSING = ReportStatus.MISSING, "no kernel"
        REJECTED = ReportStatus.REJECTED, "rejected (timing cannot stand)"
        REFUSED = ReportStatus.REFUSED, "refused by admission"

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="results")
    query = models.ForeignKey(Query, on_delete=models.PROTECT, related_name="results")
    status = models.CharField(max_length=16, choices=Status.choices)
    reason = models.TextField(blank=True)
    baseline_ms = models.FloatField(null=True, blank=True)
    kernel_ms = models.FloatField(null=True, blank=True)
    speedup = models.FloatField(null=True, blank=True)
    roofline_fraction = models.FloatField(null=True, blank=True)
    kernel_time_share = models.FloatField(null=True, blank=True)
    launches = models.PositiveIntegerField(null=True, blank=True)
    trials = models.PositiveIntegerField(default=0)
    stats = models.JSONField(default=dict, blank=True)

    objects = QueryResultQuerySet.as_manager()

    class Meta:
        ordering = ["query__number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "query"], name="result_one_per_query_and_run"),
            models.CheckConstraint(condition=Q(status__in=ReportStatus.ALL), name="result_status_known"),
        ]

    def __str__(self) -> str:
        return f"{self.query.label} in run {self.run_id}: {self.status}"

    @property
    def passed(self) -> bool:
        return self.status == self.Status.PASSED

    @property
    def has_kernel(self) -> bool:
        """Whether the set has a kernel (and so a kernel page) for this query: a "missing" result is the
        report's word for a query it has none for."""
        return self.status != self.Status.MISSING

    @property
    def shown_reason(self) -> str:
        """The report's reason as a run's table shows it. A query without a kernel is said to be "not timed"
        by the harness, yet carries a baseline time where the hardware's calibration measured one: the
        table says which was timed."""
        if self.status != self.Status.MISSING:
            return self.reason
        said = "no kernel in the set: the baseline stands in and scores 1.0"
        if self.baseline_ms is None:
            return f"{said}; nothing was timed"
        if self.baseline_calibrated:
            return f"{said}; its time is what this hardware's calibration measured, no kernel was timed"
        return f"{said}; no kernel was timed"

    @property
    def baseline_mode(self) -> str:
        """The TorchPlan mode this query's baseline was timed in ("eager", "compiled"; "" if not said)."""
        return str(self.stats.get("baseline_mode") or "")

    @property
    def baseline_calibrated(self) -> bool:
        """Whether the hardware's calibration chose this query's baseline mode (schema 3's `recorded`)."""
        return bool(self.stats.get("baseline_calibration"))

    @property
    def reported_calibration(self) -> dict[str, Any]:
        """The hardware's calibration of this query as the report records it (mode, eager and compiled
        medians), or {} when the baseline was not timed in a calibrated mode."""
        record = self.stats.get("baseline_calibration")
        valid = isinstance(record, dict) and record.get("mode") and record.get("eager_ms") is not None
        return record if valid else {}

    def reported_calibration_row(self, *, scale_factor: float) -> BaselineCalibration:
        """`reported_calibration` as an unsaved calibration row, its `reported_by` this result's run."""
        record = self.reported_calibration
        row = BaselineCalibration(
            hardware=self.run.hardware,
            query=self.query,
            scale_factor=scale_factor,
            harness_version=self.run.harness_version,
            mode=record["mode"],
            eager_ms=record["eager_ms"],
            compiled_ms=record.get("compiled_ms"),
            eager_stderr_pct=record.get("eager_stderr_pct"),
            compiled_stderr_pct=record.get("compiled_stderr_pct"),
            rounds=record.get("rounds") or 0,
            compile_s=record.get("compile_s") or 0.0,
        )
        row.reported_by = self.run
        return row

    @property
    def flagged(self) -> str:
        """The harness's note when this kernel is near the bandwidth floor or over 10x: "" when neither."""
        return str(self.stats.get("flagged") or "")

    @property
    def unstable(self) -> str:
        """The report's sentence on why this query's timing is too unsure to rank; "" when it is sure."""
        return str(self.stats.get("unstable") or "")

    @property
    def intervals(self) -> list[Interval]:
        """The baseline's and the kernel's medians, each with its spread and the rounds set aside."""
        rows = []
        for name in ("baseline", "kernel"):
            stats = self.stats.get(name)
            if isinstance(stats, dict) and stats.get("median_ms") is not None:
                rows.append(
                    Interval(
                        name,
                        stats["median_ms"],
                        stats.get("stderr_pct") or 0.0,
                        stats.get("n") or 0,
                        stats.get("set_aside") or 0,
                        stats.get("aside_median_ms"),
                    )
                )
        return rows
