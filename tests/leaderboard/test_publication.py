"""Publication: a set is its uploader's (and staff's) until the uploader publishes it; feedback runs are
never public. Every page and endpoint of leaderboard/urls.py is walked by anonymous, owner, rival and staff.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from pytest_django.asserts import assertContains, assertNotContains

from evaluator.errors import SubmissionError
from leaderboard import services
from leaderboard.models import EvaluationRun, Submission

pytestmark = pytest.mark.django_db

PRIVATE = "Private LLM"
PUBLIC = "Public LLM"


@dataclass
class Cast:
    private: Submission
    private_run: EvaluationRun
    public: Submission
    public_run: EvaluationRun
    feedback_run: EvaluationRun


@pytest.fixture
def cast(submit: Callable[..., Any], make_report: Callable[..., dict[str, Any]], cpu: Any) -> Cast:
    """The uploader's two sets, each with a ranked run that succeeded (GPU-like, so it would rank): one
    private, one published with a feedback run beside its ranked one (a speedup of 8x, shown nowhere)."""
    private = submit(model=PRIVATE, published=False)
    private_run = services.evaluation_record(run=private.runs.get(), report=make_report(device="cuda"))
    public = submit(model=PUBLIC)
    public_run = services.evaluation_record(run=public.runs.get(), report=make_report(device="cuda"))
    feedback = services.evaluation_enqueue(
        submission=public, hardware=cpu, kind=EvaluationRun.Kind.FEEDBACK, enqueue=False
    )
    feedback_run = services.evaluation_record(run=feedback, report=make_report(device="cuda", kernel_ms=0.25))
    return Cast(private, private_run, public, public_run, feedback_run)


@pytest.fixture
def as_actor(uploader: User, rival: User, admin: User) -> Callable[[str], Client]:
    users = {"anonymous": None, "owner": uploader, "rival": rival, "staff": admin}

    def client(actor: str) -> Client:
        browser = Client()
        if users[actor] is not None:
            browser.force_login(users[actor])
        return browser

    return client


# (url name, label, method, path from the cast, expected status for anonymous, owner, rival, staff).
# Private sets answer 404 to those who may not see them (their existence is not told); a visible set that
# only its uploader may publish answers 403. Pages that need a login redirect to it (302); the API says 401.
MATRIX: list[tuple[str, str, str, Callable[[Cast], str], tuple[int, int, int, int]]] = [
    ("index", "home", "get", lambda c: "/", (200, 200, 200, 200)),
    ("ranking_chart", "chart", "get", lambda c: "/charts/ranking.svg", (200, 200, 200, 200)),
    (
        "submission_detail",
        "private set",
        "get",
        lambda c: f"/submissions/{c.private.pk}/",
        (404, 200, 404, 200),
    ),
    (
        "submission_detail",
        "public set",
        "get",
        lambda c: f"/submissions/{c.public.pk}/",
        (200, 200, 200, 200),
    ),
    (
        "submission_detail",
        "feedback run",
        "get",
        lambda c: f"/submissions/{c.public.pk}/?run={c.feedback_run.pk}",
        (404, 200, 404, 200),
    ),
    (
        "kernel_detail",
        "private set",
        "get",
        lambda c: f"/submissions/{c.private.pk}/kernels/6/",
        (404, 200, 404, 200),
    ),
    (
        "kernel_detail",
        "public set",
        "get",
        lambda c: f"/submissions/{c.public.pk}/kernels/6/",
        (200, 200, 200, 200),
    ),
    (
        "kernel_detail",
        "feedback run",
        "get",
        lambda c: f"/submissions/{c.public.pk}/kernels/6/?run={c.feedback_run.pk}",
        (404, 200, 404, 200),
    ),
    (
        "kernel_raw",
        "private set",
        "get",
        lambda c: f"/submissions/{c.private.pk}/kernels/6/raw/",
        (404, 200, 404, 200),
    ),
    ("kernel_raw", "public set", "get", lambda c: f"/submissions/{c.public.pk}/kernels/6/raw/", (200,) * 4),
    (
        "submission_publish",
        "private set",
        "post",
        lambda c: f"/submissions/{c.private.pk}/publish/",
        (302, 302, 404, 403),
    ),
    (
        "submission_publish",
        "public set",
        "post",
        lambda c: f"/submissions/{c.public.pk}/publish/",
        (302, 302, 403, 403),
    ),
    (
        "compare",
        "public sets",
        "get",
        lambda c: f"/compare/?a={c.public.pk}&b={c.public.pk}",
        (200, 200, 200, 200),
    ),
    (
        "compare",
        "a private set",
        "get",
        lambda c: f"/compare/?a={c.public.pk}&b={c.private.pk}",
        (404, 200, 404, 200),
    ),
    ("matrix", "matrix", "get", lambda c: "/matrix/", (200, 200, 200, 200)),
    ("query_list", "queries", "get", lambda c: "/queries/", (200, 200, 200, 200)),
    ("query_detail", "Q6", "get", lambda c: "/queries/6/", (200, 200, 200, 200)),
    ("query_chart", "Q6", "get", lambda c: "/queries/6/chart.svg", (200, 200, 200, 200)),
    ("upload", "form", "get", lambda c: "/upload/", (302, 200, 200, 200)),
    ("token_create", "new token", "post", lambda c: "/upload/token/", (302, 302, 302, 302)),
    ("token_revoke", "revoke token", "post", lambda c: "/upload/token/revoke/", (302, 302, 302, 302)),
    ("login", "form", "get", lambda c: "/accounts/login/", (200, 302, 302, 302)),
    ("logout", "log out", "post", lambda c: "/accounts/logout/", (302, 302, 302, 302)),
    ("signup", "form", "get", lambda c: "/accounts/signup/", (200, 302, 302, 302)),
    ("password_reset", "form", "get", lambda c: "/accounts/password-reset/", (200,) * 4),
    ("password_reset_done", "sent", "get", lambda c: "/accounts/password-reset/sent/", (200,) * 4),
    ("password_reset_confirm", "bad link", "get", lambda c: "/accounts/reset/MQ/bad-token/", (200,) * 4),
    ("password_reset_complete", "done", "get", lambda c: "/accounts/reset/done/", (200,) * 4),
    ("api_submission_create", "empty upload", "post", lambda c: "/api/submissions/", (401, 400, 400, 400)),
    (
        "api_submission_detail",
        "private set",
        "get",
        lambda c: f"/api/submissions/{c.private.pk}/",
        (404, 200, 404, 200),
    ),
    (
        "api_submission_detail",
        "public set",
        "get",
        lambda c: f"/api/submissions/{c.public.pk}/",
        (200, 200, 200, 200),
    ),
    (
        "api_submission_publish",
        "private set",
        "post",
        lambda c: f"/api/submissions/{c.private.pk}/publish/",
        (401, 200, 404, 403),
    ),
    (
        "api_submission_publish",
        "public set",
        "post",
        lambda c: f"/api/submissions/{c.public.pk}/publish/",
        (401, 200, 403, 403),
    ),
    (
        "api_run_detail",
        "private run",
        "get",
        lambda c: f"/api/runs/{c.private_run.pk}/",
        (404, 200, 404, 200),
    ),
    ("api_run_detail", "public run", "get", lambda c: f"/api/runs/{c.public_run.pk}/", (200, 200, 200, 200)),
    (
        "api_run_detail",
        "feedback run",
        "get",
        lambda c: f"/api/runs/{c.feedback_run.pk}/",
        (404, 200, 404, 200),
    ),
    ("api_submission_create", "list", "get", lambda c: "/api/submissions/", (200, 200, 200, 200)),
    ("api_schema", "OpenAPI", "get", lambda c: "/api/schema/", (200, 200, 200, 200)),
    ("api_docs", "Swagger UI", "get", lambda c: "/api/docs/", (200, 200, 200, 200)),
    ("api_hardware_list", "hardware", "get", lambda c: "/api/hardware/", (200, 200, 200, 200)),
    ("api_hardware_detail", "CPU", "get", lambda c: "/api/hardware/cpu-test/", (200, 200, 200, 200)),
    ("api_query_list", "queries", "get", lambda c: "/api/queries/", (200, 200, 200, 200)),
    ("api_query_detail", "Q6", "get", lambda c: "/api/queries/6/", (200, 200, 200, 200)),
    ("api_run_list", "runs", "get", lambda c: "/api/runs/", (200, 200, 200, 200)),
    ("api_result_list", "results", "get", lambda c: "/api/results/", (200, 200, 200, 200)),
    ("api_leaderboard", "JSON", "get", lambda c: "/api/leaderboard/", (200, 200, 200, 200)),
    ("api_leaderboard", "CSV", "get", lambda c: "/api/leaderboard/?format=csv", (200, 200, 200, 200)),
    (
        "api_run_results",
        "private run",
        "get",
        lambda c: f"/api/runs/{c.private_run.pk}/results/?format=csv",
        (404, 200, 404, 200),
    ),
    (
        "api_run_results",
        "public run",
        "get",
        lambda c: f"/api/runs/{c.public_run.pk}/results/",
        (200, 200, 200, 200),
    ),
    (
        "api_run_results",
        "feedback run",
        "get",
        lambda c: f"/api/runs/{c.feedback_run.pk}/results/",
        (404, 200, 404, 200),
    ),
    (
        "api_kernel_source",
        "private set",
        "get",
        lambda c: f"/api/submissions/{c.private.pk}/kernels/q06.py",
        (404, 200, 404, 200),
    ),
    (
        "api_kernel_source",
        "public set",
        "get",
        lambda c: f"/api/submissions/{c.public.pk}/kernels/q06.py",
        (200, 200, 200, 200),
    ),
    (
        "api_kernel_set_archive",
        "private set",
        "get",
        lambda c: f"/api/submissions/{c.private.pk}/kernels.zip",
        (404, 200, 404, 200),
    ),
    (
        "api_kernel_set_archive",
        "public set",
        "get",
        lambda c: f"/api/submissions/{c.public.pk}/kernels.zip",
        (200, 200, 200, 200),
    ),
    ("admin:index", "admin", "get", lambda c: "/admin/", (302, 302, 302, 200)),
]
ACTORS = ("anonymous", "owner", "rival", "staff")
LISTINGS = {"index", "ranking_chart", "matrix", "query_list", "query_detail", "query_chart"}
# The API's lists and exports: those who are not the uploader (or staff) see no private set in them and no
# feedback run's speedup (8.0 in JSON, where the pages write 8.00x); the leaderboard shows neither to anyone.
API_LISTINGS = {"api_submission_create", "api_run_list", "api_result_list", "api_leaderboard"}
FEEDBACK_SPEEDUP = re.compile(rb"(?<![\d.])8\.0(?![\d])")
# As the pages write it; not after a digit or a dot, so a time's "08.004" or a version's ".8.00" is not it.
PAGE_SPEEDUP = re.compile(r"(?<![\d.])8\.00(?!\d)")


def _values(data: Any) -> Iterator[Any]:
    """Every scalar in parsed JSON, however deeply nested."""
    if isinstance(data, dict):
        for value in data.values():
            yield from _values(value)
    elif isinstance(data, list):
        for value in data:
            yield from _values(value)
    else:
        yield data


def shows_feedback_speedup(response: Any) -> bool:
    """Whether the feedback run's 8x is in the answer: in JSON, a float field of 8.0 or a string that
    writes it (the raw text also matches a timestamp such as "...T22:48:08.004Z"); elsewhere, 8.00."""
    if response.get("Content-Type", "").startswith("application/json"):
        return any(
            (isinstance(value, float) and value == 8.0)
            or (isinstance(value, str) and PAGE_SPEEDUP.search(value) is not None)
            for value in _values(response.json())
        )
    return PAGE_SPEEDUP.search(response.content.decode(errors="replace")) is not None


def _url_names(patterns: list[URLPattern | URLResolver], namespace: str = "") -> set[str]:
    names = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if pattern.namespace == "admin":
                names.add("admin:index")  # the admin checks staff itself, page by page
            else:
                names |= _url_names(pattern.url_patterns, namespace)
        elif pattern.name:
            names.add(namespace + pattern.name)
    return names


def test_the_matrix_covers_every_page_and_endpoint_of_the_site() -> None:
    assert _url_names(get_resolver().url_patterns) == {row[0] for row in MATRIX}


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize(
    ("name", "method", "path", "expected"),
    [
        pytest.param(name, method, path, expected, id=f"{name}-{label}")
        for name, label, method, path, expected in MATRIX
    ],
)
def test_each_page_and_endpoint_answers_each_actor_as_publication_allows(
    cast: Cast,
    as_actor: Callable[[str], Client],
    actor: str,
    name: str,
    method: str,
    path: Any,
    expected: Any,
) -> None:
    response = getattr(as_actor(actor), method)(path(cast))
    assert response.status_code == expected[ACTORS.index(actor)], response.content[:500]
    if name in LISTINGS:
        # Listings, rankings and charts show published sets only, to everyone, staff and owner included.
        assert PRIVATE.encode() not in response.content
        assert not shows_feedback_speedup(response)
    if response.status_code == 200 and actor in ("anonymous", "rival"):
        assert not shows_feedback_speedup(response)  # nor anywhere else, to those who are not the uploader
    if name in API_LISTINGS and (actor in ("anonymous", "rival") or name == "api_leaderboard"):
        assert PRIVATE.encode() not in response.content
        assert not FEEDBACK_SPEEDUP.search(response.content)
    if name == "api_run_list" and actor == "owner":
        assert FEEDBACK_SPEEDUP.search(response.content)  # where it may be shown, the pattern finds it


def test_the_speedup_check_finds_the_feedback_run_where_its_uploader_sees_it_and_not_in_a_timestamp(
    cast: Cast, as_actor: Callable[[str], Client]
) -> None:
    owner = as_actor("owner")
    assert shows_feedback_speedup(owner.get(f"/api/runs/{cast.feedback_run.pk}/"))
    assert shows_feedback_speedup(owner.get(f"/submissions/{cast.public.pk}/?run={cast.feedback_run.pk}"))
    assert not shows_feedback_speedup(owner.get(f"/api/runs/{cast.public_run.pk}/"))
    stamped = owner.get(f"/api/runs/{cast.public_run.pk}/")  # read before its JSON is (it is cached)
    stamped.content = stamped.content.replace(b'"id":', b'"at":"2026-12-03T22:48:08.004Z","id":', 1)
    assert b"8.00" in stamped.content and not shows_feedback_speedup(stamped)


@pytest.mark.parametrize("actor", ACTORS)
def test_a_published_sets_page_and_api_list_its_feedback_runs_to_its_uploader_and_staff_only(
    cast: Cast, as_actor: Callable[[str], Client], actor: str
) -> None:
    sees_feedback = actor in ("owner", "staff")
    page = as_actor(actor).get(f"/submissions/{cast.public.pk}/")
    assert (f"?run={cast.feedback_run.pk}#run" in page.content.decode()) is sees_feedback
    runs = as_actor(actor).get(f"/api/submissions/{cast.public.pk}/").json()["runs"]
    assert {run["id"] for run in runs} == (
        {cast.public_run.pk, cast.feedback_run.pk} if sees_feedback else {cast.public_run.pk}
    )


def test_the_owner_publishes_from_the_page_and_the_set_joins_the_cached_ranking_at_once(
    cast: Cast, as_actor: Callable[[str], Client], anonymous: Client, django_capture_on_commit_callbacks: Any
) -> None:
    assertNotContains(anonymous.get("/"), PRIVATE)  # the ranking is now cached without it
    with django_capture_on_commit_callbacks(execute=True):
        response = as_actor("owner").post(f"/submissions/{cast.private.pk}/publish/", follow=True)
    assertContains(response, f"Submission #{cast.private.pk} is public")
    cast.private.refresh_from_db()
    assert cast.private.published_at is not None
    assertContains(anonymous.get("/"), PRIVATE)
    assertContains(anonymous.get("/charts/ranking.svg"), PRIVATE)
    assertContains(anonymous.get(f"/submissions/{cast.private.pk}/"), PRIVATE)


def test_hiding_a_set_takes_it_off_the_cached_ranking_at_once(
    cast: Cast, anonymous: Client, django_capture_on_commit_callbacks: Any
) -> None:
    assertContains(anonymous.get("/"), PUBLIC)
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_hide(submission=cast.public, reason="cached answers")
    assertNotContains(anonymous.get("/"), PUBLIC)
    assertNotContains(anonymous.get("/charts/ranking.svg"), PUBLIC)
    assertNotContains(anonymous.get("/queries/6/"), PUBLIC)


def test_publishing_twice_keeps_the_first_date(cast: Cast, uploader: User) -> None:
    first = cast.public.published_at
    services.submission_publish(submission=cast.public, user=uploader)
    cast.public.refresh_from_db()
    assert cast.public.published_at == first


def test_only_the_uploader_can_publish_staff_included(cast: Cast, rival: User, admin: User) -> None:
    for user in (rival, admin):
        with pytest.raises(PermissionDenied):
            services.submission_publish(submission=cast.private, user=user)
    assert Submission.objects.get(pk=cast.private.pk).published_at is None


def test_a_set_with_feedback_runs_only_cannot_be_published(
    q6: Any, cpu: Any, uploader: User, kernel_set: Any, api_client: Any
) -> None:
    submission = services.submission_create(
        uploader=uploader, kernel_set=kernel_set, kind=EvaluationRun.Kind.FEEDBACK, enqueue=False
    )
    with pytest.raises(SubmissionError) as caught:
        services.submission_publish(submission=submission, user=uploader)
    assert caught.value.code == "nothing_to_publish"
    response = api_client.post(f"/api/submissions/{submission.pk}/publish/")
    assert (response.status_code, response.json()["code"]) == (400, "nothing_to_publish")


def test_an_upload_is_private_and_says_how_to_publish(
    api_client: Any, q6: Any, cpu: Any, example_dir: Any
) -> None:
    with (example_dir / "manifest.json").open("rb") as manifest, (example_dir / "q06.py").open("rb") as q06:
        body = api_client.post(
            "/api/submissions/", {"manifest": manifest, "kernels": q06}, format="multipart"
        ).json()
    assert Submission.objects.get().published_at is None
    assert body["publish_url"].endswith(f"/api/submissions/{body['submission']}/publish/")


def test_the_pending_count_and_latest_list_leave_out_private_sets(anonymous: Client, submit: Any) -> None:
    submit(model=PRIVATE, published=False)
    page = anonymous.get("/")
    assertNotContains(page, PRIVATE)
    assertNotContains(page, "queued or running")


@pytest.mark.django_db(transaction=True)
def test_the_migration_publishes_every_set_stored_before_publication_existed(migrate) -> None:
    old = migrate([("leaderboard", "0006_baseline_calibration")])
    user = old.get_model("auth", "User").objects.create(username="ada")
    model = old.get_model("leaderboard", "LanguageModel").objects.create(name="LLM", slug="llm")
    Submission = old.get_model("leaderboard", "Submission")
    shown = Submission.objects.create(uploader=user, language_model=model, language="triton", scope="full")
    hidden = Submission.objects.create(
        uploader=user, language_model=model, language="cuda", scope="core", hidden=True
    )
    after = [("leaderboard", "0007_submission_published_hidden_reason")]
    new = migrate(after).get_model("leaderboard", "Submission")
    for old_row in (shown, hidden):
        row = new.objects.get(pk=old_row.pk)
        assert row.published_at == row.created
    assert new.objects.get(pk=hidden.pk).hidden
