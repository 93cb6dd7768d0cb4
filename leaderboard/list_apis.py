"""REST API, read side: hardware, queries, submissions, runs and results, as paged and filtered lists.

One view per operation, as in leaderboard/apis.py. What a list may show is decided by the models'
`visible_to` querysets (publication: a set is its uploader's and staff's until published; a feedback run
is never public), narrowed by the filters of leaderboard/filters.py; nothing here decides it anew.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django.db.models import BooleanField, ExpressionWrapper, Prefetch, Q, QuerySet
from django.db.models.fields.json import KeyTransform
from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import generics, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from leaderboard import apis
from leaderboard.filters import EvaluationRunFilter, FilterBackend, QueryResultFilter, SubmissionFilter
from leaderboard.models import EvaluationRun, Hardware, Kernel, Query, QueryResult, Submission
from leaderboard.models.runs import EvaluationRunQuerySet
from leaderboard.models.submissions import SubmissionQuerySet
from leaderboard.throttles import UploadThrottle

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class _ReportTiming(TypedDict):
    """What `EvaluationRunListApi.get_queryset` annotates each run with."""

    report_timing: Any
    has_report: bool


def submissions_listed_to(user: Any) -> SubmissionQuerySet:
    """The sets a list shows the user: those they may open (`visible_to`), less others' hidden sets,
    which are off every listing (their pages still say why)."""
    submissions = Submission.objects.visible_to(user)
    return submissions if user.is_staff else submissions.filter(Q(hidden=False) | Q(uploader_id=user.pk))


def runs_listed_to(user: Any) -> EvaluationRunQuerySet:
    """The runs a list shows the user: those they may open (`visible_to`) of the sets it lists."""
    return EvaluationRun.objects.visible_to(user).filter(submission__in=submissions_listed_to(user))


def _absolute(request: Request, name: str, *args: Any) -> str:
    return request.build_absolute_uri(reverse(name, args=args))


class HardwareListApi(generics.ListAPIView):
    """Where runs are evaluated; `active` ones take new uploads."""

    class OutputSerializer(serializers.ModelSerializer):
        class Meta:
            model = Hardware
            fields = ["slug", "name", "device", "peak_bandwidth_gbs", "scale_factor", "active"]

    serializer_class = OutputSerializer
    queryset = Hardware.objects.order_by("name")


class HardwareDetailApi(generics.RetrieveAPIView):
    """One hardware, by its slug."""

    serializer_class = HardwareListApi.OutputSerializer
    queryset = Hardware.objects.all()
    lookup_field = "slug"


class QueryListApi(generics.ListAPIView):
    """The benchmark's TPC-H queries, Q1 first."""

    class OutputSerializer(serializers.ModelSerializer):
        url = serializers.SerializerMethodField()

        class Meta:
            model = Query
            fields = ["number", "name", "url"]

        @extend_schema_field(serializers.URLField())
        def get_url(self, query: Query) -> str:
            return _absolute(self.context["request"], "api_query_detail", query.number)

    serializer_class = OutputSerializer
    queryset = Query.objects.by_number()


class QueryDetailApi(generics.RetrieveAPIView):
    """One query: its SQL and the TorchPlan its kernels are timed against."""

    class OutputSerializer(serializers.ModelSerializer):
        class Meta:
            model = Query
            fields = ["number", "name", "sql", "torchplan_source"]

    serializer_class = OutputSerializer
    queryset = Query.objects.all()
    lookup_field = "number"


class SubmissionListApi(generics.ListAPIView):
    """Kernel sets, newest first: published ones, and your own private ones."""

    class OutputSerializer(serializers.ModelSerializer):
        url = serializers.SerializerMethodField()
        api_url = serializers.SerializerMethodField()
        model = serializers.CharField(source="language_model.name")
        model_slug = serializers.CharField(source="language_model.slug")
        uploader = serializers.CharField(source="uploader.username")
        queries = serializers.SerializerMethodField()

        class Meta:
            model = Submission
            fields = [
                "id", "url", "api_url", "model", "model_slug", "language", "scope", "context", "agent",
                "repair_rounds", "uploader", "created", "published_at", "hidden", "hidden_reason", "queries",
            ]  # fmt: skip

        @extend_schema_field(serializers.URLField())
        def get_url(self, submission: Submission) -> str:
            return self.context["request"].build_absolute_uri(submission.get_absolute_url())

        @extend_schema_field(serializers.URLField())
        def get_api_url(self, submission: Submission) -> str:
            return _absolute(self.context["request"], "api_submission_detail", submission.pk)

        @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
        def get_queries(self, submission: Submission) -> list[int]:
            return [kernel.query.number for kernel in submission.kernels.all()]

    serializer_class = OutputSerializer
    filter_backends = [FilterBackend]
    filterset_class = SubmissionFilter

    def get_queryset(self) -> QuerySet[Submission]:
        kernels = Prefetch("kernels", queryset=Kernel.objects.select_related("query").defer("source"))
        return submissions_listed_to(self.request.user).recent().prefetch_related(kernels)


# Each base has its own OutputSerializer; the MRO gives GET the list's, and POST names its own.
class SubmissionCollectionApi(SubmissionListApi, apis.SubmissionCreateApi):  # type: ignore[misc]
    """/api/submissions/: GET lists the sets (`SubmissionListApi`), POST uploads one (`SubmissionCreateApi`);
    only the upload needs a token and counts against the upload limits."""

    def get_permissions(self) -> list[Any]:
        return [IsAuthenticated()] if self.request.method == "POST" else []

    def get_throttles(self) -> list[BaseThrottle]:
        return [UploadThrottle()] if self.request.method == "POST" else []


class EvaluationRunListApi(generics.ListAPIView):
    """Evaluation runs, newest first, without their full reports (GET /api/runs/<id>/ has it)."""

    class OutputSerializer(serializers.ModelSerializer):
        url = serializers.SerializerMethodField()
        submission = serializers.IntegerField(source="submission_id")
        hardware: serializers.SlugRelatedField[Hardware] = serializers.SlugRelatedField(
            slug_field="slug", read_only=True
        )
        final = serializers.BooleanField(source="is_final")
        timing = apis.TimingField()

        class Meta:
            model = EvaluationRun
            fields = [
                "id", "url", "submission", "hardware", "status", "final", "kind", "created", "started",
                "finished", "progress", "harness_version", "sandbox_backend", "overall_speedup",
                "geomean_speedup", "pass_rate", "fast_1", "fast_2", "timing", "error",
            ]  # fmt: skip

        @extend_schema_field(serializers.URLField())
        def get_url(self, run: EvaluationRun) -> str:
            return _absolute(self.context["request"], "api_run_detail", run.pk)

        def to_representation(self, run: WithAnnotations[EvaluationRun, _ReportTiming]) -> dict[str, Any]:
            # Of its report, the row reads only the "timing" part (all `timing_label` and `timing_reason`
            # look at), fetched alone by `get_queryset`.
            run.report = {"timing": run.report_timing} if run.has_report else None
            return super().to_representation(run)

    serializer_class = OutputSerializer
    filter_backends = [FilterBackend]
    filterset_class = EvaluationRunFilter

    def get_queryset(self) -> QuerySet[EvaluationRun]:
        # The reports stay in the database (a page of 50 would carry 50 whole reports, ~100 KB each).
        return (
            runs_listed_to(self.request.user)
            .newest_first()
            .defer("report")
            .annotate(
                report_timing=KeyTransform("timing", "report"),
                has_report=ExpressionWrapper(Q(report__isnull=False), output_field=BooleanField()),
            )
        )


class QueryResultListApi(generics.ListAPIView):
    """Per-query results of the runs you may see, newest run first, Q1 first within a run."""

    class OutputSerializer(serializers.ModelSerializer):
        submission = serializers.IntegerField(source="run.submission_id")
        hardware = serializers.CharField(source="run.hardware.slug")
        query = serializers.IntegerField(source="query.number")
        baseline_mode = serializers.CharField()
        flagged = serializers.CharField()
        unstable = serializers.CharField()

        class Meta:
            model = QueryResult
            fields = [
                "run", "submission", "hardware", "query", "status", "reason", "baseline_ms", "kernel_ms",
                "speedup", "roofline_fraction", "kernel_time_share", "launches", "trials", "baseline_mode",
                "flagged", "unstable",
            ]  # fmt: skip

    serializer_class = OutputSerializer
    filter_backends = [FilterBackend]
    filterset_class = QueryResultFilter

    def get_queryset(self) -> QuerySet[QueryResult]:
        return (
            QueryResult.objects.filter(run__in=runs_listed_to(self.request.user).values("id"))
            .select_related("run__hardware", "query")
            .defer("run__report")
            .order_by("-run__created", "-run_id", "query__number")
        )
