"""Uploaded kernel sets: who may see them (publication, hiding) and their kernels."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Count, Exists, OuterRef, Prefetch, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from evaluator.kernelset import KernelSet, Manifest
from evaluator.report import Status as ReportStatus
from leaderboard import highlighting
from leaderboard.models.catalogue import LanguageModel, Query


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
        from leaderboard.models.runs import EvaluationRun  # runs imports this module

        feedback = Exists(
            EvaluationRun.objects.filter(submission=OuterRef("pk"), kind=EvaluationRun.Kind.FEEDBACK)
        )
        mine = self.filter(uploader_id=user.pk)
        return mine.filter(feedback) if kind == EvaluationRun.Kind.FEEDBACK else mine.exclude(feedback)

    def recent(self) -> SubmissionQuerySet:
        """Newest first, with what a list row shows: its ranked runs newest first (`runs_newest`; a
        feedback run is its uploader's alone, and lists are read by everyone), without their reports,
        their kernels that passed and were submitted counted by the database (`kernel_tally`)."""
        from leaderboard.models.runs import EvaluationRun  # runs imports this module

        submitted = ~Q(results__status=ReportStatus.MISSING)
        runs = (
            EvaluationRun.objects.filter(kind=EvaluationRun.Kind.RANKED)
            .without_report()
            .annotate(
                kernels_passed=Count("results", filter=Q(results__status=ReportStatus.PASSED)),
                kernels_submitted=Count("results", filter=submitted),
            )
            .select_related("hardware")
            .order_by("-created", "-id")
        )
        return (
            self.select_related("language_model", "uploader")
            .prefetch_related(Prefetch("runs", queryset=runs, to_attr="runs_newest"))
            .order_by("-created", "-id")
        )


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
        from leaderboard.models.runs import EvaluationRun  # runs imports this module

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
    # Highlighted once, when the source is stored (`save`, or `services.submission_create`'s bulk insert),
    # never per request: a set's page shows up to 22 of them.
    source_html = models.TextField(blank=True, editable=False)

    class Meta:
        ordering = ["query__number"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "query"], name="kernel_one_per_query"),
        ]

    def __str__(self) -> str:
        return f"{self.query.slug}.py of submission #{self.submission_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.source_html = highlighting.to_html(self.source, "python")
        if (fields := kwargs.get("update_fields")) is not None and "source" in fields:
            kwargs["update_fields"] = {*fields, "source_html"}
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("kernel_detail", args=[self.submission_id, self.query.number])

    @property
    def filename(self) -> str:
        return f"{self.query.slug}.py"

    @property
    def highlighted(self) -> SafeString:
        """The stored highlighted source (Pygments escaped every token when it was stored)."""
        return mark_safe(self.source_html or highlighting.to_html(self.source, "python"))  # noqa: S308
