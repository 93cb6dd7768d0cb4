"""A run's state as pages say it: a finished evaluation is "evaluated", with how many of its kernels passed
beside it, so that a set whose kernels all failed does not read as a success."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from evaluator.queries import QUERIES
from leaderboard import services
from leaderboard.models import Query

pytestmark = pytest.mark.django_db


def _run_row(html: str) -> str:
    return html.split('<table class="runs">')[1].split("</table>")[0]


def test_a_set_whose_only_kernel_answers_wrong_reads_as_evaluated_with_none_of_one_passed(
    evaluated: Callable[..., Any], anonymous: Client
) -> None:
    run = evaluated(status="wrong_answer", reason="row 3 differs")
    html = anonymous.get(run.submission.get_absolute_url()).content.decode()
    row = _run_row(html)
    assert ">evaluated</span>" in row and "succeeded" not in row
    assert re.search(r'class="badge failed tally">0 of 1 passed<', row)
    assert re.search(r"<dt>Kernels passed</dt><dd><span class=\"slower\">0 of 1</span>", html)


def test_a_set_whose_kernel_passes_reads_as_evaluated_with_one_of_one_passed(
    evaluated: Callable[..., Any], anonymous: Client
) -> None:
    run = evaluated()
    row = _run_row(anonymous.get(run.submission.get_absolute_url()).content.decode())
    assert 'class="badge passed tally">1 of 1 passed<' in row


def test_the_pass_rate_says_of_how_many_queries_beside_the_kernels_passed(
    submit: Callable[..., Any], real_report: Callable[[], dict[str, Any]], cpu: Any, anonymous: Client
) -> None:
    # One kernel of 22 queries, passed: "1 of 1" kernels passed, and a pass rate of 5% of the 22 queries
    # (each query without a kernel counts as failed), not a bare "5%" beside "1 of 1".
    for query in QUERIES.values():  # every query loaded, as `dkb_setup` does
        Query.objects.get_or_create(number=query.number, defaults={"name": query.name, "sql": query.sql()})
    run = services.evaluation_record(run=submit().runs.get(hardware=cpu), report=real_report())
    html = anonymous.get(run.get_absolute_url()).content.decode()
    assert '<dt>Kernels passed</dt><dd><span class="">1 of 1</span>' in html
    assert '<dt>Pass rate</dt><dd>5% <span class="muted small">of 22 queries</span>' in html


def test_the_lists_say_evaluated_and_the_kernels_passed_not_succeeded(
    evaluated: Callable[..., Any], uploader_client: Client
) -> None:
    run = evaluated(status="wrong_answer", published=False)
    page = uploader_client.get("/upload/").content.decode()
    (row,) = (li for li in page.split("<li>")[1:] if f"#{run.submission_id} " in li)
    assert ">evaluated</span>" in row and "0 of 1 passed" in row and "succeeded" not in row


def test_the_api_still_says_succeeded(evaluated: Callable[..., Any], uploader_client: Client) -> None:
    run = evaluated(status="wrong_answer")
    assert uploader_client.get(f"/api/runs/{run.pk}/").json()["status"] == "succeeded"
