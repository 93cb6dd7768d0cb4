"""Per-user upload limits (ranked and feedback apart) and repeated uploads answered with the earlier set."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from pytest_django.asserts import assertContains, assertRedirects
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from leaderboard.models import EvaluationRun, Submission

pytestmark = pytest.mark.django_db

URL = "/api/submissions/"


def upload(client: APIClient, example_dir: Path, *, notes: str = "first", kind: str = "ranked") -> Any:
    """The example set through the API; different notes make a different set (and archive hash)."""
    manifest = json.loads((example_dir / "manifest.json").read_text()) | {"notes": notes}
    kernel = SimpleUploadedFile("q06.py", (example_dir / "q06.py").read_bytes())
    return client.post(
        URL, {"manifest": json.dumps(manifest), "kernels": kernel, "kind": kind}, format="multipart"
    )


def test_a_user_over_the_hourly_upload_limit_is_answered_429_with_when_to_retry(
    settings, api_client, q6, cpu, example_dir
) -> None:
    settings.DKB_UPLOADS_PER_HOUR = 2
    assert upload(api_client, example_dir, notes="one").status_code == 202
    assert upload(api_client, example_dir, notes="two").status_code == 202
    refused = upload(api_client, example_dir, notes="three")
    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    assert "at most 2 uploads an hour: try again in 60 minutes" in refused.json()["detail"]
    assert 3500 <= int(refused["Retry-After"]) <= 3600
    assert Submission.objects.count() == 2


def test_feedback_uploads_are_limited_apart_from_ranked_ones(
    settings, api_client, q6, cpu, example_dir
) -> None:
    settings.DKB_UPLOADS_PER_HOUR = 1
    settings.DKB_FEEDBACK_PER_HOUR = 2
    assert upload(api_client, example_dir, notes="ranked").status_code == 202
    assert upload(api_client, example_dir, notes="ranked again").status_code == 429
    assert upload(api_client, example_dir, notes="repair 1", kind="feedback").status_code == 202
    assert upload(api_client, example_dir, notes="repair 2", kind="feedback").status_code == 202
    refused = upload(api_client, example_dir, notes="repair 3", kind="feedback")
    assert refused.status_code == 429 and "at most 2 feedback uploads an hour" in refused.json()["detail"]


def test_an_upload_older_than_an_hour_no_longer_counts(settings, api_client, q6, cpu, example_dir) -> None:
    settings.DKB_UPLOADS_PER_HOUR = 1
    assert upload(api_client, example_dir, notes="yesterday").status_code == 202
    Submission.objects.update(created=timezone.now() - datetime.timedelta(minutes=61))
    assert upload(api_client, example_dir, notes="today").status_code == 202


def test_the_limit_is_per_user_and_staff_are_not_limited(
    settings, api_client, rival, admin, q6, cpu, example_dir
) -> None:
    settings.DKB_UPLOADS_PER_HOUR = 1
    assert upload(api_client, example_dir, notes="mine").status_code == 202
    for user in (rival, admin):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        assert upload(client, example_dir, notes=f"{user.username} 1").status_code == 202
    assert upload(client, example_dir, notes="staff 2").status_code == 202


def test_the_web_form_refuses_an_upload_over_the_limit(
    settings, uploader_client, q6, cpu, example_dir
) -> None:
    settings.DKB_UPLOADS_PER_HOUR = 1

    def post(notes: str) -> Any:
        manifest = json.loads((example_dir / "manifest.json").read_text()) | {"notes": notes}
        data = {
            "manifest": SimpleUploadedFile("manifest.json", json.dumps(manifest).encode()),
            "kernels": [SimpleUploadedFile("q06.py", (example_dir / "q06.py").read_bytes())],
        }
        return uploader_client.post("/upload/", data)

    assert post("one").status_code == 302
    assertContains(post("two"), "at most 1 upload an hour: try again in 60 minutes", status_code=429)
    assert Submission.objects.count() == 1


def test_the_same_archive_uploaded_again_is_answered_with_the_earlier_set(
    api_client, q6, cpu, example_dir
) -> None:
    first = upload(api_client, example_dir)
    again = upload(api_client, example_dir)
    assert (first.status_code, first.json()["duplicate"]) == (202, False)
    assert (again.status_code, again.json()["duplicate"]) == (200, True)
    assert again.json()["submission"] == first.json()["submission"]
    assert again.json()["runs"] == first.json()["runs"]
    assert (Submission.objects.count(), EvaluationRun.objects.count()) == (1, 1)


def test_the_same_archive_from_another_user_or_as_feedback_is_a_new_set(
    api_client, rival, q6, cpu, example_dir
) -> None:
    upload(api_client, example_dir)
    assert upload(api_client, example_dir, kind="feedback").status_code == 202
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=rival).key}")
    assert upload(client, example_dir).status_code == 202
    assert Submission.objects.count() == 3


def test_the_web_form_sends_a_repeated_upload_to_the_earlier_set(
    uploader_client: Client, q6, cpu, example_dir
) -> None:
    def post() -> Any:
        data = {
            "manifest": SimpleUploadedFile("manifest.json", (example_dir / "manifest.json").read_bytes()),
            "kernels": [SimpleUploadedFile("q06.py", (example_dir / "q06.py").read_bytes())],
        }
        return uploader_client.post("/upload/", data, follow=True)

    post()
    submission = Submission.objects.get()
    again = post()
    assertRedirects(again, f"/submissions/{submission.pk}/")
    assertContains(again, f"You uploaded this exact set before: here is submission #{submission.pk}.")
    assert Submission.objects.count() == 1
