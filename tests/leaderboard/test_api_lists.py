"""The API's read side: hardware, queries, submissions, runs and results as paged, filtered lists."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from leaderboard import services
from leaderboard.models import EvaluationRun, Submission

pytestmark = pytest.mark.django_db


def client_of(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def ids(response: Any) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_hardware_and_queries_are_listed_and_found_by_slug_and_number(
    anonymous: Any, cpu: Any, gpu: Any, q6: Any
) -> None:
    body = anonymous.get("/api/hardware/").json()
    assert [row["slug"] for row in body["results"]] == ["cuda-h200", "cpu-test"]  # by name
    assert "queue" not in body["results"][0]  # where workers listen is nobody's business
    assert anonymous.get("/api/hardware/cuda-h200/").json()["peak_bandwidth_gbs"] == 4800.0
    assert anonymous.get("/api/hardware/tpu/").status_code == 404
    queries = anonymous.get("/api/queries/").json()
    assert queries["count"] == 1
    assert queries["results"][0]["url"] == "http://testserver/api/queries/6/"
    detail = anonymous.get("/api/queries/6/").json()
    assert "l_discount" in detail["sql"].lower()
    assert detail["torchplan_source"]


def test_the_submission_list_shows_published_sets_and_your_own_private_ones(
    submit: Callable[..., Any], uploader: User, rival: User, admin: User
) -> None:
    public = submit(model="Public LLM")
    private = submit(model="Private LLM", published=False)
    hidden = submit(model="Hidden LLM")
    services.submission_hide(submission=hidden, reason="copied")
    theirs = submit(model="Rival LLM", user=rival, published=False)
    assert ids(client_of(None).get("/api/submissions/")) == [public.pk]
    assert ids(client_of(uploader).get("/api/submissions/")) == [hidden.pk, private.pk, public.pk]
    assert ids(client_of(rival).get("/api/submissions/")) == [theirs.pk, public.pk]
    assert ids(client_of(admin).get("/api/submissions/")) == [theirs.pk, hidden.pk, private.pk, public.pk]


def test_the_submission_list_filters_by_model_language_scope_uploader_hardware_and_publication(
    submit: Callable[..., Any], uploader: User, rival: User, gpu: Any, cpu: Any
) -> None:
    gpu.active = False  # uploads go to the CPU only; one set is sent to the GPU by hand
    gpu.save()
    full = submit(model="GPT-4o")
    core = submit(model="Claude", scope="core")
    draft = submit(model="Claude", published=False)
    services.evaluation_enqueue(submission=core, hardware=gpu, enqueue=False)
    mine = client_of(uploader)
    assert ids(mine.get("/api/submissions/?model=gpt-4o")) == [full.pk]
    assert ids(mine.get("/api/submissions/?scope=core")) == [core.pk]
    assert ids(mine.get("/api/submissions/?language=triton&model=claude")) == [draft.pk, core.pk]
    assert ids(mine.get("/api/submissions/?language=cuda")) == []
    assert ids(mine.get("/api/submissions/?hardware=cuda-h200")) == [core.pk]
    # A feedback run is its uploader's: the filter does not tell others it exists.
    services.evaluation_enqueue(
        submission=full, hardware=gpu, kind=EvaluationRun.Kind.FEEDBACK, enqueue=False
    )
    assert ids(mine.get("/api/submissions/?hardware=cuda-h200")) == [core.pk, full.pk]
    assert ids(client_of(rival).get("/api/submissions/?hardware=cuda-h200")) == [core.pk]
    assert ids(mine.get("/api/submissions/?published=false")) == [draft.pk]
    assert ids(mine.get("/api/submissions/?uploader=grace")) == []
    row = mine.get("/api/submissions/?model=gpt-4o").json()["results"][0]
    assert (row["model"], row["queries"], row["uploader"]) == ("GPT-4o", [6], "ada")
    assert row["api_url"] == f"http://testserver/api/submissions/{full.pk}/"


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/submissions/?scope=everything", "scope"),
        ("/api/submissions/?language=fortran", "language"),
        ("/api/runs/?submission=first", "submission"),
        ("/api/results/?status=fine", "status"),
    ],
)
def test_a_bad_filter_value_is_a_400_with_a_stable_code(
    anonymous: Any, submit: Callable[..., Any], path: str, field: str
) -> None:
    response = anonymous.get(path)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_filter"
    assert body["detail"].startswith(f"{field}:")


def test_lists_are_paged_with_next_links_and_a_bounded_page_size(
    submit: Callable[..., Any], anonymous: Any
) -> None:
    sets = [submit(model=f"LLM {i}") for i in range(5)]
    first = anonymous.get("/api/submissions/?page_size=2").json()
    assert first["count"] == 5
    assert [row["id"] for row in first["results"]] == [sets[4].pk, sets[3].pk]
    assert first["next"] == "http://testserver/api/submissions/?page=2&page_size=2"
    last = anonymous.get("/api/submissions/?page=3&page_size=2").json()
    assert [row["id"] for row in last["results"]] == [sets[0].pk]
    assert last["next"] is None
    assert anonymous.get("/api/submissions/?page=4&page_size=2").status_code == 404
    assert (
        len(anonymous.get("/api/submissions/?page_size=100000").json()["results"]) == 5
    )  # capped, not refused


def test_the_run_list_hides_private_sets_and_feedback_runs_and_filters(
    evaluated: Callable[..., Any],
    make_report: Callable[..., dict[str, Any]],
    uploader: User,
    rival: User,
    cpu: Any,
) -> None:
    public = evaluated(model="Public LLM")
    private = evaluated(model="Private LLM", published=False)
    feedback = services.evaluation_enqueue(
        submission=public.submission, hardware=cpu, kind=EvaluationRun.Kind.FEEDBACK, enqueue=False
    )
    assert ids(client_of(None).get("/api/runs/")) == [public.pk]
    assert ids(client_of(rival).get("/api/runs/")) == [public.pk]
    mine = client_of(uploader)
    assert ids(mine.get("/api/runs/")) == [feedback.pk, private.pk, public.pk]
    assert ids(mine.get("/api/runs/?kind=feedback")) == [feedback.pk]
    assert ids(mine.get("/api/runs/?status=succeeded&model=private-llm")) == [private.pk]
    assert ids(mine.get(f"/api/runs/?submission={public.submission_id}&hardware=cpu-test")) == [
        feedback.pk,
        public.pk,
    ]
    assert ids(mine.get("/api/runs/?scope=core")) == []
    row = mine.get(f"/api/runs/?submission={private.submission_id}").json()["results"][0]
    assert "report" not in row  # the detail has it
    assert row["url"] == f"http://testserver/api/runs/{private.pk}/"
    assert row["overall_speedup"] == pytest.approx(2.0)
    assert row["timing"] == {"ranked": False, "label": "correctness only", "reason": row["timing"]["reason"]}
    assert mine.get("/api/runs/?status=lost").json()["code"] == "invalid_filter"


def test_the_result_list_shows_results_of_visible_runs_only_and_filters(
    evaluated: Callable[..., Any], rival: User, uploader: User
) -> None:
    public = evaluated(model="Public LLM")
    private = evaluated(model="Private LLM", published=False, status="wrong_answer", reason="off by one")
    anonymous_rows = client_of(None).get("/api/results/").json()["results"]
    assert [row["run"] for row in anonymous_rows] == [public.pk]
    assert client_of(rival).get("/api/results/?status=wrong_answer").json()["count"] == 0
    rows = client_of(uploader).get("/api/results/?status=wrong_answer&query=6").json()["results"]
    assert [(row["run"], row["submission"], row["query"], row["reason"]) for row in rows] == [
        (private.pk, private.submission_id, 6, "off by one")
    ]
    assert client_of(uploader).get("/api/results/?query=7").json()["count"] == 0


def test_the_submissions_url_still_takes_uploads_and_only_those_need_a_token(
    anonymous: Any, q6: Any, cpu: Any
) -> None:
    assert anonymous.get("/api/submissions/").status_code == 200
    response = anonymous.post("/api/submissions/", {})
    assert response.status_code == 401
    assert Submission.objects.count() == 0


def test_a_run_lists_timing_is_the_detail_s_without_reading_whole_reports(
    submit: Callable[..., Any],
    make_report: Callable[..., dict[str, Any]],
    timed_report: Callable[..., dict[str, Any]],
    uploader: User,
    cpu: Any,
    gpu: Any,
) -> None:
    queued = submit(model="Queued LLM").runs.get(hardware=gpu)
    cpu_run = services.evaluation_record(run=queued.submission.runs.get(hardware=cpu), report=make_report())
    unstable = services.evaluation_record(
        run=submit(model="Unsure LLM").runs.get(hardware=gpu), report=timed_report(kernel_stderr_pct=5.0)
    )
    stable = services.evaluation_record(
        run=submit(model="Sure LLM").runs.get(hardware=gpu), report=timed_report()
    )
    client = client_of(uploader)
    rows = {row["id"]: row["timing"] for row in client.get("/api/runs/?page_size=200").json()["results"]}
    for run in (queued, cpu_run, unstable, stable):
        assert rows[run.pk] == client.get(f"/api/runs/{run.pk}/").json()["timing"], run
    assert rows[stable.pk]["ranked"] and not rows[unstable.pk]["ranked"]
    assert rows[unstable.pk]["label"] == "unstable timing"
    assert rows[cpu_run.pk]["label"] == "correctness only"


@pytest.mark.parametrize("path", ["/api/submissions/", "/api/runs/", "/api/results/", "/api/leaderboard/"])
def test_a_lists_queries_do_not_grow_with_its_rows(
    path: str,
    submit: Callable[..., Any],
    timed_report: Callable[..., dict[str, Any]],
    uploader: User,
    gpu: Any,
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def evaluate(count: int) -> None:
        for i in range(count):
            run = submit(model=f"LLM {i} of {count}").runs.get(hardware=gpu)
            services.evaluation_record(run=run, report=timed_report())

    client = client_of(uploader)
    evaluate(1)
    with CaptureQueriesContext(connection) as one:
        assert client.get(path).status_code == 200
    evaluate(4)
    with CaptureQueriesContext(connection) as five:
        body = client.get(path).json()
    assert len(body.get("results", body.get("rows"))) >= 5
    assert len(five) == len(one)
