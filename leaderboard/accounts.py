"""Accounts: sign-up (Django's UserCreationForm, an e-mail address for password resets), limited per
client address; password reset is Django's own views (leaderboard/account_urls.py)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

WINDOW_S = 3600


class SignUpForm(UserCreationForm):
    email = forms.EmailField(help_text="Only for resetting your password: never shown on the site.")

    class Meta(UserCreationForm.Meta):  # type: ignore[name-defined]  # django-stubs declares no Meta here
        model = User
        fields = ("username", "email")

    def clean_email(self) -> str:
        email = self.cleaned_data["email"]
        # One account per address, or a password reset could not say which account it is for.
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError("An account with this e-mail address exists: reset its password.")
        return email


def _signup_key(request: HttpRequest) -> str:
    # The peer's address: behind a proxy, the proxy must pass the client's (X-Forwarded-For is not read,
    # since any client can send it).
    return f"dkb:signups:{request.META.get('REMOTE_ADDR', '')}"


def signup_allowed(request: HttpRequest) -> bool:
    """Whether this client address has made fewer than DKB_SIGNUPS_PER_HOUR accounts this hour."""
    return int(cache.get(_signup_key(request), 0)) < settings.DKB_SIGNUPS_PER_HOUR


def signup_counted(request: HttpRequest) -> None:
    key = _signup_key(request)
    # add() starts the hour's window only when none is open; incr() keeps its expiry.
    if not cache.add(key, 1, WINDOW_S):
        try:
            cache.incr(key)
        except ValueError:  # the window closed between the two calls
            cache.add(key, 1, WINDOW_S)


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("upload")
    form = SignUpForm(request.POST or None)
    limited = request.method == "POST" and not signup_allowed(request)
    if limited:
        form.add_error(None, "Too many accounts were made from your address this hour: try again later.")
    elif request.method == "POST" and form.is_valid():
        user = form.save()
        signup_counted(request)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(
            request, f"Welcome, {user.username}: your account is ready. Upload a kernel set below."
        )
        return redirect("upload")
    status = 429 if limited else 400 if form.errors else 200
    return render(request, "leaderboard/signup.html", {"form": form}, status=status)
