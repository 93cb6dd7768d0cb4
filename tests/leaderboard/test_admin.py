from __future__ import annotations

import pytest

from leaderboard.models import EvaluationRun, Submission

pytestmark = pytest.mark.django_db


def test_rerunning_a_run_from_the_admin_adds_a_new_queued_run(admin_client, evaluated) -> None:
    run = evaluated()
    response = admin_client.post(
        "/admin/leaderboard/evaluationrun/",
        {"action": "rerun_evaluation", "_selected_action": [run.pk]},
        follow=True,
    )
    assert response.status_code == 200
    rerun = EvaluationRun.objects.exclude(pk=run.pk).get()
    assert (rerun.status, rerun.rerun_of, rerun.submission) == ("queued", run, run.submission)
    run.refresh_from_db()
    assert run.status == "succeeded"
    assert run.results.count() == 1


def test_rerunning_a_submission_reruns_its_latest_run_per_hardware(admin_client, evaluated) -> None:
    run = evaluated()
    admin_client.post(
        "/admin/leaderboard/submission/", {"action": "rerun_latest", "_selected_action": [run.submission_id]}
    )
    assert EvaluationRun.objects.filter(rerun_of=run).count() == 1


def test_hiding_a_submission_from_the_admin_takes_it_off_the_ranking(
    admin_client, anonymous, evaluated
) -> None:
    run = evaluated(model="Cheating LLM", device="cuda")
    admin_client.post(
        "/admin/leaderboard/submission/",
        {"action": "hide_submissions", "_selected_action": [run.submission_id]},
    )
    assert Submission.objects.get().hidden
    assert "Cheating LLM" not in anonymous.get("/").content.decode()


def test_the_admin_pages_render(admin_client, evaluated) -> None:
    run = evaluated()
    for url in (
        "/admin/leaderboard/submission/",
        f"/admin/leaderboard/submission/{run.submission_id}/change/",
        "/admin/leaderboard/evaluationrun/",
        f"/admin/leaderboard/evaluationrun/{run.pk}/change/",
        "/admin/leaderboard/hardware/",
        "/admin/leaderboard/query/",
        "/admin/leaderboard/baselinecalibration/",
    ):
        assert admin_client.get(url).status_code == 200, url


def test_the_admin_is_closed_to_uploaders(uploader_client, db) -> None:
    assert uploader_client.get("/admin/leaderboard/submission/").status_code == 302


def test_a_run_left_running_by_a_lost_worker_can_be_failed_from_the_admin(admin_client, submit) -> None:
    run = submit().runs.get()
    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.RUNNING)
    admin_client.post(
        "/admin/leaderboard/evaluationrun/", {"action": "fail_stuck_runs", "_selected_action": [run.pk]}
    )
    run.refresh_from_db()
    assert (run.status, run.retryable) == ("failed", True)
    assert "worker lost" in run.error


def test_calibrating_a_hardwares_baselines_from_the_admin_queues_it_on_that_hardwares_worker(
    admin_client, cpu, django_capture_on_commit_callbacks
) -> None:
    from django_q.brokers import get_broker
    from django_q.signing import SignedPackage

    broker = get_broker(cpu.queue)
    before = broker.queue_size()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/leaderboard/hardware/", {"action": "calibrate_baselines", "_selected_action": [cpu.pk]}
        )
    assert response.status_code == 302
    assert broker.queue_size() == before + 1
    task = SignedPackage.loads(broker.dequeue()[-1][1])
    assert (task["func"], task["args"]) == ("leaderboard.tasks.baseline_calibrate", (cpu.pk,))
