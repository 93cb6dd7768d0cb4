"""Exports through the API: the leaderboard and a run's results as JSON and CSV, kernel source as files."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from evaluator.kernelset import kernel_set_from_archive
from leaderboard import services
from leaderboard.models import EvaluationRun

pytestmark = pytest.mark.django_db


def csv_rows(response: Any) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.fixture
def ranked(
    submit: Callable[..., Any], make_report: Callable[..., dict[str, Any]], cpu: Any, gpu: Any
) -> Callable[..., EvaluationRun]:
    """A published set's GPU run that succeeded with a ranked (GPU) report: kernel 2 ms / `kernel_ms`."""

    def make(*, model: str, kernel_ms: float, scope: str = "full", published: bool = True) -> EvaluationRun:
        run = submit(model=model, scope=scope, published=published).runs.get(hardware=gpu)
        return services.evaluation_record(run=run, report=make_report(device="cuda", kernel_ms=kernel_ms))

    return make


def test_the_leaderboard_export_has_the_home_pages_rows_best_first(
    ranked: Callable[..., EvaluationRun], anonymous: Client
) -> None:
    slow = ranked(model="Slow LLM", kernel_ms=1.0)
    fast = ranked(model="Fast LLM", kernel_ms=0.5)
    ranked(model="Draft LLM", kernel_ms=0.1, published=False)
    body = anonymous.get("/api/leaderboard/").json()
    assert [(row["rank"], row["model"], row["run"]) for row in body["rows"]] == [
        (1, "Fast LLM", fast.pk),
        (2, "Slow LLM", slow.pk),
    ]
    assert [run.pk for run in EvaluationRun.objects.ranked()] == [fast.pk, slow.pk]
    row = body["rows"][0]
    assert row["overall_speedup"] == pytest.approx(4.0)
    assert row["hardware"] == "cuda-h200"
    assert row["url"] == f"http://testserver/submissions/{fast.submission_id}/"
    assert set(row) == set(body["columns"])
    home = anonymous.get("/").content.decode()
    assert "Fast LLM" in home and "Draft LLM" not in home


def test_the_leaderboard_export_as_csv_is_a_file_with_a_header_row(
    ranked: Callable[..., EvaluationRun], anonymous: Client
) -> None:
    ranked(model='Fast, "quoted" LLM', kernel_ms=0.5)
    response = anonymous.get("/api/leaderboard/?format=csv&hardware=cuda-h200&scope=full")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == 'attachment; filename="leaderboard-cuda-h200-full.csv"'
    (row,) = csv_rows(response)
    assert (row["rank"], row["model"], row["overall_speedup"]) == ("1", 'Fast, "quoted" LLM', "4.0")
    assert row["mean_roofline"] == "0.42"
    by_accept = anonymous.get("/api/leaderboard/", HTTP_ACCEPT="text/csv")
    assert by_accept.content == anonymous.get("/api/leaderboard/?format=csv").content


def test_the_leaderboard_export_is_per_hardware_and_scope(
    ranked: Callable[..., EvaluationRun], anonymous: Client, cpu: Any
) -> None:
    ranked(model="Full LLM", kernel_ms=1.0)
    core = ranked(model="Core LLM", kernel_ms=1.0, scope="core")
    assert [row["run"] for row in anonymous.get("/api/leaderboard/?scope=core").json()["rows"]] == [core.pk]
    assert anonymous.get("/api/leaderboard/?hardware=cpu-test").json()["rows"] == []  # CPU: never ranked
    empty = anonymous.get("/api/leaderboard/?hardware=cpu-test&format=csv")
    assert empty.content.decode().startswith("rank,submission,url,model,")  # the header, even with no rows


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("hardware=tpu", "unknown_hardware"),
        ("scope=most", "unknown_scope"),
        ("scope=most&format=csv", "unknown_scope"),
    ],
)
def test_a_bad_leaderboard_filter_is_a_400_in_json_whatever_the_format(
    anonymous: Client, cpu: Any, query: str, code: str
) -> None:
    response = anonymous.get(f"/api/leaderboard/?{query}")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == code


def test_a_runs_results_export_in_json_and_csv(
    evaluated: Callable[..., Any], anonymous: Client, real_report: Callable[[], dict[str, Any]]
) -> None:
    run = evaluated(model="LLM", status="wrong_answer", reason="row 3: 1.5 != 1.25")
    (q6,) = (q for q in real_report()["queries"] if q["query"] == 6)
    body = anonymous.get(f"/api/runs/{run.pk}/results/").json()
    assert (body["run"], body["submission"], body["hardware"], body["status"]) == (
        run.pk,
        run.submission_id,
        "cpu-test",
        "succeeded",
    )
    assert body["rows"] == [
        {
            "query": 6, "status": "wrong_answer", "reason": "row 3: 1.5 != 1.25", "baseline_ms": 2.0,
            "kernel_ms": None, "speedup": None, "roofline_fraction": None, "kernel_time_share": None,
            "launches": None, "trials": q6["trials"], "baseline_mode": "eager", "flagged": "", "unstable": "",
        }
    ]  # fmt: skip
    response = anonymous.get(f"/api/runs/{run.pk}/results/?format=csv")
    assert response["Content-Disposition"] == f'attachment; filename="run-{run.pk}.csv"'
    (row,) = csv_rows(response)
    assert (row["query"], row["status"], row["speedup"], row["reason"]) == (
        "6",
        "wrong_answer",
        "",
        "row 3: 1.5 != 1.25",
    )


def test_a_queued_runs_results_are_an_empty_table(submit: Callable[..., Any], anonymous: Client) -> None:
    run = submit().runs.get()
    body = anonymous.get(f"/api/runs/{run.pk}/results/").json()
    assert (body["status"], body["rows"]) == ("queued", [])
    assert anonymous.get("/api/runs/999999/results/?format=csv").status_code == 404


def test_a_kernel_downloads_as_python_source(
    submit: Callable[..., Any], anonymous: Client, kernel_set: Any
) -> None:
    submission = submit()
    response = anonymous.get(f"/api/submissions/{submission.pk}/kernels/q06.py")
    assert response["Content-Type"] == "text/x-python; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="q06.py"'
    assert response.content.decode() == kernel_set.kernels[6]
    assert anonymous.get(f"/api/submissions/{submission.pk}/kernels/q07.py").status_code == 404


def test_the_whole_set_downloads_as_a_zip_that_uploads_again_as_the_same_set(
    submit: Callable[..., Any], anonymous: Client, kernel_set: Any
) -> None:
    submission = submit()
    response = anonymous.get(f"/api/submissions/{submission.pk}/kernels.zip")
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == f'attachment; filename="submission-{submission.pk}.zip"'
    assert kernel_set_from_archive(response.content, "set.zip") == kernel_set
