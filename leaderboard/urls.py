from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from leaderboard import drilldown, views

urlpatterns = [
    path("", views.index, name="index"),
    path("charts/ranking.svg", views.ranking_chart, name="ranking_chart"),
    path("submissions/<int:submission_id>/", views.submission_detail, name="submission_detail"),
    path("submissions/<int:submission_id>/publish/", views.submission_publish, name="submission_publish"),
    path(
        "submissions/<int:submission_id>/kernels/<int:number>/",
        drilldown.kernel_detail,
        name="kernel_detail",
    ),
    path(
        "submissions/<int:submission_id>/kernels/<int:number>/raw/", drilldown.kernel_raw, name="kernel_raw"
    ),
    path("compare/", views.compare, name="compare"),
    path("matrix/", drilldown.matrix, name="matrix"),
    path("queries/", views.query_list, name="query_list"),
    path("queries/<int:number>/", views.query_detail, name="query_detail"),
    path("queries/<int:number>/chart.svg", drilldown.query_chart, name="query_chart"),
    path("upload/", views.upload, name="upload"),
    path("upload/token/", views.token_create, name="token_create"),
    path("upload/token/revoke/", views.token_revoke, name="token_revoke"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(
            template_name="leaderboard/login.html",
            redirect_authenticated_user=True,
            # LoginView's own site_name is the request's host ("127.0.0.1:8765") without django.contrib.sites.
            extra_context={"site_name": settings.SITE_NAME},
        ),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/", include("leaderboard.account_urls")),
    path("api/", include("leaderboard.api_urls")),
    path("admin/", admin.site.urls),
]
