"""The REST API's URLs, under /api/ (included by leaderboard/urls.py); docs/api.md describes them."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from leaderboard import apis, exports, list_apis

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api_schema"), name="api_docs"),
    path("hardware/", list_apis.HardwareListApi.as_view(), name="api_hardware_list"),
    path("hardware/<slug:slug>/", list_apis.HardwareDetailApi.as_view(), name="api_hardware_detail"),
    path("queries/", list_apis.QueryListApi.as_view(), name="api_query_list"),
    path("queries/<int:number>/", list_apis.QueryDetailApi.as_view(), name="api_query_detail"),
    # GET lists the sets, POST uploads one.
    path("submissions/", list_apis.SubmissionCollectionApi.as_view(), name="api_submission_create"),
    path(
        "submissions/<int:submission_id>/", apis.SubmissionDetailApi.as_view(), name="api_submission_detail"
    ),
    path(
        "submissions/<int:submission_id>/publish/",
        apis.SubmissionPublishApi.as_view(),
        name="api_submission_publish",
    ),
    path(
        "submissions/<int:submission_id>/kernels.zip",
        exports.KernelSetArchiveApi.as_view(),
        name="api_kernel_set_archive",
    ),
    path(
        "submissions/<int:submission_id>/kernels/q<int:number>.py",
        exports.KernelSourceApi.as_view(),
        name="api_kernel_source",
    ),
    path("runs/", list_apis.EvaluationRunListApi.as_view(), name="api_run_list"),
    path("runs/<int:run_id>/", apis.EvaluationRunDetailApi.as_view(), name="api_run_detail"),
    path("runs/<int:run_id>/results/", exports.EvaluationRunResultsApi.as_view(), name="api_run_results"),
    path("results/", list_apis.QueryResultListApi.as_view(), name="api_result_list"),
    path("leaderboard/", exports.LeaderboardExportApi.as_view(), name="api_leaderboard"),
]
