"""A real browser (Debian's chromium through Playwright) against the live server: log in, upload through
the web form, publish the evaluated set, and find it on the home page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evaluator.queries import QUERIES
from leaderboard.models import Submission
from leaderboard.tasks import evaluation_execute

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
