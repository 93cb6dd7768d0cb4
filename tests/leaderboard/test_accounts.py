"""Accounts: sign-up, limited per client address, and password reset by e-mail."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.cache import cache
from django.test import Client
from pytest_django.asserts import assertContains, assertRedirects

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "tensor-cores-all-day-7"


@pytest.fixture(autouse=True)
def fresh_signup_window() -> None:
    """The test client's address starts with no sign-ups counted (the file cache outlives a session)."""
    cache.delete("dkb:signups:127.0.0.1")


def _sign_up(client: Client, username: str, email: str, password: str = NEW_PASSWORD) -> Any:
    return client.post(
        "/accounts/signup/",
        {"username": username, "email": email, "password1": password, "password2": password},
    )


def test_a_visitor_signs_up_and_is_logged_in_at_the_upload_page(anonymous: Client) -> None:
    page = anonymous.get("/accounts/signup/")
    assertContains(page, "<h1>Sign up</h1>")
    response = _sign_up(anonymous, "linus", "linus@example.org")
    assertRedirects(response, "/upload/", fetch_redirect_response=False)
    assertContains(anonymous.get("/upload/"), "Welcome, linus: your account is ready.")
    user = User.objects.get(username="linus")
    assert user.email == "linus@example.org" and user.check_password(NEW_PASSWORD)
    assert not user.is_staff


def test_a_sign_up_needs_matching_passwords_and_an_address_not_taken(
    anonymous: Client, uploader: User
) -> None:
    response = _sign_up(anonymous, "linus", uploader.email.upper())
    assert response.status_code == 400
    assertContains(response, "An account with this e-mail address exists", status_code=400)
    mismatch = anonymous.post(
        "/accounts/signup/",
        {"username": "linus", "email": "l@example.org", "password1": NEW_PASSWORD, "password2": "other-pw-1"},
    )
    assertContains(mismatch, "The two password fields", status_code=400)
    assert not User.objects.filter(username="linus").exists()


def test_sign_ups_from_one_address_are_limited_per_hour(anonymous: Client, settings: Any) -> None:
    settings.DKB_SIGNUPS_PER_HOUR = 2
    for n in range(2):
        client = Client()
        assert _sign_up(client, f"user{n}", f"user{n}@example.org").status_code == 302
    response = _sign_up(anonymous, "user3", "user3@example.org")
    assertContains(response, "Too many accounts were made from your address", status_code=429)
    assert not User.objects.filter(username="user3").exists()


def test_a_logged_in_user_is_sent_on_from_the_sign_up_page(uploader_client: Client) -> None:
    assertRedirects(uploader_client.get("/accounts/signup/"), "/upload/")


def test_the_login_page_links_to_sign_up_and_password_reset(anonymous: Client) -> None:
    page = anonymous.get("/accounts/login/")
    assertContains(page, 'href="/accounts/signup/"')
    assertContains(page, 'href="/accounts/password-reset/"')


def test_a_forgotten_password_is_reset_through_the_mailed_link(anonymous: Client, uploader: User) -> None:
    response = anonymous.post("/accounts/password-reset/", {"email": uploader.email})
    assertRedirects(response, "/accounts/password-reset/sent/")
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [uploader.email]
    assert message.subject == "Reset your DataKernelBench password"
    assert f'account "{uploader.username}"' in message.body
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", message.body).group(1)
    form = anonymous.get(link, follow=True)
    assertContains(form, "Choose a new password")
    done = anonymous.post(
        form.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    assertRedirects(done, "/accounts/reset/done/")
    uploader.refresh_from_db()
    assert uploader.check_password(NEW_PASSWORD)
    assertContains(anonymous.get(link, follow=True), "This link does not work")  # used once


def test_a_reset_for_an_unknown_address_says_the_same_and_sends_nothing(anonymous: Client) -> None:
    response = anonymous.post("/accounts/password-reset/", {"email": "nobody@example.org"}, follow=True)
    assertContains(response, "If an account has that address")
    assert mail.outbox == []


def _token(page: Any) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert found is not None
    return found[1]


def _log_in(client: Client, user: User, password: str) -> None:
    token = _token(client.get("/accounts/login/"))
    form = {"username": user.username, "password": password, "csrfmiddlewaretoken": token}
    assert client.post("/accounts/login/", form).status_code == 302


def test_a_form_sent_after_logging_out_and_in_elsewhere_says_it_expired_in_the_sites_page(
    uploader: User, password: str
) -> None:
    client = Client(enforce_csrf_checks=True)
    _log_in(client, uploader, password)
    stale = _token(client.get("/upload/"))
    # Another tab logs out and in again: logging in rotates the CSRF secret the first tab's form was given.
    client.post("/accounts/logout/", {"csrfmiddlewaretoken": _token(client.get("/upload/"))})
    _log_in(client, uploader, password)
    page = client.post("/upload/", {"csrfmiddlewaretoken": stale})
    assert page.status_code == 403
    assertContains(page, "This form has expired", status_code=403)
    assertContains(page, "reload the page and submit the form again", status_code=403)
    assertContains(page, "<title>Form expired · DataKernelBench</title>", status_code=403)
    assertContains(page, f"Log out {uploader.username}", status_code=403)  # the site's navigation
    assert "DEBUG=True" not in page.content.decode()


def test_the_login_page_is_titled_with_the_sites_name_not_its_address(
    anonymous: Client, settings: Any
) -> None:
    page = anonymous.get("/accounts/login/", HTTP_HOST="127.0.0.1:8765")
    assertContains(page, f"<title>Log in · {settings.SITE_NAME}</title>")
