"""A real browser (Debian's chromium through Playwright) against the live server: log in, upload through
the web form, publish the evaluated set, and find it on the home page."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from evaluator.queries import QUERIES
from leaderboard.models import Submission
from leaderboard.tasks import evaluation_execute

SCREENSHOTS = Path(os.environ.get("DKB_SCREENSHOTS", Path(__file__).parent / "screenshots"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


def test_an_uploader_uploads_through_the_form_publishes_the_set_and_finds_it_on_the_home_page(
    page: Any, live_server: Any, uploader, password: str, q6, cpu, example_dir: Path, evaluation_settings
) -> None:
    page.goto(f"{live_server.url}/upload/")
    assert "/accounts/login/" in page.url
    page.fill("input[name=username]", uploader.username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/upload/")

    page.set_input_files("input[name=manifest]", str(example_dir / "manifest.json"))
    page.set_input_files("input[name=kernels]", [str(example_dir / "q06.py")])
    page.click("text=Upload and evaluate")
    page.wait_for_url("**/submissions/*/")
    assert "1 evaluation run queued" in page.inner_text(".messages")
    assert "queued" in page.inner_text("table.runs")

    # The worker's part, in this process: the same task function a qcluster runs, real sandbox and data.
    run = Submission.objects.get().runs.get()
    evaluation_execute(run.pk)

    # Private until published: the home page lists nothing of it, its page offers to publish it.
    page.goto(f"{live_server.url}/")
    assert "DataKernelBench example" not in page.inner_text("main")
    page.goto(f"{live_server.url}/submissions/{run.submission_id}/")
    assert "private" in page.inner_text(".notice.private")
    page.click("text=Publish this set")
    page.wait_for_url("**/submissions/*/")
    assert "is public" in page.inner_text(".messages")

    page.goto(f"{live_server.url}/")
    # Timed on a CPU: correct, listed below the ranking as "correctness only", never ranked.
    assert page.locator("table.ranking").count() == 0
    unranked = page.inner_text("table.unranked")
    assert "DataKernelBench example" in unranked
    assert f"{100 / len(QUERIES):.0f}%" in unranked  # pass rate: Q6 of all the benchmark's queries
    assert "CPU" in unranked and "correctness only" in unranked
    page.click("table.unranked >> text=DataKernelBench example")
    assert page.inner_text("table.results").count("passed") == 1
    assert page.locator(".kernel .highlight").count() == 2  # the kernel beside its TorchPlan
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "flow-set.png"), full_page=True)

    # The kernel's own page: its source, its verdict, its diff against the TorchPlan.
    set_url = page.url
    page.click("table.results >> a[href*='/kernels/6/']")
    page.wait_for_url("**/kernels/6/**")
    assert "passed" in page.inner_text("main") and "TorchPlan" in page.inner_text("main")
    page.screenshot(path=str(SCREENSHOTS / "flow-kernel.png"), full_page=True)

    # Compared with itself through the set page's form: the same status on both sides.
    page.goto(set_url)
    page.fill("form.compare-with input[name=b]", str(run.submission_id))
    page.click("form.compare-with button")
    page.wait_for_url("**/compare/**")
    assert page.inner_text("main").count("passed") >= 2
    page.screenshot(path=str(SCREENSHOTS / "flow-compare.png"), full_page=True)

    # The run's results exported as CSV from the link on its page, read as a visitor would.
    page.goto(set_url)
    href = page.get_attribute("p.exports >> text=CSV", "href")
    exported = page.request.get(f"{live_server.url}{href}")
    assert exported.ok and "text/csv" in exported.headers["content-type"]
    rows = exported.text().splitlines()
    assert len(rows) >= 2 and any("passed" in row and ",6," in f",{row}," for row in rows[1:])
