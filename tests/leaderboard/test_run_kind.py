"""A run's kind as the runs table says it: what the run is for (the leaderboard, or its uploader's private
feedback), not "ranked", which read as a verdict beside a CPU run's "not ranked"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from leaderboard import services
from leaderboard.models import EvaluationRun

pytestmark = pytest.mark.django_db


def _kinds(html: str) -> list[str]:
    rows = html.split('<table class="runs">')[1].split("</table>")[0].split("<tr")[2:]
    return [row.split("<td>")[3].split("</td>")[0] for row in rows]


def test_a_cpu_run_is_said_to_be_for_the_leaderboard_not_ranked(
    evaluated: Callable[..., Any], anonymous: Client
) -> None:
    run = evaluated()
    assert run.kind == EvaluationRun.Kind.RANKED and run.timing_label == "correctness only"
    assert _kinds(anonymous.get(run.submission.get_absolute_url()).content.decode()) == ["leaderboard"]


def test_a_feedback_run_is_said_to_be_private_feedback_to_its_uploader(
    evaluated: Callable[..., Any], make_report: Callable[..., Any], cpu: Any, uploader_client: Client
) -> None:
    run = evaluated()
    feedback = services.evaluation_enqueue(
        submission=run.submission, hardware=cpu, kind=EvaluationRun.Kind.FEEDBACK, enqueue=False
    )
    services.evaluation_record(run=feedback, report=make_report())
    html = uploader_client.get(run.submission.get_absolute_url()).content.decode()
    assert _kinds(html) == ["feedback (private)", "leaderboard"]
