"""Per-query results of an evaluation run, copied out of its report for tables, rankings and pages."""

from __future__ import annotations

from typing import Any, NamedTuple

from django.db import models
from django.db.models import Q

from evaluator.report import Status as ReportStatus
from leaderboard.models.calibrations import BaselineCalibration
from leaderboard.models.catalogue import Query
from leaderboard.models.runs import EvaluationRun


class Interval(NamedTuple):
    """One side's median as a query's page shows it, with the rounds the host probe set aside."""

    name: str  # "baseline" or "kernel"
    median_ms: float
    stderr_pct: float  # relative standard error of the median
    n: int  # samples counted
    set_aside: int  # rounds timed while the host ran slow, not counted (evaluator/timing.py)
    aside_median_ms: float | None  # their median (harness 0.6.12 on): were they slower?


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
