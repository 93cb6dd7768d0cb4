"""Evaluation runs of a set on a hardware, and which of them are ranked (their per-query results:
results.py)."""

from __future__ import annotations

import datetime
import enum
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Avg, Count, Exists, ExpressionWrapper, F, OuterRef, Q, Subquery, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from evaluator.report import UNCALIBRATED, disturbed_timing
from leaderboard.models.catalogue import Hardware
from leaderboard.models.submissions import Submission


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
        from leaderboard.models.results import QueryResult  # results imports this module

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
        from leaderboard.models.results import QueryResult  # results imports this module

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


def report_timing(report: dict[str, Any], *, hardware: Hardware) -> tuple[bool, str]:
    """Whether a report's speed scores may be ranked, and why a report whose "timing" ranks them is not
    ranked here ("" where nothing overrides it).

    Ranked is what the report's "timing" says, unless a passed query's baseline ran over 1.5x its
    calibration's median (the machine was disturbed): a rule of harness 0.6.9 that the reports of earlier
    harnesses were ranked without (migration 0012 applied it to the runs stored then). Reports before
    schema 3 carry no "timing"; they count as ranked where the hardware is not a CPU (a CPU's timings
    never were: Triton's interpreter), since they cannot be checked for stability now (migration 0005).
    """
    timing = report.get("timing")
    if isinstance(timing, dict) and "ranked" in timing:
        written = bool(timing["ranked"])
    else:
        written = not hardware.is_cpu
    override = disturbed_timing(report) if written else ""
    return written and not override, override


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
    # Copied from the report (`report_timing`) so rankings filter on a column.
    timing_ranked = models.BooleanField(
        default=False, help_text="its speed scores may be ranked: a GPU run whose medians are all sure"
    )
    timing_override = models.TextField(
        blank=True, help_text="why a run its report ranks is not ranked here (`report_timing`)"
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
            per_mode = "; ".join(
                f"{mode}{' (not calibrated)' if mixed and uncalibrated else ''} for {', '.join(labels)}"
                for (uncalibrated, mode), labels in sorted(modes.items())
            )
            if True not in uncalibrated_flags:
                said = recorded
            elif not mixed:
                # The modes in brackets: after "none of them" a second colon read as a garbled sentence.
                return (
                    f"each query's TorchPlan in its default mode ({per_mode}), since this hardware's "
                    "calibration recorded no mode for them"
                )
            else:
                said = f"{recorded}, else in {default}"
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
        """Why its timing is not ranked: the site's reason where its report ranks it (`timing_override`),
        else the report's sentence ("" when it is ranked, or the report gave none)."""
        return self.timing_override or str(self._report_value("report_timing_reason", "timing", "reason"))

    @property
    def timing_detail(self) -> str:
        """`timing_reason` as said beside `timing_label`: without the label it begins with, where it does
        ("correctness only: timed on a CPU" beside "correctness only" is "timed on a CPU"; "unstable timing:
        Q6" is "unsure medians in Q6")."""
        label, reason = self.timing_label, self.timing_reason
        detail = reason.removeprefix(f"{label}: ")
        if label == "unstable timing" and detail != reason:
            return f"unsure medians in {detail}"
        return detail

    @property
    def progress_text(self) -> str:
        """Where a running evaluation is, e.g. "query 3 of 5: Q6 started"; "" before the first event."""
        p = self.progress
        if not isinstance(p, dict) or not p.get("total"):
            return ""
        # "started": the query ending next is the (done + 1)th; "ended": it was the done-th.
        position = p.get("done", 0) + (1 if p.get("phase") == "started" else 0)
        text = f"query {position} of {p['total']}: Q{p.get('query', 0)} {p.get('phase', '')}"
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
