"""Admin: hardware, queries and submissions; rerun and hide go through the services."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

import evaluator
from leaderboard import services
from leaderboard.models import (
    BaselineCalibration,
    EvaluationRun,
    Hardware,
    Kernel,
    LanguageModel,
    Query,
    QueryResult,
    Submission,
)


@admin.register(LanguageModel)
class LanguageModelAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]
    search_fields = ["name"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Query)
class QueryAdmin(admin.ModelAdmin):
    list_display = ["number", "name"]


@admin.register(Hardware)
class HardwareAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "device", "scale_factor", "peak_bandwidth_gbs", "queue", "active"]
    list_filter = ["device", "active"]
    actions = ["calibrate_baselines", "rerun_top"]

    @admin.action(description="Calibrate baselines (on the hardware's own worker)")
    def calibrate_baselines(self, request: HttpRequest, queryset: QuerySet[Hardware]) -> None:
        hardware = list(queryset)
        for one in hardware:
            services.baseline_calibration_enqueue(hardware=one)
        self.message_user(
            request,
            f"Baseline calibration queued for {len(hardware)} hardware; run it while the machine is idle.",
            messages.SUCCESS,
        )

    @admin.action(description="Rerun the top N under the current harness version, as one batch")
    def rerun_top(self, request: HttpRequest, queryset: QuerySet[Hardware]) -> TemplateResponse | None:
        """Asks how many (a form), then queues each hardware's batch (services.evaluation_rerun_top)."""
        form = RerunTopForm(request.POST if "apply" in request.POST else None)
        if not form.is_valid():
            context = {
                **self.admin_site.each_context(request),
                "title": "Rerun the top sets under the current harness version",
                "form": form,
                "hardware": list(queryset),
                "harness_version": evaluator.HARNESS_VERSION,
                "selected": request.POST.getlist(ACTION_CHECKBOX_NAME),
                "opts": self.model._meta,
            }
            return TemplateResponse(request, "admin/leaderboard/hardware/rerun_top.html", context)
        count = form.cleaned_data["count"]
        for hardware in queryset:
            if not hardware.active:
                self.message_user(
                    request, f"{hardware.name}: inactive, no worker; nothing queued.", messages.WARNING
                )
                continue
            runs = services.evaluation_rerun_top(hardware=hardware, count=count)
            self.message_user(
                request,
                f"{hardware.name}: {len(runs)} rerun(s) of its top {count} queued under harness "
                f"{evaluator.HARNESS_VERSION} (the others are measured by it already, or wait for a run).",
                messages.SUCCESS,
            )
        return None


class RerunTopForm(forms.Form):
    count = forms.IntegerField(
        label="How many of the best ranked sets", min_value=1, max_value=100, initial=10
    )


@admin.register(BaselineCalibration)
class BaselineCalibrationAdmin(admin.ModelAdmin):
    list_display = [
        "query",
        "hardware",
        "scale_factor",
        "mode",
        "eager_ms",
        "compiled_ms",
        "rounds",
        "harness_version",
        "torch_version",
        "measured_at",
    ]
    list_filter = ["hardware", "mode", "harness_version", "torch_version"]
    list_select_related = ["query", "hardware"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Rows come from a calibration (dkb_baselines), which also writes the record evaluations read.
        return False


class KernelInline(admin.TabularInline):
    model = Kernel
    extra = 0
    fields = ["query", "source"]
    readonly_fields = ["query"]

    # An evaluated set's sources are what was measured: editing them would put another kernel beside
    # its results. Only a set no worker has taken up yet can still be corrected.
    def get_readonly_fields(self, request: HttpRequest, obj: Submission | None = None) -> list[str]:
        return ["query", "source"] if obj is not None and obj.is_evaluated else ["query"]

    def has_add_permission(self, request: HttpRequest, obj: Submission | None = None) -> bool:
        return not (obj is not None and obj.is_evaluated)

    def has_delete_permission(self, request: HttpRequest, obj: Submission | None = None) -> bool:
        return not (obj is not None and obj.is_evaluated)


class RunInline(admin.TabularInline):
    model = EvaluationRun
    extra = 0
    fields = ("id", "hardware", "status", "kind", "created", "finished", "overall_speedup", "pass_rate")
    readonly_fields = fields
    show_change_link = True
    can_delete = False


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "language_model",
        "language",
        "scope",
        "uploader",
        "created",
        "published_at",
        "hidden",
    ]
    list_filter = ["hidden", "language", "scope", "language_model"]
    search_fields = ["language_model__name", "uploader__username", "archive_sha256"]
    # Publishing is the uploader's decision alone (services.submission_publish); staff hide instead.
    readonly_fields = ["archive_sha256", "created", "published_at"]
    MANIFEST_FIELDS = [
        "uploader",
        "language_model",
        "language",
        "scope",
        "context",
        "agent",
        "repair_rounds",
        "notes",
    ]
    inlines = [KernelInline, RunInline]
    actions = ["hide_submissions", "show_submissions", "rerun_latest"]

    def get_readonly_fields(self, request: HttpRequest, obj: Submission | None = None) -> list[str]:
        # The manifest of an evaluated set is part of what was measured, like its kernels (KernelInline).
        if obj is not None and obj.is_evaluated:
            return [*self.readonly_fields, *self.MANIFEST_FIELDS]
        return list(self.readonly_fields)

    @admin.action(description="Hide from rankings and listings (set a public reason on its form)")
    def hide_submissions(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        for submission in queryset:
            services.submission_hide(submission=submission)
        self.message_user(request, f"{queryset.count()} submission(s) hidden.", messages.SUCCESS)

    @admin.action(description="Show submission again")
    def show_submissions(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        for submission in queryset:
            services.submission_hide(submission=submission, hidden=False)
        self.message_user(request, f"{queryset.count()} submission(s) shown.", messages.SUCCESS)

    @admin.action(description="Rerun evaluation (latest run per hardware)")
    def rerun_latest(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        count = 0
        for submission in queryset:
            latest: dict[int, EvaluationRun] = {}
            for run in submission.runs.newest_first():
                latest.setdefault(run.hardware_id, run)
            for run in latest.values():
                services.evaluation_rerun(run=run)
                count += 1
        self.message_user(request, f"{count} run(s) queued.", messages.SUCCESS)


class QueryResultInline(admin.TabularInline):
    model = QueryResult
    extra = 0
    fields = ("query", "status", "reason", "baseline_ms", "kernel_ms", "speedup", "roofline_fraction")
    readonly_fields = fields
    can_delete = False


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "submission",
        "hardware",
        "status",
        "kind",
        "created",
        "finished",
        "overall_speedup",
        "pass_rate",
        "harness_version",
        "sandbox_backend",
    ]
    list_filter = ["status", "kind", "hardware", "harness_version", "sandbox_backend"]
    list_select_related = ["submission__language_model", "hardware"]
    readonly_fields = [
        "submission",
        "hardware",
        "status",
        "kind",
        "rerun_of",
        "created",
        "started",
        "finished",
        "attempts",
        "worker",
        "heartbeat",
        "lost_attempts",
        "harness_version",
        "sandbox_backend",
        "overall_speedup",
        "geomean_speedup",
        "pass_rate",
        "fast_1",
        "fast_2",
        "timing_ranked",
        "progress",
        "error",
        "retryable",
        "report",
    ]
    inlines = [QueryResultInline]
    actions = ["rerun_evaluation", "fail_stuck_runs"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Runs are created by uploads and reruns only, so each one has a queued task behind it.
        return False

    @admin.action(description="Rerun evaluation")
    def rerun_evaluation(self, request: HttpRequest, queryset: QuerySet[EvaluationRun]) -> None:
        runs = list(queryset.select_related("submission", "hardware"))
        for run in runs:
            services.evaluation_rerun(run=run)
        self.message_user(
            request, f"{len(runs)} rerun(s) queued; earlier results are kept.", messages.SUCCESS
        )

    @admin.action(description="Mark as failed (worker lost), so it can be rerun")
    def fail_stuck_runs(self, request: HttpRequest, queryset: QuerySet[EvaluationRun]) -> None:
        # The reclaim queues a lost worker's run again by itself once its lease runs out (up to
        # DKB_RUN_ATTEMPTS); this is for a run an admin knows is stuck and wants failed now.
        runs = list(queryset.exclude(status__in=EvaluationRun.Status.FINAL))
        for run in runs:
            services.evaluation_fail(
                run=run, error=f"marked failed by {request.user}: worker lost", retryable=True
            )
        self.message_user(request, f"{len(runs)} unfinished run(s) marked failed.", messages.SUCCESS)
