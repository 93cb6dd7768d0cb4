"""REST API: one APIView per operation, nested Input/Output serializers, services for every write."""

from __future__ import annotations

from typing import Any, NoReturn

from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import APIException
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluator.errors import SubmissionError
from leaderboard import services
from leaderboard.models import EvaluationRun, Hardware, Submission
from leaderboard.throttles import UploadThrottle, rate_limited_message
from leaderboard.uploads import kernel_set_read


def signed_in(request: Request) -> User:
    """The user of a request that `IsAuthenticated` let through."""
    user = request.user
    assert isinstance(user, User), "IsAuthenticated admits signed-in users only"
    return user


def _error(code: str, detail: str, http_status: int = status.HTTP_400_BAD_REQUEST) -> Response:
    return Response({"code": code, "detail": detail}, status=http_status)


class ErrorSerializer(serializers.Serializer):
    """Every 4xx the API answers itself: a stable code to branch on and a sentence to show."""

    code = serializers.CharField()
    detail = serializers.CharField()


class RunSummarySerializer(serializers.Serializer):
    """A run as listed in an upload's answer and on its set (`_run_summary`)."""

    id = serializers.IntegerField()
    url = serializers.URLField()
    status = serializers.ChoiceField(choices=EvaluationRun.Status.choices)
    hardware = serializers.CharField(help_text="the hardware's slug")
    kind = serializers.ChoiceField(choices=EvaluationRun.Kind.choices)


def _first_error(errors: dict[str, Any]) -> str:
    field, problems = next(iter(errors.items()))
    return f"{field}: {problems[0] if isinstance(problems, list) else problems}"


@extend_schema_field(OpenApiTypes.BINARY)
class FileOrTextField(serializers.Field):
    """manifest.json as an uploaded file, or its JSON text in a form field; checked by the reader."""

    def to_internal_value(self, data: Any) -> UploadedFile | str:
        if isinstance(data, UploadedFile | str):
            return data
        raise serializers.ValidationError("send manifest.json as a file or as JSON text")

    def to_representation(self, value: Any) -> str:
        return str(value)


def _run_summary(request: Request, run: EvaluationRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "url": request.build_absolute_uri(reverse("api_run_detail", args=[run.pk])),
        "status": run.status,
        "hardware": run.hardware.slug,
        "kind": run.kind,
    }


@extend_schema_field(
    inline_serializer(
        "Timing",
        {
            "ranked": serializers.BooleanField(),
            "label": serializers.CharField(help_text='e.g. "correctness only"; "" when ranked'),
            "reason": serializers.CharField(),
        },
    )
)
class TimingField(serializers.Field):
    """Whether a run's speed scores are ranked, and if not why: {"ranked", "label", "reason"}."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, run: EvaluationRun) -> dict[str, Any]:
        return {"ranked": run.timing_ranked, "label": run.timing_label, "reason": run.timing_reason}


class RateLimited(APIException):
    """429 in the API's error shape; DRF's handler adds Retry-After from `wait`."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS

    def __init__(self, *, detail: str, wait: float) -> None:
        super().__init__({"code": "rate_limited", "detail": detail})
        self.wait = wait


class SubmissionCreateApi(APIView):
    """Upload a kernel set: `archive`, or `manifest` plus files named qNN.py. Answers 202 with the runs;
    the same archive uploaded again by the same user (and kind) answers 200 with the set it made then."""

    permission_classes = [IsAuthenticated]
    throttle_classes = [UploadThrottle]

    class InputSerializer(serializers.Serializer):
        archive = serializers.FileField(required=False, allow_empty_file=True)
        manifest = FileOrTextField(required=False)
        # "feedback": evaluate only the set's own queries, unranked (the repair loop's quick answer).
        kind = serializers.ChoiceField(choices=EvaluationRun.Kind.choices, default=EvaluationRun.Kind.RANKED)

    class OutputSerializer(serializers.Serializer):
        submission = serializers.IntegerField()
        url = serializers.URLField()
        runs = RunSummarySerializer(many=True)
        duplicate = serializers.BooleanField()
        # Private until the uploader posts here.
        publish_url = serializers.URLField()

    @extend_schema(
        operation_id="submission_create",
        description="Kernel files go in any multipart field (e.g. `kernels`); their names (q06.py) count.",
        request={"multipart/form-data": InputSerializer},
        responses={202: OutputSerializer, 200: OutputSerializer, 400: ErrorSerializer, 429: ErrorSerializer},
    )
    def post(self, request: Request) -> Response:
        serializer = SubmissionCreateApi.InputSerializer(data=request.data)
        if not serializer.is_valid():
            return _error("invalid_input", _first_error(serializer.errors))
        # Kernel files come under any field name; their file names (qNN.py) are what counts.
        files = [
            f for key, uploads in request.FILES.lists() if key not in ("archive", "manifest") for f in uploads
        ]
        try:
            upload = kernel_set_read(
                archive=serializer.validated_data.get("archive"),
                manifest=serializer.validated_data.get("manifest"),
                files=files,
            )
            submission, created = services.submission_upload(
                uploader=signed_in(request),
                kernel_set=upload.kernel_set,
                archive_sha256=upload.sha256,
                kind=serializer.validated_data["kind"],
            )
        except SubmissionError as exc:
            return _error(exc.code, exc.message)
        runs = submission.runs.select_related("hardware").order_by("id")
        # Named, not self.: the URL's view also lists (`SubmissionCollectionApi`), with its own serializer.
        data = SubmissionCreateApi.OutputSerializer(
            {
                "submission": submission.pk,
                "url": request.build_absolute_uri(submission.get_absolute_url()),
                "runs": [_run_summary(request, run) for run in runs],
                "duplicate": not created,
                "publish_url": request.build_absolute_uri(
                    reverse("api_submission_publish", args=[submission.pk])
                ),
            }
        ).data
        return Response(data, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK)

    def throttled(self, request: Request, wait: float | None) -> NoReturn:
        kind = request.data.get("kind") or EvaluationRun.Kind.RANKED
        wait_s = wait or 60.0
        raise RateLimited(detail=rate_limited_message(kind=kind, wait_s=wait_s), wait=wait_s)


class EvaluationRunDetailApi(APIView):
    """A run's status and, once it succeeded, its scores and full report."""

    class OutputSerializer(serializers.ModelSerializer):
        submission = serializers.IntegerField(source="submission_id")
        hardware: serializers.SlugRelatedField[Hardware] = serializers.SlugRelatedField(
            slug_field="slug", read_only=True
        )
        final = serializers.BooleanField(source="is_final")
        timing = TimingField()
        max_attempts = serializers.IntegerField(read_only=True)
        lost_attempts = serializers.JSONField(
            read_only=True, help_text="each attempt whose worker was lost: attempt, worker, reason, times"
        )

        class Meta:
            model = EvaluationRun
            fields = [
                "id", "submission", "hardware", "status", "final", "kind", "created", "started", "finished",
                "progress", "harness_version", "sandbox_backend", "overall_speedup", "geomean_speedup",
                "pass_rate", "fast_1", "fast_2", "timing", "error", "attempts", "max_attempts",
                "lost_attempts", "report",
            ]  # fmt: skip

    @extend_schema(operation_id="run_retrieve", responses=OutputSerializer)
    def get(self, request: Request, run_id: int) -> Response:
        runs = EvaluationRun.objects.visible_to(request.user).select_related("hardware", "submission")
        run = get_object_or_404(runs, pk=run_id)
        return Response(self.OutputSerializer(run).data)


class SubmissionDetailApi(APIView):
    """A submission's manifest, kernels' queries and runs (newest first)."""

    class OutputSerializer(serializers.ModelSerializer):
        model = serializers.CharField(source="language_model.name")
        uploader = serializers.CharField(source="uploader.username")
        queries = serializers.SerializerMethodField()
        runs = serializers.SerializerMethodField()
        url = serializers.SerializerMethodField()

        class Meta:
            model = Submission
            fields = [
                "id", "url", "model", "language", "scope", "context", "agent", "repair_rounds", "notes",
                "uploader", "created", "published_at", "hidden", "hidden_reason", "archive_sha256", "queries",
                "runs",
            ]  # fmt: skip

        @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
        def get_queries(self, submission: Submission) -> list[int]:
            return [kernel.query.number for kernel in submission.kernels.select_related("query")]

        @extend_schema_field(
            inline_serializer(
                "SubmissionRun",
                {
                    **RunSummarySerializer().get_fields(),
                    "overall_speedup": serializers.FloatField(allow_null=True),
                    "pass_rate": serializers.FloatField(allow_null=True),
                    "ranked": serializers.BooleanField(),
                },
                many=True,
            )
        )
        def get_runs(self, submission: Submission) -> list[dict[str, Any]]:
            request = self.context["request"]
            return [
                _run_summary(request, run)
                | {
                    "overall_speedup": run.overall_speedup,
                    "pass_rate": run.pass_rate,
                    "ranked": run.timing_ranked,
                }
                for run in EvaluationRun.objects.visible_to(request.user)
                .filter(submission=submission)
                .newest_first()
            ]

        @extend_schema_field(serializers.URLField())
        def get_url(self, submission: Submission) -> str:
            return self.context["request"].build_absolute_uri(submission.get_absolute_url())

    @extend_schema(operation_id="submission_retrieve", responses=OutputSerializer)
    def get(self, request: Request, submission_id: int) -> Response:
        submissions = Submission.objects.visible_to(request.user).select_related("language_model", "uploader")
        submission = get_object_or_404(submissions, pk=submission_id)
        return Response(self.OutputSerializer(submission, context={"request": request}).data)


class SubmissionPublishApi(APIView):
    """Make one of your sets public (it is private from its upload). Only its uploader may."""

    permission_classes = [IsAuthenticated]

    class OutputSerializer(serializers.ModelSerializer):
        class Meta:
            model = Submission
            fields = ["id", "published_at"]

    @extend_schema(
        operation_id="submission_publish",
        request=None,
        responses={200: OutputSerializer, 400: ErrorSerializer},
    )
    def post(self, request: Request, submission_id: int) -> Response:
        submission = get_object_or_404(Submission.objects.visible_to(request.user), pk=submission_id)
        try:
            services.submission_publish(submission=submission, user=signed_in(request))
        except SubmissionError as exc:
            return _error(exc.code, exc.message)
        return Response(self.OutputSerializer(submission).data)
