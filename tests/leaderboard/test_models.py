from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from leaderboard import services
from leaderboard.models import EvaluationRun, Kernel

pytestmark = pytest.mark.django_db


def test_final_statuses_are_succeeded_and_failed() -> None:
    assert EvaluationRun.Status.FINAL == (EvaluationRun.Status.SUCCEEDED, EvaluationRun.Status.FAILED)
    assert "final" not in [s.lower() for s in EvaluationRun.Status.values]


def test_a_submission_holds_one_kernel_per_query(submit, q6) -> None:
    submission = submit()
    with pytest.raises(IntegrityError), transaction.atomic():
        Kernel.objects.create(submission=submission, query=q6, source="pass")


def test_a_pass_rate_outside_zero_and_one_is_refused(submit) -> None:
    run = submit().runs.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        EvaluationRun.objects.filter(pk=run.pk).update(pass_rate=1.5)


def test_a_run_cannot_succeed_without_a_report(submit) -> None:
    run = submit().runs.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.SUCCEEDED)


@pytest.mark.parametrize(("status", "label"), [("out_of_memory", "out of memory"), ("crashed", "crashed")])
def test_a_sandbox_outcome_is_stored_with_its_label(evaluated, status: str, label: str) -> None:
    run = evaluated(status=status, kernel_ms=None, reason="the runner was killed by SIGSEGV")
    result = run.results.get()
    assert (result.status, result.get_status_display()) == (status, label)


def test_every_report_status_has_a_label_and_nothing_else_can_be_stored(evaluated) -> None:
    from evaluator.report import Status as ReportStatus
    from leaderboard.models import QueryResult

    assert set(QueryResult.Status.values) == set(ReportStatus.ALL)
    run = evaluated()
    with pytest.raises(IntegrityError), transaction.atomic():
        run.results.update(status="hacked")


def test_the_kernel_set_is_rebuilt_from_the_stored_rows(submit, kernel_set) -> None:
    rebuilt = submit().kernel_set()
    assert rebuilt.kernels == kernel_set.kernels
    assert rebuilt.manifest == kernel_set.manifest


def test_ranking_orders_by_overall_speedup(evaluated) -> None:
    slow = evaluated(model="Slow LLM", kernel_ms=4.0)
    fast = evaluated(model="Fast LLM", kernel_ms=0.5)
    assert list(EvaluationRun.objects.ranked()) == [fast, slow]


def test_ranking_shows_only_the_latest_succeeded_run_of_a_submission(evaluated, make_report) -> None:
    first = evaluated(kernel_ms=1.0)
    rerun = services.evaluation_rerun(run=first)
    rerun = services.evaluation_record(run=rerun, report=make_report(kernel_ms=0.8))
    failed = services.evaluation_rerun(run=rerun)
    services.evaluation_fail(run=failed, error="the GPU fell off the bus", retryable=True)
    assert list(EvaluationRun.objects.ranked()) == [rerun]


def test_ranking_leaves_out_hidden_submissions(evaluated) -> None:
    honest = evaluated(model="Honest LLM")
    cheat = evaluated(model="Cheating LLM", kernel_ms=0.001)
    services.submission_hide(submission=cheat.submission)
    assert list(EvaluationRun.objects.ranked()) == [honest]


def test_ranking_leaves_out_feedback_runs(submit, make_report) -> None:
    run = submit().runs.get()
    EvaluationRun.objects.filter(pk=run.pk).update(kind=EvaluationRun.Kind.FEEDBACK)
    services.evaluation_record(run=run, report=make_report())
    assert list(EvaluationRun.objects.ranked()) == []


def test_ranking_can_be_narrowed_to_one_hardware(evaluated, gpu) -> None:
    run = evaluated()
    assert list(EvaluationRun.objects.ranked(hardware=run.hardware)) == [run]
    assert list(EvaluationRun.objects.ranked(hardware=gpu)) == []


def test_hidden_submissions_are_visible_to_their_uploader_and_staff_only(
    submit, uploader, rival, admin
) -> None:
    from django.contrib.auth.models import AnonymousUser

    from leaderboard.models import Submission

    submission = services.submission_hide(submission=submit())
    assert submission in Submission.objects.visible_to(uploader)
    assert submission in Submission.objects.visible_to(admin)
    assert submission not in Submission.objects.visible_to(rival)
    assert submission not in Submission.objects.visible_to(AnonymousUser())


def test_the_models_and_their_migrations_agree() -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    # --check exits non-zero when a model change has no migration; --dry-run writes nothing.
    call_command("makemigrations", "leaderboard", "--check", "--dry-run", stdout=out)
