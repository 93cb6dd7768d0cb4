from __future__ import annotations

from dataclasses import replace

import pytest
from django.core.cache import cache

from evaluator.errors import SubmissionError
from leaderboard import services
from leaderboard.models import EvaluationRun, Kernel, LanguageModel, QueryResult, Submission

pytestmark = pytest.mark.django_db


def test_a_submission_stores_its_manifest_and_kernels(q6, cpu, uploader, kernel_set) -> None:
    submission = services.submission_create(
        uploader=uploader, kernel_set=kernel_set, archive_sha256="ab" * 32
    )
    assert submission.language_model.name == "DataKernelBench example"
    assert (submission.language, submission.scope, submission.agent) == ("triton", "full", "hand-written")
    assert submission.kernels.get().source == kernel_set.kernels[6]
    assert submission.archive_sha256 == "ab" * 32


def test_a_submission_queues_one_ranked_run_per_active_hardware(q6, cpu, gpu, uploader, kernel_set) -> None:
    gpu.active = False
    gpu.save()
    submission = services.submission_create(uploader=uploader, kernel_set=kernel_set, enqueue=False)
    run = submission.runs.get()
    assert (run.hardware, run.status, run.kind) == (
        cpu,
        EvaluationRun.Status.QUEUED,
        EvaluationRun.Kind.RANKED,
    )


def test_the_run_reaches_the_hardware_queue_only_after_commit(
    q6, cpu, uploader, kernel_set, django_capture_on_commit_callbacks
) -> None:
    from django_q.brokers import get_broker

    broker = get_broker(cpu.queue)
    before = broker.queue_size()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.submission_create(uploader=uploader, kernel_set=kernel_set)
    assert broker.queue_size() == before
    for callback in callbacks:
        callback()
    assert broker.queue_size() == before + 1


def test_the_same_model_name_reuses_its_language_model(submit) -> None:
    submit()
    submit()
    assert LanguageModel.objects.count() == 1


def test_names_that_slugify_alike_stay_different_models_named_as_given(submit) -> None:
    names = ["GPT-4o", "gpt 4o", "🦙", "🐪", "gpt-4o"]
    for name in names:
        submit(model=name)
    stored = {m.name: m.slug for m in LanguageModel.objects.all()}
    assert set(stored) == set(names)
    assert len(set(stored.values())) == len(names)
    assert stored["GPT-4o"] == "gpt-4o" and stored["gpt 4o"].startswith("gpt-4o-")


def test_a_kernel_for_a_query_not_yet_in_the_benchmark_stores_nothing(q6, cpu, uploader, kernel_set) -> None:
    kernels = {**kernel_set.kernels, 1: "def run_query(tables, **params):\n    pass\n"}
    with pytest.raises(SubmissionError) as error:
        services.submission_create(uploader=uploader, kernel_set=replace(kernel_set, kernels=kernels))
    assert error.value.code == "query_not_in_benchmark"
    assert Submission.objects.count() == Kernel.objects.count() == EvaluationRun.objects.count() == 0


def test_recording_a_report_stores_per_query_results_and_scores(submit, make_report, real_report) -> None:
    run = submit().runs.get()
    report = make_report(baseline_ms=3.0, kernel_ms=1.5, device="cuda")  # a CPU has no roofline
    run = services.evaluation_record(run=run, report=report)
    assert run.status == EvaluationRun.Status.SUCCEEDED
    assert run.finished is not None
    assert (run.overall_speedup, run.geomean_speedup, run.pass_rate, run.fast_1, run.fast_2) == (
        2.0,
        2.0,
        1.0,
        1.0,
        0.0,
    )
    assert run.harness_version == real_report()["harness_version"]
    assert run.sandbox_backend == "bubblewrap"
    result = run.results.get()
    assert (result.query.number, result.status, result.speedup) == (6, QueryResult.Status.PASSED, 2.0)
    assert result.roofline_fraction == 0.42


def test_recording_a_report_keeps_the_failure_reason(submit, make_report) -> None:
    run = submit().runs.get()
    report = make_report(status="wrong_answer", kernel_ms=None, reason="revenue differs: 123.4 vs 123.5")
    run = services.evaluation_record(run=run, report=report)
    assert run.pass_rate == 0.0
    assert run.results.get().reason == "revenue differs: 123.4 vs 123.5"


def test_recording_a_report_starts_a_new_cache_generation(
    submit, make_report, django_capture_on_commit_callbacks
) -> None:
    run = submit().runs.get()
    before = services.cache_generation()
    with django_capture_on_commit_callbacks(execute=True):
        services.evaluation_record(run=run, report=make_report())
    assert cache.get(services.GENERATION_KEY) != before


def test_a_finished_run_is_never_recorded_twice(submit, make_report) -> None:
    run = services.evaluation_record(run=submit().runs.get(), report=make_report())
    with pytest.raises(ValueError, match="already succeeded"):
        services.evaluation_record(run=run, report=make_report(kernel_ms=0.1))
    assert run.results.count() == 1


def test_a_rerun_is_a_new_run_and_the_old_one_is_kept(evaluated) -> None:
    run = evaluated()
    rerun = services.evaluation_rerun(run=run)
    run.refresh_from_db()
    assert rerun.pk != run.pk
    assert rerun.rerun_of == run
    assert (rerun.status, rerun.hardware, rerun.submission) == ("queued", run.hardware, run.submission)
    assert run.status == EvaluationRun.Status.SUCCEEDED
    assert run.results.count() == 1


def test_only_one_worker_can_claim_a_queued_run(submit) -> None:
    run = submit().runs.get()
    claimed = services.evaluation_claim(run_id=run.pk, backend="bubblewrap")
    assert claimed is not None
    assert (claimed.status, claimed.attempts, claimed.sandbox_backend) == ("running", 1, "bubblewrap")
    assert claimed.started is not None
    assert services.evaluation_claim(run_id=run.pk, backend="bubblewrap") is None


def test_a_missing_run_cannot_be_claimed(db) -> None:
    assert services.evaluation_claim(run_id=999_999, backend="bubblewrap") is None


def test_a_failed_evaluation_keeps_its_error_and_is_retryable(submit) -> None:
    run = submit().runs.get()
    services.evaluation_fail(run=run, error="SandboxTimeout: took longer than 1800 s", retryable=True)
    run.refresh_from_db()
    assert (run.status, run.retryable, run.error) == (
        "failed",
        True,
        "SandboxTimeout: took longer than 1800 s",
    )
    assert run.finished is not None


def test_a_finished_run_is_not_failed_afterwards(evaluated) -> None:
    run = evaluated()
    services.evaluation_fail(run=run, error="late failure", retryable=True)
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.SUCCEEDED


def test_hiding_a_submission_keeps_its_reason_and_can_be_undone(submit) -> None:
    submission = services.submission_hide(submission=submit(), reason="timed a cached answer")
    assert (Submission.objects.get().hidden, Submission.objects.get().hidden_reason) == (
        True,
        "timed a cached answer",
    )
    services.submission_hide(submission=submission, hidden=False)
    assert (Submission.objects.get().hidden, Submission.objects.get().hidden_reason) == (False, "")


def test_rotating_an_api_token_invalidates_the_old_one(uploader) -> None:
    old = services.api_token_rotate(user=uploader)
    new = services.api_token_rotate(user=uploader)
    assert old.key != new.key
    assert uploader.auth_token.key == new.key


def test_revoking_an_api_token_deletes_it_and_says_whether_there_was_one(uploader) -> None:
    from rest_framework.authtoken.models import Token

    services.api_token_rotate(user=uploader)
    assert services.api_token_revoke(user=uploader) is True
    assert not Token.objects.filter(user=uploader).exists()
    assert services.api_token_revoke(user=uploader) is False


def test_a_run_left_running_by_a_lost_worker_is_failed_retryably_and_a_live_one_is_not(
    submit, evaluated, settings
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    lost = services.evaluation_claim(run_id=submit().runs.get().pk, backend="bubblewrap")
    live = services.evaluation_claim(run_id=submit(model="other").runs.get().pk, backend="bubblewrap")
    done = evaluated(model="third")
    limit = timedelta(seconds=settings.DKB_EVAL_TIMEOUT_S + services.RECLAIM_GRACE_S)
    EvaluationRun.objects.filter(pk__in=[lost.pk, done.pk]).update(
        started=timezone.now() - limit - timedelta(minutes=1)
    )
    EvaluationRun.objects.filter(pk=live.pk).update(started=timezone.now() - limit + timedelta(minutes=5))

    assert services.evaluation_reclaim_stale() == 1
    lost.refresh_from_db(), live.refresh_from_db(), done.refresh_from_db()
    assert (lost.status, lost.retryable) == (EvaluationRun.Status.FAILED, True)
    assert lost.error.startswith("worker lost") and not lost.results.exists()
    assert live.status == EvaluationRun.Status.RUNNING
    assert done.status == EvaluationRun.Status.SUCCEEDED
    assert services.evaluation_reclaim_stale() == 0


def test_recording_a_report_keeps_whether_its_timing_may_be_ranked(submit, make_report, timed_report) -> None:
    cpu_run = services.evaluation_record(run=submit().runs.get(), report=make_report())
    stable = services.evaluation_record(run=submit().runs.get(), report=timed_report())
    unstable = services.evaluation_record(run=submit().runs.get(), report=timed_report(kernel_n=3))
    assert [r.timing_ranked for r in (cpu_run, stable, unstable)] == [False, True, False]


def test_progress_is_kept_only_while_the_run_is_running(submit) -> None:
    run = submit().runs.get()
    event = {"done": 0, "total": 1, "query": 6, "phase": "started", "status": ""}
    assert not services.evaluation_progress(run=run, progress=event)  # still queued
    services.evaluation_claim(run_id=run.pk, backend="bubblewrap")
    assert services.evaluation_progress(run=run, progress=event)
    run.refresh_from_db()
    assert (run.status, run.progress) == ("running", event)


def test_calibration_rows_are_stored_once_per_setup_and_failed_ones_skipped(q6, cpu) -> None:
    from leaderboard.models import BaselineCalibration

    key = {"hardware": "cpu", "harness": "0.5.0", "torch": "2.13.0"}
    row = {
        "query": 6,
        "mode": "eager",
        "eager_ms": 2.5,
        "compiled_ms": None,
        "eager_stderr_pct": 0.8,
        "compiled_stderr_pct": None,
        "rounds": 30,
        "compile_s": 0.0,
    }
    failed = {"query": 6, "error": "Traceback: out of memory"}
    unknown = row | {"query": 1}  # Q1 is not loaded in this test
    assert len(services.baseline_calibration_store(hardware=cpu, rows=[row, failed, unknown], key=key)) == 1
    services.baseline_calibration_store(hardware=cpu, rows=[row | {"eager_ms": 2.4}], key=key)
    services.baseline_calibration_store(hardware=cpu, rows=[row], key=key | {"torch": "2.14.0"})
    assert sorted(BaselineCalibration.objects.values_list("torch_version", "eager_ms")) == [
        ("2.13.0", 2.4),
        ("2.14.0", 2.5),
    ]
