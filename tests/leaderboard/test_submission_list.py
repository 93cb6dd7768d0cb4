"""The lists of sets (the upload page's "Your submissions", the home page's latest): each row says how its
newest run stands, so that sets of the same name can be told apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from leaderboard.models import Submission
from leaderboard.templatetags.leaderboard import kernel_tally, percent, speedup

pytestmark = pytest.mark.django_db


def test_your_submissions_say_how_each_sets_newest_run_stands(
    submit: Callable[..., Any], evaluated: Callable[..., Any], uploader_client: Client
) -> None:
    waiting = submit(published=False)
    done = evaluated(published=False, baseline_ms=3.0, kernel_ms=1.5)
    page = uploader_client.get("/upload/").content.decode()
    rows = {row.split('">', 1)[1].split(" ", 1)[0]: row for row in page.split('<li><a href="')[1:]}
    assert 'badge queued">queued' in rows[f"#{waiting.pk}"]
    finished = rows[f"#{done.submission_id}"]
    assert ">evaluated</span>" in finished and "1 of 1 passed" in finished and "on Test CPU" in finished
    assert f"{speedup(done.overall_speedup)} overall, {percent(done.pass_rate)} pass rate" in finished


def test_the_list_costs_the_same_queries_for_one_set_or_ten(
    submit: Callable[..., Any], uploader_client: Client
) -> None:
    submit(published=False)
    with CaptureQueriesContext(connection) as one:
        uploader_client.get("/upload/")
    for _ in range(9):
        submit(published=False)
    with CaptureQueriesContext(connection) as ten:
        uploader_client.get("/upload/")
    assert len(ten) == len(one)


def test_the_lists_leave_the_runs_reports_in_the_database(evaluated: Callable[..., Any]) -> None:
    """A report is ~100 KB: ten rows of a list would read a megabyte for a status and a tally."""
    run = evaluated(published=False)
    (listed,) = Submission.objects.recent()[0].runs_newest
    assert "report" in listed.get_deferred_fields()
    with CaptureQueriesContext(connection) as queries:
        assert kernel_tally(listed) == kernel_tally(run) == (1, 1)
    assert len(queries) == 0
