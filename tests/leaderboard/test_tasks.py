"""The evaluation task around the sandbox. The real sandbox runs in test_end_to_end.py; here it is
replaced where a test needs it to fail in a particular way, which a real one cannot be made to do on cue."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import IntegrityError

import sandbox
from evaluator import evaluation
from leaderboard import services
from leaderboard.models import EvaluationRun
from leaderboard.tasks import PROCESS_SANDBOX_WARNING, evaluation_execute

pytestmark = pytest.mark.django_db


@pytest.fixture
def sandbox_jobs(monkeypatch: pytest.MonkeyPatch, make_report) -> list[dict[str, Any]]:
    """Replace the sandbox with one that records its job and the kernel files it was given."""
    jobs: list[dict[str, Any]] = []

    def evaluate(job: evaluation.Job, *, backend: str, **_: Any) -> dict[str, Any]:
        files = {p.name: p.read_text() for p in Path(job.kernel_dir).iterdir()}
        jobs.append({"job": job, "backend": backend, "files": files})
        return make_report(backend=backend)

    monkeypatch.setattr(evaluation, "evaluate", evaluate)
    return jobs


def test_a_queued_run_is_evaluated_with_its_kernels_and_recorded(submit, sandbox_jobs, settings) -> None:
    run = submit().runs.get()
    assert evaluation_execute(run.pk) == f"run {run.pk}: succeeded"
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.SUCCEEDED
    assert run.results.get().status == "passed"
    [call] = sandbox_jobs
    assert set(call["files"]) == {"manifest.json", "q06.py"}
    assert call["job"].device == "cpu"
    assert call["job"].scale_factor == 0.01
    assert call["job"].data_dir == settings.DKB_DATA_DIR
    assert call["backend"] == "bubblewrap"
    assert call["job"].queries == ()  # a ranked run reports all 22; only the set's own get a runner
    assert call["job"].check_scale_factors == ()  # "auto" adds none below SF1: CPU runs stay quick


def test_the_check_scale_factors_setting_reaches_the_sandbox(submit, sandbox_jobs, settings) -> None:
    settings.DKB_CHECK_SCALE_FACTORS = "0.005"
    evaluation_execute(submit().runs.get().pk)
    [call] = sandbox_jobs
    assert call["job"].check_scale_factors == (0.005,)


def test_a_feedback_run_evaluates_only_the_sets_own_queries(
    submit, sandbox_jobs, uploader, kernel_set
) -> None:
    from leaderboard import services

    submission = services.submission_create(
        uploader=uploader, kernel_set=kernel_set, kind="feedback", enqueue=False
    )
    run = submission.runs.get()
    evaluation_execute(run.pk)
    [call] = sandbox_jobs
    assert call["job"].queries == (6,)
    run.refresh_from_db()
    assert run.kind == EvaluationRun.Kind.FEEDBACK and not EvaluationRun.objects.ranked().filter(pk=run.pk)


def test_a_run_that_is_not_queued_is_left_alone(submit, sandbox_jobs) -> None:
    run = submit().runs.get()
    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.RUNNING)
    assert "not queued" in evaluation_execute(run.pk)
    assert sandbox_jobs == []


def test_a_sandbox_failure_fails_the_run_with_its_message(submit, monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable(job: evaluation.Job, *, backend: str, **_: Any) -> dict[str, Any]:
        raise sandbox.SandboxUnavailable("bubblewrap cannot create a user namespace here")

    monkeypatch.setattr(evaluation, "evaluate", unavailable)
    run = submit().runs.get()
    evaluation_execute(run.pk)
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.FAILED
    assert run.retryable
    assert "SandboxUnavailable: bubblewrap cannot create a user namespace here" in run.error


def test_a_report_the_database_refuses_fails_the_run_at_once_and_retryably(
    submit, make_report, monkeypatch: pytest.MonkeyPatch
) -> None:
    def evaluate(job: evaluation.Job, *, backend: str, **_: Any) -> dict[str, Any]:
        return make_report() | {"pass_rate": 1.5}  # the run_pass_rate_is_a_fraction constraint refuses it

    monkeypatch.setattr(evaluation, "evaluate", evaluate)
    run = submit().runs.get()
    with pytest.raises(IntegrityError):
        evaluation_execute(run.pk)
    run.refresh_from_db()
    assert (run.status, run.retryable, run.report) == (EvaluationRun.Status.FAILED, True, None)
    assert run.error.startswith("report not recorded: IntegrityError")
    assert not run.results.exists()  # nothing half-stored


def test_the_evaluation_s_progress_is_kept_on_the_run_as_it_goes(
    submit, make_report, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, str]] = []

    def evaluate(
        job: evaluation.Job, *, backend: str, progress: Callable[[evaluation.Progress], None], **_: Any
    ) -> dict[str, Any]:
        events = [
            evaluation.Progress(0, 2, 1, "started"),
            evaluation.Progress(1, 2, 1, "ended", "passed"),
            evaluation.Progress(1, 2, 6, "started"),
        ]
        for event in events:
            progress(event)
            stored = EvaluationRun.objects.get(pk=run.pk)
            seen.append((stored.status, stored.progress_text))
        return make_report()

    monkeypatch.setattr(evaluation, "evaluate", evaluate)
    run = submit().runs.get()
    evaluation_execute(run.pk)
    assert seen == [
        ("running", "query 1 of 2: Q1 started"),
        ("running", "query 1 of 2: Q1 ended (passed)"),
        ("running", "query 2 of 2: Q6 started"),
    ]
    run.refresh_from_db()
    assert run.progress == {"done": 1, "total": 2, "query": 6, "phase": "started", "status": ""}


def test_progress_after_the_run_was_failed_meanwhile_leaves_it_failed(
    submit, make_report, monkeypatch: pytest.MonkeyPatch
) -> None:
    def evaluate(
        job: evaluation.Job, *, backend: str, progress: Callable[[evaluation.Progress], None], **_: Any
    ) -> dict[str, Any]:
        services.evaluation_fail(run=run, error="marked failed by root: worker lost", retryable=True)
        progress(evaluation.Progress(1, 1, 6, "ended", "passed"))
        return make_report()

    monkeypatch.setattr(evaluation, "evaluate", evaluate)
    run = submit().runs.get()
    with pytest.raises(ValueError, match="already failed"):
        evaluation_execute(run.pk)
    run.refresh_from_db()
    assert (run.status, run.progress, run.error) == ("failed", None, "marked failed by root: worker lost")


def test_the_process_sandbox_is_announced_on_stdout(submit, sandbox_jobs, settings, capsys) -> None:
    settings.DKB_SANDBOX = "process"
    run = submit().runs.get()
    evaluation_execute(run.pk)
    assert PROCESS_SANDBOX_WARNING in capsys.readouterr().out
    run.refresh_from_db()
    assert (run.sandbox_backend, run.isolated) == ("process", False)


def test_a_worker_says_at_start_how_kernels_are_isolated(settings, capsys) -> None:
    from leaderboard.apps import announce_sandbox

    settings.DKB_SANDBOX = "process"
    announce_sandbox(sender="django_q", proc_name="Worker-1")
    assert "WITHOUT isolation" in capsys.readouterr().out
