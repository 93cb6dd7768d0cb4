"""A visitor's walk through every page in a real browser, a screenshot of each under screenshots/: the
published sets are there, the private set and the feedback run nowhere."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from leaderboard import services
from leaderboard.models import EvaluationRun, Kernel, Query, Submission

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

SCREENSHOTS = Path(os.environ.get("DKB_SCREENSHOTS", Path(__file__).parent / "screenshots"))


@dataclass
class World:
    walk: EvaluationRun
    rival: EvaluationRun
    private: EvaluationRun
    feedback: EvaluationRun
    queued: Submission


@pytest.fixture
def world(submit: Any, make_report: Any, cpu: Any, rival: Any) -> World:
    """Two published GPU-like sets (Q6 passes, Q14 gives a wrong answer), a private one, a feedback run."""
    q14 = Query.objects.create(number=14, name="Promotion Effect", sql="select 1", torchplan_source="pass\n")

    def run(model: str, *, kernel_ms: float, publish: bool = True, **kwargs: Any) -> EvaluationRun:
        report = make_report(kernel_ms=kernel_ms, device="cuda")
        report["queries"].append(
            {"query": 14, "status": "wrong_answer", "reason": "row 3 differs", "trials": 1}
        )
        submission = submit(model=model, **kwargs)
        Kernel.objects.create(
            submission=submission, query=q14, source="def run_query(tables):\n    return {}\n"
        )
        if publish:
            services.submission_publish(submission=submission, user=submission.uploader)
        return services.evaluation_record(run=submission.runs.get(), report=report)

    walk = run("Walk LLM", kernel_ms=0.8)
    feedback = services.evaluation_enqueue(
        submission=walk.submission, hardware=cpu, kind=EvaluationRun.Kind.FEEDBACK, enqueue=False
    )
    feedback = services.evaluation_record(run=feedback, report=make_report(kernel_ms=0.25, device="cuda"))
    submit(model="Queued private LLM", user=rival)  # waits on the queue first, private
    queued = submit(model="Queued LLM", user=rival)
    services.submission_publish(submission=queued, user=rival)
    return World(
        walk=walk,
        rival=run("Rival LLM", kernel_ms=3.0, user=rival),
        private=run("Private LLM", kernel_ms=0.5, publish=False),
        feedback=feedback,
        queued=queued,
    )


def _pages(world: World) -> list[tuple[str, str, str]]:
    """(screenshot name, path, text the page shows) for each public page."""
    walk, rival = world.walk, world.rival
    return [
        ("home", "/", "Walk LLM"),
        ("matrix", "/matrix/", "wrong answer"),
        ("submission", f"/submissions/{walk.submission_id}/", "Environment"),
        ("queued-run", f"/submissions/{world.queued.pk}/", "1 queued run ahead of it"),
        ("compare", f"/compare/?a={walk.submission_id}&b={rival.submission_id}", "Rival LLM"),
        ("kernel", f"/submissions/{walk.submission_id}/kernels/6/", "unified diff"),
        ("kernel-failed", f"/submissions/{walk.submission_id}/kernels/14/", "row 3 differs"),
        ("queries", "/queries/", "Q6"),
        ("query", "/queries/6/", "Walk LLM"),
        ("query-failures", "/queries/14/", "Promotion Effect"),
    ]


def test_a_visitor_walks_every_page_and_sees_only_published_sets(
    page: Any, live_server: Any, world: World
) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name, path, shown in _pages(world):
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == 200, path
        text = page.inner_text("body")
        assert shown.lower() in text.lower(), path
        assert "Private LLM" not in text and "8.00" not in text, path
        # Every image (the charts) loaded and drew.
        assert page.eval_on_selector_all(
            "img", "imgs => imgs.every(i => i.complete && i.naturalWidth > 0)"
        ), path
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    # A matrix cell opens the set's kernel, whose raw source is a click away.
    page.goto(f"{live_server.url}/matrix/")
    page.click("table.matrix td.cell.faster a")
    assert f"/submissions/{world.walk.submission_id}/kernels/6/?run={world.walk.pk}" in page.url
    assert "2.50" in page.inner_text(".kernel-result")  # this run's, not the feedback run's 8x
    page.click("text=raw")
    assert page.url.endswith("/kernels/6/raw/")
    assert "def run_query" in page.inner_text("body")


def test_a_newcomer_signs_up_from_the_login_page_and_asks_for_a_password_reset(
    page: Any, live_server: Any, uploader: Any
) -> None:
    from django.core import mail
    from django.core.cache import cache

    cache.delete("dkb:signups:127.0.0.1")  # the file cache outlives a session: start this hour afresh
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{live_server.url}/accounts/login/")
    page.click("text=Sign up")
    page.fill("input[name=username]", "linus")
    page.fill("input[name=email]", "linus@example.org")
    page.fill("input[name=password1]", "tensor-cores-all-day-7")
    page.fill("input[name=password2]", "tensor-cores-all-day-8")
    page.click("text=Create my account")
    assert "The two password fields" in page.inner_text("form")
    page.screenshot(path=str(SCREENSHOTS / "signup-error.png"), full_page=True)
    page.fill("input[name=password1]", "tensor-cores-all-day-7")
    page.fill("input[name=password2]", "tensor-cores-all-day-7")
    page.click("text=Create my account")
    page.wait_for_url(f"{live_server.url}/upload/")
    assert "Welcome, linus" in page.inner_text(".messages")
    page.click("text=Log out linus")

    page.goto(f"{live_server.url}/accounts/login/")
    page.click("text=Reset it")
    page.fill("input[name=email]", uploader.email)
    page.screenshot(path=str(SCREENSHOTS / "password-reset.png"), full_page=True)
    page.click("text=Send the link")
    page.wait_for_url("**/password-reset/sent/")
    assert "Check your e-mail" in page.inner_text("h1")
    assert [m.to for m in mail.outbox] == [[uploader.email]]


PHONE = {"width": 390, "height": 844}  # an iPhone 12-15's CSS width


def _overflow(page: Any) -> list[str]:
    """What sticks out past the viewport's right edge (nothing must: wide tables scroll in a wrapper)."""
    return page.evaluate(
        """() => {
            const width = document.documentElement.clientWidth;
            if (document.documentElement.scrollWidth <= width) return [];
            return [...document.querySelectorAll("body *")]
                .filter(e => e.getBoundingClientRect().right > width + 1)
                .filter(e => !e.closest(".table-scroll, .code, pre, figure"))
                .slice(0, 5).map(e => e.tagName + "." + e.className);
        }"""
    )


def _hidden_nav_links(page: Any) -> list[str]:
    """The header's links that fall outside the header (cut off, or over the page)."""
    return page.evaluate(
        """() => {
            const box = document.querySelector(".site-header").getBoundingClientRect();
            return [...document.querySelectorAll(".site-header a, .site-header button")].filter(a => {
                const r = a.getBoundingClientRect();
                return r.top < box.top || r.bottom > box.bottom || r.right > box.right;
            }).map(a => a.textContent.trim());
        }"""
    )


def _assert_fits(page: Any, path: str) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], (path, _overflow(page))
    assert _hidden_nav_links(page) == [], path


def test_every_page_fits_a_phone_without_sideways_scrolling(
    browser: Any, live_server: Any, world: World, password: str
) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport=PHONE, is_mobile=True)
    page = context.new_page()
    pages = _pages(world) + [
        ("login", "/accounts/login/", "Log in"),
        ("signup", "/accounts/signup/", "Sign up"),
        ("password-reset", "/accounts/password-reset/", "Reset your password"),
    ]
    try:
        for name, path, shown in pages:
            page.goto(f"{live_server.url}{path}")
            assert shown.lower() in page.inner_text("body").lower(), path
            _assert_fits(page, path)
            page.screenshot(path=str(SCREENSHOTS / f"phone-{name}.png"), full_page=True)
        # The header's way to the API's docs and to an account, on a phone too.
        page.goto(f"{live_server.url}/")
        assert {"API", "Sign up"} <= set(page.locator(".site-header nav a").all_inner_texts())
        page.click(".site-header >> text=Sign up")
        page.wait_for_url(f"{live_server.url}/accounts/signup/")
        page.click(".site-header >> text=API")
        page.wait_for_url(f"{live_server.url}/api/docs/")
        page.wait_for_selector(".swagger-ui .opblock")  # Swagger UI drew the schema, under the site's header
        _assert_fits(page, "/api/docs/")
        page.click(".site-header >> text=Leaderboard")  # and the docs lead back to the site
        page.wait_for_url(f"{live_server.url}/")
        # The uploader's own pages: the upload form and the private set.
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", world.walk.submission.uploader.username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/upload/")
        assert "Sign up" not in page.locator(".site-header nav").inner_text()  # signed in already
        for name, path in (
            ("upload", "/upload/"),
            ("private", f"/submissions/{world.private.submission_id}/"),
        ):
            page.goto(f"{live_server.url}{path}")
            _assert_fits(page, path)
            page.screenshot(path=str(SCREENSHOTS / f"phone-{name}.png"), full_page=True)
    finally:
        context.close()


def _past_the_right_edge(page: Any, selector: str) -> list[str]:
    """The texts of `selector`'s cells that lie past the viewport's right edge (behind a sideways scroll)."""
    return page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)]
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
            .map(e => e.textContent.trim())""",
        selector,
    )


def test_on_a_phone_the_speedups_show_without_scrolling_the_tables_sideways(
    browser: Any, live_server: Any, world: World
) -> None:
    page = browser.new_context(viewport=PHONE, is_mobile=True).new_page()
    page.goto(f"{live_server.url}/")
    assert page.locator("table.ranking td.strong").count() == 2  # Walk and Rival, each's overall speedup
    assert _past_the_right_edge(page, "table.ranking td.strong") == []
    page.goto(f"{live_server.url}/submissions/{world.walk.submission_id}/")
    assert page.locator("table.results td.strong").count() == 2  # Q6's speedup, Q14's dash
    assert _past_the_right_edge(page, "table.results td.strong") == []


def test_on_a_phone_the_verdicts_show_without_scrolling_and_a_reason_does_not_stretch_its_row(
    browser: Any, live_server: Any, world: World, submit: Any, make_report: Any
) -> None:
    # A CPU run is never ranked: it is listed under "Not ranked", with its pass rate and why.
    reason = (
        "the kernel's answer differs from DuckDB's at row 3: revenue 123456.78 against 123456.79, beyond "
        "the relative tolerance of 1e-9 that a float64 sum over the qualifying lineitem rows must meet"
    )
    submission = submit(model="Checked LLM")
    services.submission_publish(submission=submission, user=submission.uploader)
    services.evaluation_record(
        run=submission.runs.get(), report=make_report(status="wrong_answer", reason=reason)
    )
    page = browser.new_context(viewport=PHONE, is_mobile=True).new_page()
    page.goto(f"{live_server.url}/")
    # The ranking's pass rate: the 7th column, after the five that are wide-only.
    assert page.locator("table.ranking tbody td:nth-child(7)").count() == 2
    assert _past_the_right_edge(page, "table.ranking tbody td:nth-child(7)") == []
    assert _past_the_right_edge(page, "table.ranking thead th") == []
    assert page.locator("table.unranked tbody tr").count() == 1
    for column in (4, 6):  # pass rate, why not ranked
        assert _past_the_right_edge(page, f"table.unranked tbody td:nth-child({column})") == [], column
    page.goto(f"{live_server.url}/submissions/{submission.pk}/")
    assert _past_the_right_edge(page, "table.kernels tbody td:nth-child(3)") == []  # its status
    heights = page.evaluate(
        """() => [...document.querySelectorAll("table.results tbody tr")]
            .map(r => r.getBoundingClientRect().height)"""
    )
    assert heights and max(heights) < 120, heights
