"""Exports through the API: the leaderboard and one run's results as JSON or CSV, kernel source as files.

Each honours publication as the pages do: the leaderboard is `EvaluationRun.objects.ranked` (published,
not hidden, ranked-kind runs: the home page's rows); a run, a set and its source answer 404 to whoever
`visible_to` does not let see them.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.apis import ErrorSerializer
from leaderboard.models import EvaluationRun, Hardware, QueryResult, Submission

LEADERBOARD_COLUMNS = [
    "rank", "submission", "url", "model", "language", "scope", "configuration", "uploader", "hardware",
    "run", "overall_speedup", "geomean_speedup", "pass_rate", "fast_1", "fast_2", "mean_roofline",
    "flagged", "harness_version", "finished",
]  # fmt: skip
RESULT_COLUMNS = [
    "query", "status", "reason", "baseline_ms", "kernel_ms", "speedup", "roofline_fraction",
    "kernel_time_share", "launches", "trials", "baseline_mode", "flagged", "unstable",
]  # fmt: skip


class CSVRenderer(BaseRenderer):
    """A table ({"columns": [...], "rows": [{...}]}) as CSV with a header row; None is an empty cell."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=data["columns"], extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(data["rows"])
        return out.getvalue().encode()


class TableExportApi(APIView):
    """A table in JSON (the default, or ?format=json) or CSV (?format=csv, or Accept: text/csv); errors
    always in JSON, the API's error shape."""

    renderer_classes = [JSONRenderer, CSVRenderer]

    def handle_exception(self, exc: Exception) -> Response:
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return super().handle_exception(exc)

    def table(self, data: dict[str, Any], *, filename: str) -> Response:
        if self.request.accepted_renderer.format == CSVRenderer.format:
            return Response(data, headers={"Content-Disposition": f'attachment; filename="{filename}"'})
        return Response(data)

    def error(self, code: str, detail: str) -> Response:
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return Response({"code": code, "detail": detail}, status=400)


def _table_schema(name: str, extra: dict[str, serializers.Field]) -> Any:
    return inline_serializer(
        name,
        {
            **extra,
            "columns": serializers.ListField(child=serializers.CharField()),
            "rows": serializers.ListField(child=serializers.DictField(), help_text="one object per row"),
        },
    )


FORMAT = OpenApiParameter("format", str, enum=["json", "csv"], description="json (default) or csv")


class LeaderboardExportApi(TableExportApi):
    """The ranking of the home page, per hardware and scope: every ranked row, best first."""

    @extend_schema(
        operation_id="leaderboard_export",
        parameters=[
            OpenApiParameter("hardware", str, description="the hardware's slug (default: all)"),
            OpenApiParameter("scope", str, enum=Submission.Scope.values, description="full or core"),
            FORMAT,
        ],
        responses={
            (200, "application/json"): _table_schema(
                "Leaderboard",
                {
                    "hardware": serializers.CharField(allow_null=True),
                    "scope": serializers.CharField(allow_null=True),
                },
            ),
            (200, "text/csv"): OpenApiTypes.STR,
            400: ErrorSerializer,
        },
    )
    def get(self, request: Request) -> Response:
        hardware = None
        if slug := request.query_params.get("hardware"):
            hardware = Hardware.objects.filter(slug=slug).first()
            if hardware is None:
                return self.error("unknown_hardware", f"no hardware {slug!r}: see /api/hardware/")
        scope = request.query_params.get("scope") or None
        if scope is not None and scope not in Submission.Scope.values:
            return self.error("unknown_scope", f"scope must be one of {', '.join(Submission.Scope.values)}")
        runs = EvaluationRun.objects.ranked(hardware=hardware, scope=scope).defer("report")
        rows = [leaderboard_row(request, rank, run) for rank, run in enumerate(runs, start=1)]
        name = "-".join(["leaderboard", *(part for part in (slug, scope) if part)])
        data = {
            "hardware": hardware.slug if hardware else None,
            "scope": scope,
            "columns": LEADERBOARD_COLUMNS,
            "rows": rows,
        }
        return self.table(data, filename=f"{name}.csv")


def leaderboard_row(request: Request, rank: int, run: EvaluationRun) -> dict[str, Any]:
    """One ranked run as an export row (`LEADERBOARD_COLUMNS`)."""
    submission = run.submission
    return {
        "rank": rank,
        "submission": submission.pk,
        "url": request.build_absolute_uri(submission.get_absolute_url()),
        "model": submission.language_model.name,
        "language": submission.language,
        "scope": submission.scope,
        "configuration": submission.configuration,
        "uploader": submission.uploader.username,
        "hardware": run.hardware.slug,
        "run": run.pk,
        "overall_speedup": run.overall_speedup,
        "geomean_speedup": run.geomean_speedup,
        "pass_rate": run.pass_rate,
        "fast_1": run.fast_1,
        "fast_2": run.fast_2,
        "mean_roofline": getattr(run, "mean_roofline", None),
        "flagged": getattr(run, "flagged_count", 0),
        "harness_version": run.harness_version,
        "finished": run.finished.isoformat() if run.finished else None,
    }


def result_row(result: QueryResult) -> dict[str, Any]:
    """One query's result as an export row (`RESULT_COLUMNS`)."""
    return {
        "query": result.query.number,
        "status": result.status,
        "reason": result.reason,
        "baseline_ms": result.baseline_ms,
        "kernel_ms": result.kernel_ms,
        "speedup": result.speedup,
        "roofline_fraction": result.roofline_fraction,
        "kernel_time_share": result.kernel_time_share,
        "launches": result.launches,
        "trials": result.trials,
        "baseline_mode": result.baseline_mode,
        "flagged": result.flagged,
        "unstable": result.unstable,
    }


class EvaluationRunResultsApi(TableExportApi):
    """One run's per-query results (Q1 first) with its scores; empty rows until it succeeded."""

    @extend_schema(
        operation_id="run_results",
        parameters=[FORMAT],
        responses={
            (200, "application/json"): _table_schema(
                "RunResults",
                {
                    "run": serializers.IntegerField(),
                    "submission": serializers.IntegerField(),
                    "hardware": serializers.CharField(),
                    "kind": serializers.CharField(),
                    "status": serializers.CharField(),
                    "overall_speedup": serializers.FloatField(allow_null=True),
                    "geomean_speedup": serializers.FloatField(allow_null=True),
                    "pass_rate": serializers.FloatField(allow_null=True),
                    "ranked": serializers.BooleanField(),
                },
            ),
            (200, "text/csv"): OpenApiTypes.STR,
        },
    )
    def get(self, request: Request, run_id: int) -> Response:
        runs = EvaluationRun.objects.visible_to(request.user).select_related("hardware").defer("report")
        run = get_object_or_404(runs, pk=run_id)
        results = QueryResult.objects.filter(run=run).select_related("query").order_by("query__number")
        data = {
            "run": run.pk,
            "submission": run.submission_id,
            "hardware": run.hardware.slug,
            "kind": run.kind,
            "status": run.status,
            "overall_speedup": run.overall_speedup,
            "geomean_speedup": run.geomean_speedup,
            "pass_rate": run.pass_rate,
            "ranked": run.timing_ranked,
            "columns": RESULT_COLUMNS,
            "rows": [result_row(result) for result in results],
        }
        return self.table(data, filename=f"run-{run.pk}.csv")


class KernelSourceApi(APIView):
    """One kernel file of a set, as text/x-python."""

    @extend_schema(operation_id="kernel_source", responses={(200, "text/x-python"): OpenApiTypes.STR})
    def get(self, request: Request, submission_id: int, number: int) -> HttpResponse:
        submission = get_object_or_404(Submission.objects.visible_to(request.user), pk=submission_id)
        kernel = get_object_or_404(submission.kernels.select_related("query"), query__number=number)
        response = HttpResponse(kernel.source, content_type="text/x-python; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{kernel.filename}"'
        return response


class KernelSetArchiveApi(APIView):
    """The whole set as a zip (manifest.json and its qNN.py files): what `python -m evaluator run` and an
    upload take back."""

    @extend_schema(
        operation_id="kernel_set_archive",
        responses={(200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="the set")},
    )
    def get(self, request: Request, submission_id: int) -> HttpResponse:
        submission = get_object_or_404(
            Submission.objects.visible_to(request.user).select_related("language_model"), pk=submission_id
        )
        kernel_set = submission.kernel_set()
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("manifest.json", json.dumps(kernel_set.manifest.to_dict(), indent=2) + "\n")
            for number, source in sorted(kernel_set.kernels.items()):
                archive.writestr(f"q{number:02d}.py", source)
        response = HttpResponse(buffer.getvalue(), content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="submission-{submission.pk}.zip"'
        return response
