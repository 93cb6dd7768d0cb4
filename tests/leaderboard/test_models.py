from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from evaluator import gpus
from leaderboard import services
from leaderboard.models import EvaluationRun, Hardware, Kernel, Query, report_timing

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
    slow = evaluated(model="Slow LLM", kernel_ms=4.0, device="cuda")
    fast = evaluated(model="Fast LLM", kernel_ms=0.5, device="cuda")
    assert list(EvaluationRun.objects.ranked()) == [fast, slow]


def test_ranking_shows_only_the_latest_succeeded_run_of_a_submission(evaluated, make_report) -> None:
    first = evaluated(kernel_ms=1.0, device="cuda")
    rerun = services.evaluation_rerun(run=first)
    rerun = services.evaluation_record(run=rerun, report=make_report(kernel_ms=0.8, device="cuda"))
    failed = services.evaluation_rerun(run=rerun)
    services.evaluation_fail(run=failed, error="the GPU fell off the bus", retryable=True)
    assert list(EvaluationRun.objects.ranked()) == [rerun]


def test_ranking_leaves_out_hidden_submissions(evaluated) -> None:
    honest = evaluated(model="Honest LLM", device="cuda")
    cheat = evaluated(model="Cheating LLM", kernel_ms=0.001, device="cuda")
    services.submission_hide(submission=cheat.submission)
    assert list(EvaluationRun.objects.ranked()) == [honest]


def test_ranking_leaves_out_feedback_runs(submit, make_report) -> None:
    run = submit().runs.get()
    EvaluationRun.objects.filter(pk=run.pk).update(kind=EvaluationRun.Kind.FEEDBACK)
    services.evaluation_record(run=run, report=make_report(device="cuda"))
    assert list(EvaluationRun.objects.ranked()) == []


def test_ranking_can_be_narrowed_to_one_hardware(evaluated, gpu) -> None:
    run = evaluated(device="cuda")
    assert list(EvaluationRun.objects.ranked(hardware=run.hardware)) == [run]
    assert list(EvaluationRun.objects.ranked(hardware=gpu)) == []


def test_ranking_leaves_out_a_cpu_run_and_lists_it_as_correctness_only(evaluated) -> None:
    run = evaluated()  # timed on the CPU: the report says "correctness only"
    assert not run.timing_ranked
    assert list(EvaluationRun.objects.ranked()) == []
    assert list(EvaluationRun.objects.unranked()) == [run]
    assert run.timing_label == "correctness only"
    assert run.timing_reason == "correctness only: timed on a CPU"


def test_ranking_leaves_out_a_run_whose_medians_are_unsure(submit, timed_report) -> None:
    run = submit().runs.get()
    run = services.evaluation_record(run=run, report=timed_report(kernel_stderr_pct=3.5))
    assert list(EvaluationRun.objects.ranked()) == []
    assert list(EvaluationRun.objects.unranked()) == [run]
    assert (run.timing_label, run.timing_reason) == ("unstable timing", "unstable timing: Q6")
    result = run.results.get()
    assert result.unstable == "the kernel's median has a 3.5% standard error, over 2%"
    assert result.intervals == [("baseline", 2.0, 0.5, 40, 0, None), ("kernel", 1.0, 3.5, 40, 0, None)]


def test_ranking_leaves_out_a_gpu_run_whose_baselines_were_not_calibrated(submit, timed_report) -> None:
    run = submit().runs.get()
    run = services.evaluation_record(run=run, report=timed_report(calibrated=False))
    assert list(EvaluationRun.objects.ranked()) == []
    assert list(EvaluationRun.objects.unranked()) == [run]
    assert (run.timing_label, run.timing_reason) == (
        "uncalibrated baselines",
        "baselines not calibrated on this hardware: Q6",
    )


def test_a_run_says_which_baselines_the_calibration_chose_and_which_ran_in_the_default_mode(
    submit, timed_report
) -> None:
    run = services.evaluation_record(run=submit().runs.get(), report=timed_report())
    q14 = Query.objects.create(number=14, name="Promotion Effect", sql="", torchplan_source="")
    run.results.create(
        query=q14, status="passed", stats={"baseline_mode": "compiled", "baseline_calibration": None}
    )
    assert [r.baseline_calibrated for r in run.results.all()] == [True, False]
    assert run.baseline_summary == (
        "each query's TorchPlan in the mode this hardware's calibration recorded, else in the default mode "
        "(compiled on a GPU, eager on a CPU): compiled for Q6; compiled (not calibrated) for Q14"
    )


def test_rankings_leave_the_reports_out_and_still_say_what_a_run_was_timed_against(
    evaluated, submit, timed_report, django_assert_num_queries
) -> None:
    cpu_run = evaluated()
    gpu_run = services.evaluation_record(run=submit().runs.get(), report=timed_report())
    with django_assert_num_queries(2):  # no report loaded row by row
        (ranked,) = EvaluationRun.objects.ranked()
        (unranked,) = EvaluationRun.objects.unranked()
        assert "report" in ranked.get_deferred_fields() and "report" in unranked.get_deferred_fields()
        assert (ranked.baseline, ranked.timing_label) == (gpu_run.baseline, "")
        labels = (unranked.baseline, unranked.timing_label, unranked.timing_reason)
        assert labels == (cpu_run.baseline, "correctness only", "correctness only: timed on a CPU")
    assert gpu_run.baseline == "recorded"


def test_too_few_samples_also_keep_a_run_off_the_ranking(submit, timed_report) -> None:
    run = services.evaluation_record(run=submit().runs.get(), report=timed_report(kernel_n=9))
    assert not run.timing_ranked
    assert "fewer than 10" in run.results.get().unstable


def test_an_unstable_rerun_leaves_the_stable_run_ranked_and_is_not_listed_as_unranked(
    submit, timed_report
) -> None:
    stable = services.evaluation_record(run=submit().runs.get(), report=timed_report())
    assert stable.timing_ranked and stable.timing_label == ""
    unstable = services.evaluation_rerun(run=stable)
    services.evaluation_record(run=unstable, report=timed_report(baseline_stderr_pct=4.0))
    assert list(EvaluationRun.objects.ranked()) == [stable]
    assert list(EvaluationRun.objects.unranked()) == []


@pytest.mark.parametrize(("device", "ranked"), [("cpu", False), ("cuda", True)])
def test_a_report_from_before_timing_was_judged_is_ranked_unless_timed_on_a_cpu(
    make_report, cpu, gpu, device: str, ranked: bool
) -> None:
    report = make_report(device=device)
    del report["timing"]  # schema 2
    hardware = gpu if device == "cuda" else cpu
    assert report_timing(report, hardware=hardware) == (ranked, "")


def test_a_running_run_says_which_query_it_is_on(submit) -> None:
    run = submit().runs.get()
    assert run.progress_text == ""
    run.progress = {"done": 2, "total": 5, "query": 6, "phase": "started", "status": ""}
    assert run.progress_text == "query 3 of 5: Q6 started"
    run.progress = {"done": 3, "total": 5, "query": 6, "phase": "ended", "status": "wrong_answer"}
    assert run.progress_text == "query 3 of 5: Q6 ended (wrong answer)"


def test_a_private_set_is_visible_to_its_uploader_and_staff_only_and_listed_to_no_one(
    submit, uploader, rival, admin
) -> None:
    from django.contrib.auth.models import AnonymousUser

    from leaderboard.models import Submission

    submission = submit(published=False)
    assert submission in Submission.objects.visible_to(uploader)
    assert submission in Submission.objects.visible_to(admin)
    assert submission not in Submission.objects.visible_to(rival)
    assert submission not in Submission.objects.visible_to(AnonymousUser())
    assert submission not in Submission.objects.listed()


def test_a_hidden_published_set_can_be_opened_by_anyone_but_is_listed_nowhere(submit, rival) -> None:
    from django.contrib.auth.models import AnonymousUser

    from leaderboard.models import Submission

    submission = services.submission_hide(submission=submit(), reason="cached answers")
    assert submission in Submission.objects.visible_to(rival)
    assert submission in Submission.objects.visible_to(AnonymousUser())
    assert submission not in Submission.objects.listed()


def test_a_hidden_reason_without_hiding_is_refused_by_the_database(submit) -> None:
    from django.db import IntegrityError, transaction

    submission = submit()
    submission.hidden_reason = "left behind"
    with pytest.raises(IntegrityError), transaction.atomic():
        submission.save()


def test_the_models_and_their_migrations_agree() -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    # --check exits non-zero when a model change has no migration; --dry-run writes nothing.
    call_command("makemigrations", "leaderboard", "--check", "--dry-run", stdout=out)


@pytest.mark.django_db(transaction=True)
def test_the_migration_ranks_stored_runs_as_their_reports_say_and_old_gpu_reports_as_ranked(migrate) -> None:
    old = migrate([("leaderboard", "0004_query_result_rejected_label")])
    user = old.get_model("auth", "User").objects.create(username="ada")
    model = old.get_model("leaderboard", "LanguageModel").objects.create(name="LLM", slug="llm")
    submission = old.get_model("leaderboard", "Submission").objects.create(
        uploader=user, language_model=model, language="triton", scope="full"
    )
    Hardware = old.get_model("leaderboard", "Hardware")
    cpu = Hardware.objects.create(slug="cpu", name="CPU", device="cpu", queue="q")
    gpu = Hardware.objects.create(slug="gpu", name="GPU", device="cuda", queue="q")
    EvaluationRun = old.get_model("leaderboard", "EvaluationRun")
    runs = {
        name: EvaluationRun.objects.create(submission=submission, hardware=hardware, report=report).pk
        for name, hardware, report in [
            ("old gpu", gpu, {"schema_version": 2}),
            ("old cpu", cpu, {"schema_version": 2}),
            ("unstable gpu", gpu, {"timing": {"ranked": False, "reason": "unstable timing: Q6"}}),
            ("stable gpu", gpu, {"timing": {"ranked": True, "reason": ""}}),
            ("queued", gpu, None),
        ]
    }
    new = migrate([("leaderboard", "0005_run_progress_timing_ranked")]).get_model(
        "leaderboard", "EvaluationRun"
    )
    stored = dict(new.objects.values_list("pk", "timing_ranked"))
    assert {name: stored[pk] for name, pk in runs.items()} == {
        "old gpu": True,
        "old cpu": False,
        "unstable gpu": False,
        "stable gpu": True,
        "queued": False,
    }


def test_a_gpu_the_evaluator_lists_takes_its_peak_from_the_evaluators_table() -> None:
    listed = Hardware.objects.create(
        slug="cuda-h100", name="NVIDIA H100 80GB HBM3", device="cuda", peak_bandwidth_gbs=1.0, queue="q"
    )
    unlisted = Hardware.objects.create(
        slug="cuda-l4", name="NVIDIA L4", device="cuda", peak_bandwidth_gbs=300.0, queue="q"
    )
    assert listed.peak_bandwidth_gbs == gpus.GPUS["H100"]["peak_bandwidth_gbs"]
    assert unlisted.peak_bandwidth_gbs == 300.0
