from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import EvaluationRun, Kernel, Submission

pytestmark = pytest.mark.django_db

URL = "/api/submissions/"


def zip_of(files: dict[str, bytes]) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return SimpleUploadedFile("set.zip", buffer.getvalue(), content_type="application/zip")


def tgz_of(files: dict[str, bytes]) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return SimpleUploadedFile("set.tar.gz", buffer.getvalue(), content_type="application/gzip")


def example_files(example_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in example_dir.iterdir() if p.is_file()}


def assert_nothing_stored() -> None:
    assert Submission.objects.count() == Kernel.objects.count() == EvaluationRun.objects.count() == 0


def test_an_archive_upload_is_accepted_with_its_queued_runs(api_client, q6, cpu, example_dir) -> None:
    response = api_client.post(URL, {"archive": zip_of(example_files(example_dir))}, format="multipart")
    assert response.status_code == 202, response.content
    body = response.json()
    submission = Submission.objects.get()
    run = submission.runs.get()
    assert body["submission"] == submission.pk
    assert body["url"] == f"http://testserver/submissions/{submission.pk}/"
    assert body["runs"] == [
        {
            "id": run.pk,
            "url": f"http://testserver/api/runs/{run.pk}/",
            "status": "queued",
            "hardware": "cpu-test",
            "kind": "ranked",
        }
    ]
    assert len(submission.archive_sha256) == 64


def test_a_feedback_upload_queues_an_unranked_run(api_client, q6, cpu, example_dir) -> None:
    upload = {"archive": zip_of(example_files(example_dir)), "kind": "feedback"}
    response = api_client.post(URL, upload, format="multipart")
    assert response.status_code == 202, response.content
    assert [run["kind"] for run in response.json()["runs"]] == ["feedback"]
    assert Submission.objects.get().runs.get().kind == EvaluationRun.Kind.FEEDBACK


def test_an_unknown_run_kind_is_refused_and_nothing_stored(api_client, q6, cpu, example_dir) -> None:
    upload = {"archive": zip_of(example_files(example_dir)), "kind": "practice"}
    response = api_client.post(URL, upload, format="multipart")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_input" and "kind" in response.json()["detail"]
    assert_nothing_stored()


def test_a_tar_gz_archive_in_one_folder_is_accepted(api_client, q6, cpu, example_dir) -> None:
    files = {f"my-set/{name}": data for name, data in example_files(example_dir).items()}
    response = api_client.post(URL, {"archive": tgz_of(files)}, format="multipart")
    assert response.status_code == 202, response.content


def test_a_manifest_and_kernel_files_are_accepted(api_client, q6, cpu, example_dir) -> None:
    data = {
        "manifest": SimpleUploadedFile("manifest.json", (example_dir / "manifest.json").read_bytes()),
        "kernels": SimpleUploadedFile("q06.py", (example_dir / "q06.py").read_bytes()),
    }
    response = api_client.post(URL, data, format="multipart")
    assert response.status_code == 202, response.content
    assert Submission.objects.get().kernels.get().query == q6


def test_the_manifest_may_be_sent_as_json_text(api_client, q6, cpu, example_dir) -> None:
    data = {
        "manifest": (example_dir / "manifest.json").read_text(),
        "q06": SimpleUploadedFile("q06.py", (example_dir / "q06.py").read_bytes()),
    }
    response = api_client.post(URL, data, format="multipart")
    assert response.status_code == 202, response.content


def test_a_bad_manifest_is_refused_with_its_code_and_nothing_is_stored(
    api_client, q6, cpu, example_dir
) -> None:
    manifest = json.dumps({"model": "X", "language": "fortran", "scope": "full"}).encode()
    files = {"manifest.json": manifest, "q06.py": (example_dir / "q06.py").read_bytes()}
    response = api_client.post(URL, {"archive": zip_of(files)}, format="multipart")
    assert response.status_code == 400
    assert response.json()["code"] == "manifest_language"
    assert "fortran" in response.json()["detail"]
    assert_nothing_stored()


def test_an_archive_with_a_path_outside_the_set_is_refused(api_client, q6, cpu, example_dir) -> None:
    files = {**example_files(example_dir), "../../etc/cron.d/evil": b"* * * * * root true"}
    response = api_client.post(URL, {"archive": tgz_of(files)}, format="multipart")
    assert response.status_code == 400
    assert response.json()["code"] == "archive_path"
    assert_nothing_stored()


def test_a_zip_bomb_is_refused_by_its_directory_and_nothing_is_stored(
    api_client, q6, cpu, example_dir
) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in example_files(example_dir).items():
            archive.writestr(name, data)
        archive.writestr("q07.py", bytes(50 * 1024 * 1024))  # 50 MB of zeros, about 50 KB packed
    bomb = SimpleUploadedFile("set.zip", buffer.getvalue(), content_type="application/zip")
    response = api_client.post(URL, {"archive": bomb}, format="multipart")
    assert response.status_code == 400
    assert response.json()["code"] == "kernel_too_large" and "q07.py" in response.json()["detail"]
    assert_nothing_stored()


def test_a_kernel_that_is_not_python_is_refused_with_its_line(api_client, q6, cpu, example_dir) -> None:
    files = {"manifest.json": (example_dir / "manifest.json").read_bytes(), "q06.py": b"def run_query(:\n"}
    response = api_client.post(URL, {"archive": zip_of(files)}, format="multipart")
    assert response.status_code == 400
    assert response.json()["code"] == "kernel_syntax"
    assert "line 1" in response.json()["detail"]
    assert_nothing_stored()


def test_a_file_that_is_not_part_of_the_format_is_refused(api_client, q6, cpu, example_dir) -> None:
    data = {
        "manifest": SimpleUploadedFile("manifest.json", (example_dir / "manifest.json").read_bytes()),
        "kernels": [
            SimpleUploadedFile("q06.py", (example_dir / "q06.py").read_bytes()),
            SimpleUploadedFile("helpers.py", b"x = 1\n"),
        ],
    }
    response = api_client.post(URL, data, format="multipart")
    assert response.status_code == 400
    assert response.json()["code"] == "unexpected_file"
    assert_nothing_stored()


def test_an_archive_and_loose_files_together_are_ambiguous(api_client, q6, cpu, example_dir) -> None:
    data = {
        "archive": zip_of(example_files(example_dir)),
        "kernels": SimpleUploadedFile("q06.py", (example_dir / "q06.py").read_bytes()),
    }
    response = api_client.post(URL, data, format="multipart")
    assert response.status_code == 400
    assert response.json()["code"] == "upload_ambiguous"
    assert_nothing_stored()


def test_an_empty_upload_says_what_to_send(api_client, q6, cpu) -> None:
    response = api_client.post(URL, {}, format="multipart")
    assert response.status_code == 400
    assert response.json()["code"] == "upload_empty"


def test_an_unknown_archive_type_is_refused(api_client, q6, cpu) -> None:
    upload = SimpleUploadedFile("set.rar", b"Rar!\x1a\x07\x00")
    response = api_client.post(URL, {"archive": upload}, format="multipart")
    assert response.status_code == 400
    assert response.json()["code"] == "archive_type"


def test_an_anonymous_upload_is_refused(client, q6, cpu, example_dir) -> None:
    response = client.post(URL, {"archive": zip_of(example_files(example_dir))})
    assert response.status_code in (401, 403)
    assert_nothing_stored()


def test_a_wrong_token_is_refused(client, q6, cpu, example_dir) -> None:
    response = client.post(
        URL, {"archive": zip_of(example_files(example_dir))}, HTTP_AUTHORIZATION="Token not-a-real-token"
    )
    assert response.status_code == 401
    assert_nothing_stored()


def test_a_run_shows_its_status_and_then_its_report(client, submit, make_report) -> None:
    from leaderboard import services

    run = submit().runs.get()
    body = client.get(f"/api/runs/{run.pk}/").json()
    assert (body["status"], body["final"], body["report"]) == ("queued", False, None)
    services.evaluation_record(run=run, report=make_report(kernel_ms=0.5))
    body = client.get(f"/api/runs/{run.pk}/").json()
    assert (body["status"], body["final"], body["overall_speedup"], body["hardware"]) == (
        "succeeded",
        True,
        4.0,
        "cpu-test",
    )
    assert body["report"]["queries"][0]["query"] == 6
    assert body["timing"] == {
        "ranked": False,
        "label": "correctness only",
        "reason": "correctness only: timed on a CPU",
    }


def test_a_running_run_says_where_it_is_and_a_stable_one_that_it_is_ranked(
    client, submit, timed_report
) -> None:
    from leaderboard import services

    run = submit().runs.get()
    services.evaluation_claim(run_id=run.pk, backend="bubblewrap")
    event = {"done": 1, "total": 2, "query": 6, "phase": "started", "status": ""}
    services.evaluation_progress(run=run, progress=event)
    assert client.get(f"/api/runs/{run.pk}/").json()["progress"] == event
    services.evaluation_record(run=run, report=timed_report())
    body = client.get(f"/api/runs/{run.pk}/").json()
    assert body["timing"] == {"ranked": True, "label": "", "reason": ""}
    [summary] = client.get(f"/api/submissions/{run.submission_id}/").json()["runs"]
    assert summary["ranked"] is True


def test_a_submission_lists_its_queries_and_runs(client, submit) -> None:
    submission = submit()
    body = client.get(f"/api/submissions/{submission.pk}/").json()
    assert body["model"] == "DataKernelBench example"
    assert body["queries"] == [6]
    assert [run["status"] for run in body["runs"]] == ["queued"]


def test_a_private_submission_and_its_runs_are_served_to_its_uploader_only(
    client, api_client, submit
) -> None:
    submission = submit(published=False)
    run = submission.runs.get()
    assert client.get(f"/api/submissions/{submission.pk}/").status_code == 404
    assert client.get(f"/api/runs/{run.pk}/").status_code == 404
    body = api_client.get(f"/api/submissions/{submission.pk}/").json()
    assert body["published_at"] is None
    assert api_client.get(f"/api/runs/{run.pk}/").status_code == 200


def test_a_hidden_submission_is_served_with_the_reason_it_was_hidden(client, submit) -> None:
    from leaderboard import services

    submission = services.submission_hide(submission=submit(), reason="timed a cached answer")
    body = client.get(f"/api/submissions/{submission.pk}/").json()
    assert (body["hidden"], body["hidden_reason"]) == (True, "timed a cached answer")


def test_a_missing_run_is_a_404(client, db) -> None:
    assert client.get("/api/runs/12345/").status_code == 404
