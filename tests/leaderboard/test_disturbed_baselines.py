"""A run whose report ranks it, though a passed query's baseline ran over 1.5x its calibration's median
(the machine was disturbed): reports of harnesses before 0.6.9 were ranked so; the site ranks by the rule."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from leaderboard import services
from leaderboard.models import EvaluationRun

pytestmark = pytest.mark.django_db

SESSION_13 = Path(__file__).resolve().parents[2] / "docs" / "results" / "2026-12-04-h200-s13" / "reports.tgz"


def ranked_yet_disturbed(timed_report: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """A GPU report as harness 0.6.4 wrote it: ranked, its Q6 baseline 2x its calibration's median."""
    report = timed_report(baseline_ms=2.0, kernel_ms=1.0)
    (q6,) = report["queries"]
    q6["stats"]["baseline_calibration"]["compiled_ms"] = 1.0
    report["timing"] |= {"ranked": True, "reason": ""}
    return report


def test_a_run_whose_report_ranks_a_disturbed_baseline_is_not_ranked_and_says_why(
    submit: Callable[..., Any], timed_report: Callable[..., dict[str, Any]], anonymous: Client
) -> None:
    run = services.evaluation_record(
        run=submit(model="Lucky LLM").runs.get(), report=ranked_yet_disturbed(timed_report)
    )
    assert not run.timing_ranked and run.timing_label == "unstable timing"
    assert run.timing_reason.startswith(
        "unstable timing: Q6: the baseline ran 2.00x its calibration's median"
    )
    assert list(EvaluationRun.objects.ranked()) == [] and list(EvaluationRun.objects.unranked()) == [run]
    page = anonymous.get(f"/submissions/{run.submission_id}/").content.decode()
    assert "the machine was disturbed" in page


def test_a_run_whose_report_ranks_it_with_its_baselines_near_their_calibration_stays_ranked(
    submit: Callable[..., Any], timed_report: Callable[..., dict[str, Any]]
) -> None:
    report = timed_report(baseline_ms=2.0, kernel_ms=1.0)
    report["queries"][0]["stats"]["baseline_calibration"]["compiled_ms"] = 1.6  # 1.25x: within the bound
    run = services.evaluation_record(run=submit().runs.get(), report=report)
    assert run.timing_ranked and run.timing_override == "" and run.timing_label == ""


def test_session_13s_reference_triton_run_is_not_ranked_for_its_q16_baseline(q6: Any) -> None:
    """Its Q16 baseline ran 2.203 ms against the H200 calibration's 1.115 (1.98x); the other sets of
    that session stay ranked."""
    from django.contrib.auth.models import User

    from evaluator.queries import QUERIES
    from leaderboard.models import Query

    for query in QUERIES.values():
        Query.objects.get_or_create(number=query.number, defaults={"name": query.name, "sql": "select 1"})
    User.objects.create_user("demo")
    call_command("dkb_import_reports", str(SESSION_13), stdout=open("/dev/null", "w"))
    runs = {
        r.submission.language_model.name + " " + r.submission.scope: r for r in EvaluationRun.objects.all()
    }
    reference = runs["DataKernelBench reference - Triton, full full"]
    assert not reference.timing_ranked
    assert "Q16: the baseline ran 1.98x its calibration's median (2.203 ms against 1.115 ms)" in (
        reference.timing_reason
    )
    assert runs["DataKernelBench reference - CUDA, full full"].timing_ranked


@pytest.mark.django_db(transaction=True)
def test_the_migration_unranks_stored_runs_with_a_disturbed_baseline(
    migrate: Callable[..., Any], timed_report: Callable[..., dict[str, Any]]
) -> None:
    old = migrate([("leaderboard", "0011_run_ranking_index")])
    user = old.get_model("auth", "User").objects.create(username="ada")
    model = old.get_model("leaderboard", "LanguageModel").objects.create(name="LLM", slug="llm")
    submission = old.get_model("leaderboard", "Submission").objects.create(
        uploader=user, language_model=model, language="triton", scope="full"
    )
    gpu = old.get_model("leaderboard", "Hardware").objects.create(
        slug="gpu", name="GPU", device="cuda", queue="q"
    )
    OldRun = old.get_model("leaderboard", "EvaluationRun")
    calm = timed_report(baseline_ms=2.0, kernel_ms=1.0)
    runs = {
        name: OldRun.objects.create(submission=submission, hardware=gpu, report=report, timing_ranked=True).pk
        for name, report in [("disturbed", ranked_yet_disturbed(timed_report)), ("calm", calm)]
    }
    new = migrate([("leaderboard", "0012_run_timing_override")]).get_model("leaderboard", "EvaluationRun")
    stored = {
        name: new.objects.values_list("timing_ranked", "timing_override").get(pk=pk)
        for name, pk in runs.items()
    }
    assert stored["calm"] == (True, "")
    assert stored["disturbed"][0] is False and "Q6: the baseline ran 2.00x" in stored["disturbed"][1]
