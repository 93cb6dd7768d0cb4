"""Sign-up and password reset, under accounts/ (log in and out are in leaderboard/urls.py)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.urls import path

from leaderboard import accounts

urlpatterns = [
    path("signup/", accounts.signup, name="signup"),
    path(
        "password-reset/",
        auth_views.PasswordResetView.as_view(
            template_name="leaderboard/password_reset_form.html",
            email_template_name="leaderboard/password_reset_email.txt",
            subject_template_name="leaderboard/password_reset_subject.txt",
            extra_email_context={"site_name": settings.SITE_NAME},
        ),
        name="password_reset",
    ),
    path(
        "password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(template_name="leaderboard/password_reset_done.html"),
        name="password_reset_done",
    ),
    path(
        "reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(template_name="leaderboard/password_reset_confirm.html"),
        name="password_reset_confirm",
    ),
    path(
        "reset/done/",
        auth_views.PasswordResetCompleteView.as_view(
            template_name="leaderboard/password_reset_complete.html"
        ),
        name="password_reset_complete",
    ),
]
