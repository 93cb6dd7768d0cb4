"""What the leaderboard stores: LLMs, queries, hardware, kernel sets, their evaluation runs and results.

Reads live here as QuerySet methods; writes are services (leaderboard/services.py).
"""

from __future__ import annotations

import datetime
import enum
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Exists, F, OuterRef, Q, Subquery, Sum
from django.urls import reverse
from django.utils import timezone

from evaluator.kernelset import KernelSet, Manifest
from evaluator.report import Status as ReportStatus


class LanguageModel(models.Model):
    """An LLM that wrote kernels, named exactly as the manifest names it (one row per distinct name)."""

    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["name"], name="language_model_name_unique")]

    def __str__(self) -> str:
        return self.name


class QueryQuerySet(models.QuerySet["Query"]):
    def by_number(self) -> QueryQuerySet:
        """Queries in benchmark order (Q1 first)."""
        return self.order_by("number")


class Query(models.Model):
    """A benchmark query, loaded from `evaluator.queries` by `manage.py dkb_setup`."""

    number = models.PositiveSmallIntegerField(unique=True)
    name = models.CharField(max_length=100)
    sql = models.TextField()
    torchplan_source = models.TextField()

    objects = QueryQuerySet.as_manager()

    class Meta:
        ordering = ["number"]
        verbose_name_plural = "queries"
        constraints = [
            models.CheckConstraint(condition=Q(number__gte=1, number__lte=22), name="query_number_in_tpch"),
        ]

    def __str__(self) -> str:
        return f"Q{self.number} {self.name}"

    def get_absolute_url(self) -> str:
        return reverse("query_detail", args=[self.number])

    @property
    def slug(self) -> str:
        return f"q{self.number:02d}"

    @property
    def label(self) -> str:
        return f"Q{self.number}"


class HardwareQuerySet(models.QuerySet["Hardware"]):
    def active(self) -> HardwareQuerySet:
        """Hardware that new submissions are evaluated on."""
        return self.filter(active=True)


class Hardware(models.Model):
    """Where runs are evaluated: one django-q2 queue (cluster) per machine kind."""

    class Device(models.TextChoices):
        CPU = "cpu", "CPU (Triton interpreter)"
        CUDA = "cuda", "CUDA GPU"

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    device = models.CharField(max_length=8, choices=Device.choices)
    peak_bandwidth_gbs = models.FloatField(
        null=True, blank=True, help_text="datasheet peak, for the roofline"
    )
    scale_factor = models.FloatField(default=0.01)
    active = models.BooleanField(default=True)
    queue = models.CharField(max_length=100, help_text="the django-q2 cluster name its worker listens on")

    objects = HardwareQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "hardware"
        constraints = [
            models.CheckConstraint(condition=Q(device__in=["cpu", "cuda"]), name="hardware_device_known"),
            models.CheckConstraint(condition=Q(scale_factor__gt=0), name="hardware_scale_factor_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.name} (SF{self.scale_factor:g})"

    @property
    def is_cpu(self) -> bool:
        return self.device == self.Device.CPU


class SubmissionQuerySet(models.QuerySet["Submission"]):
    def listed(self) -> SubmissionQuerySet:
        """Sets every listing, ranking and chart may show: published by their uploader, not hidden."""
        return self.filter(published_at__isnull=False, hidden=False)

    def visible_to(self, user: Any) -> SubmissionQuerySet:
        """Sets whose page the user may open: published ones (a hidden one says why), their own, all for
        staff."""
        if user.is_staff:
            return self.all()
        if user.is_authenticated:
            return self.filter(Q(published_at__isnull=False) | Q(uploader=user))
        return self.filter(published_at__isnull=False)

    def uploads_of(self, *, user: Any, kind: str) -> SubmissionQuerySet:
        """The user's uploads of a kind: "feedback" (with a feedback run) or "ranked" (all others)."""
        feedback = Exists(
            EvaluationRun.objects.filter(submission=OuterRef("pk"), kind=EvaluationRun.Kind.FEEDBACK)
        )
        mine = self.filter(uploader_id=user.pk)
        return mine.filter(feedback) if kind == EvaluationRun.Kind.FEEDBACK else mine.exclude(feedback)

    def recent(self) -> SubmissionQuerySet:
        """Newest first, with what a list row shows."""
        return self.select_related("language_model", "uploader").order_by("-created", "-id")


class Submission(models.Model):
    """One uploaded kernel set; its manifest fields are stored as columns."""

    class Language(models.TextChoices):
        TRITON = "triton", "Triton"
        CUDA = "cuda", "CUDA"

    class Scope(models.TextChoices):
        FULL = "full", "full query"
        CORE = "core", "core snippet"

    class Context(models.TextChoices):
        WORKLOAD = "workload", "workload"
        HARDWARE = "hardware", "hardware"
        BOTH = "both", "workload + hardware"
        NONE = "none", "none"

    uploader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="submissions"
    )
    language_model = models.ForeignKey(LanguageModel, on_delete=models.PROTECT, related_name="submissions")
    language = models.CharField(max_length=8, choices=Language.choices)
    scope = models.CharField(max_length=8, choices=Scope.choices)
    context = models.CharField(max_length=10, choices=Context.choices, default=Context.NONE)
    agent = models.CharField(max_length=200, blank=True)
    repair_rounds = models.PositiveIntegerField(default=0)
    notes = models.TextField(blank=True)
    archive_sha256 = models.CharField(max_length=64, blank=True)
    created = models.DateTimeField(default=timezone.now)
    # A set is private to its uploader (and staff) until they publish it: a researcher iterating on a set
    # should not have every draft, source included, on the public pages.
    published_at = models.DateTimeField(
        null=True, blank=True, help_text="when its uploader made it public; private until then"
    )
    hidden = models.BooleanField(
        default=False,
        help_text="taken off every ranking and listing (e.g. caught cheating); its page says why",
    )
    hidden_reason = models.CharField(
        max_length=500, blank=True, help_text="shown on the set's page while it is hidden"
    )

    objects = SubmissionQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["hidden", "-created"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(language__in=["triton", "cuda"]), name="submission_language_known"
            ),
            models.CheckConstraint(condition=Q(scope__in=["full", "core"]), name="submission_scope_known"),
            models.CheckConstraint(
                condition=Q(hidden=True) | Q(hidden_reason=""),
                name="submission_hidden_reason_only_when_hidden",
                violation_error_message="A reason is kept only while the set is hidden: clear it to show it.",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.language_model} {self.get_language_display()}-{self.scope}"

    def get_absolute_url(self) -> str:
        return reverse("submission_detail", args=[self.pk])

    @property
    def is_published(self) -> bool:
        return self.published_at is not None

    @property
    def is_evaluated(self) -> bool:
        """Whether a worker has taken up any of its runs: from then on its kernels and manifest are what was
        measured, and stay as they are."""
        return self.runs.exclude(status=EvaluationRun.Status.QUEUED).exists()

    @property
    def configuration(self) -> str:
        """The paper's name for a configuration, e.g. "Triton-full"."""
        return f"{self.get_language_display()}-{self.scope}"

    def manifest(self) -> Manifest:
        return Manifest(
            model=self.language_model.name,
            language=self.language,
            scope=self.scope,
            context=self.context,
            agent=self.agent,
            repair_rounds=self.repair_rounds,
            notes=self.notes,
        )

    def kernel_set(self) -> KernelSet:
        """The set as the evaluator reads it, rebuilt from the stored rows."""
        kernels = {k.query.number: k.source for k in self.kernels.select_related("query")}
        return KernelSet(manifest=self.manifest(), kernels=kernels)


class Kernel(models.Model):
    """One qNN.py file of a submission."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="kernels")
    query = models.ForeignKey(Query, on_delete=models.PROTECT, related_name="kernels")
    source = models.TextField()

    class Meta:
        ordering = ["query__number"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "query"], name="kernel_one_per_query"),
        ]

    def __str__(self) -> str:
        return f"{self.query.slug}.py of submission #{self.submission_id}"

    @property
    def filename(self) -> str:
        return f"{self.query.slug}.py"


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

    def ranked(self, *, hardware: Hardware | None = None) -> EvaluationRunQuerySet:
        """The latest succeeded ranked run with stable timing per visible submission and hardware, best
        first."""
        # The latest *stable* one: a rerun whose medians came out unsure does not unrank a measurement
        # of the same set on the same hardware that was sure.
        latest = _scored_runs(timing_ranked=True).order_by("-finished", "-id").values("id")[:1]
        runs = self.listed().filter(id=Subquery(latest))
        if hardware is not None:
            runs = runs.filter(hardware=hardware)
        return runs.select_related("submission__language_model", "submission__uploader", "hardware").order_by(
            F("overall_speedup").desc(nulls_last=True), F("pass_rate").desc(nulls_last=True), "finished"
        )

    def unranked(self, *, hardware: Hardware | None = None) -> EvaluationRunQuerySet:
        """The latest succeeded ranked-kind run per visible submission and hardware whose timing cannot be
        ranked (a CPU's, or unstable), where no stable one exists; best pass rate first."""
        latest = _scored_runs().order_by("-finished", "-id").values("id")[:1]
        runs = (
            self.listed()
            .filter(timing_ranked=False, id=Subquery(latest))
            .exclude(Exists(_scored_runs(timing_ranked=True)))
        )
        if hardware is not None:
            runs = runs.filter(hardware=hardware)
        return runs.select_related("submission__language_model", "submission__uploader", "hardware").order_by(
            F("pass_rate").desc(nulls_last=True), "-finished"
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

    def stale(self, *, started_before: datetime.datetime) -> EvaluationRunQuerySet:
        """Runs still marked running that a worker started before `started_before`: their worker is gone."""
        return self.filter(status=EvaluationRun.Status.RUNNING, started__lt=started_before)

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

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["submission", "hardware", "status"])]
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
        return str((self.report or {}).get("baseline", ""))

    @property
    def baseline_summary(self) -> str:
        """What this run's kernels were timed against, in words, as its report says ("" before one)."""
        if self.baseline == "recorded":
            modes: dict[str, list[str]] = {}
            for result in self.results.all():
                if result.baseline_mode:
                    modes.setdefault(result.baseline_mode, []).append(result.query.label)
            per_mode = "; ".join(f"{mode} for {', '.join(labels)}" for mode, labels in sorted(modes.items()))
            return "each query's TorchPlan in the mode this hardware's calibration recorded" + (
                f": {per_mode}" if per_mode else ""
            )
        return {
            "compiled": "the compiled TorchPlan (torch.compile) for every query",
            "eager": "the eager TorchPlan for every query (torch.compile was not used)",
            "best": "the faster of the eager and the compiled TorchPlan, per query, timed beside the kernel",
        }.get(self.baseline, "")

    @property
    def timing_label(self) -> str:
        """Why this succeeded run is not ranked, in two words ("correctness only", "unstable timing");
        "" when it is ranked or has no report."""
        if not self.report or self.timing_ranked:
            return ""
        reason = self.timing_reason
        if reason.startswith("unstable"):
            return "unstable timing"
        return (
            "correctness only" if self.hardware.is_cpu or reason.startswith("correctness") else "not ranked"
        )

    @property
    def timing_reason(self) -> str:
        """The report's sentence on why its timing is not ranked ("" when it is, or it gave none)."""
        timing = (self.report or {}).get("timing")
        return str(timing.get("reason", "")) if isinstance(timing, dict) else ""

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

    def mark_failed(self, *, error: str, retryable: bool) -> bool:
        """Fail this run unless it already finished; False when it had."""
        updated = (
            EvaluationRun.objects.filter(id=self.pk)
            .exclude(status__in=self.Status.FINAL)
            .update(status=self.Status.FAILED, finished=timezone.now(), error=error, retryable=retryable)
        )
        self.refresh_from_db()
        return bool(updated)


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
    def baseline_mode(self) -> str:
        """The TorchPlan mode this query's baseline was timed in ("eager", "compiled"; "" if not said)."""
        return str(self.stats.get("baseline_mode") or "")

    @property
    def unstable(self) -> str:
        """The report's sentence on why this query's timing is too unsure to rank; "" when it is sure."""
        return str(self.stats.get("unstable") or "")

    @property
    def intervals(self) -> list[tuple[str, float, float, int]]:
        """(name, median ms, relative standard error %, samples) for the baseline and the kernel."""
        rows = []
        for name in ("baseline", "kernel"):
            stats = self.stats.get(name)
            if isinstance(stats, dict) and stats.get("median_ms") is not None:
                rows.append((name, stats["median_ms"], stats.get("stderr_pct") or 0.0, stats.get("n") or 0))
        return rows


class BaselineCalibrationQuerySet(models.QuerySet["BaselineCalibration"]):
    def current(self, *, query: Query) -> list[BaselineCalibration]:
        """This harness version's newest calibration of the query per hardware and scale factor."""
        from evaluator import HARNESS_VERSION

        rows = self.filter(query=query, harness_version=HARNESS_VERSION).select_related("hardware")
        newest: dict[tuple[int, float], BaselineCalibration] = {}
        for row in rows.order_by("hardware__name", "-measured_at", "-id"):
            newest.setdefault((row.hardware_id, row.scale_factor), row)
        return list(newest.values())


class BaselineCalibration(models.Model):
    """Which TorchPlan mode a query's kernels are timed against on a hardware (`evaluator.harness.baselines`).

    A copy, for the site, of the record `manage.py dkb_baselines` leaves in the data folder: that file is
    what evaluations read.
    """

    class Mode(models.TextChoices):
        EAGER = "eager", "eager"
        COMPILED = "compiled", "compiled (torch.compile)"

    hardware = models.ForeignKey(Hardware, on_delete=models.CASCADE, related_name="calibrations")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="calibrations")
    scale_factor = models.FloatField()
    harness_version = models.CharField(max_length=40)
    torch_version = models.CharField(max_length=40)
    mode = models.CharField(max_length=10, choices=Mode.choices)
    eager_ms = models.FloatField()
    compiled_ms = models.FloatField(null=True, blank=True, help_text="not timed on a CPU")
    eager_stderr_pct = models.FloatField(null=True, blank=True)
    compiled_stderr_pct = models.FloatField(null=True, blank=True)
    rounds = models.PositiveIntegerField(default=0)
    compile_s = models.FloatField(default=0.0)
    measured_at = models.DateTimeField(default=timezone.now)

    objects = BaselineCalibrationQuerySet.as_manager()

    class Meta:
        ordering = ["hardware", "query__number"]
        constraints = [
            models.UniqueConstraint(
                fields=["hardware", "scale_factor", "harness_version", "torch_version", "query"],
                name="calibration_one_per_query_and_setup",
            ),
            models.CheckConstraint(
                condition=Q(mode__in=["eager", "compiled"]), name="calibration_mode_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.query.label} on {self.hardware_id} (SF{self.scale_factor:g}): {self.mode}"
