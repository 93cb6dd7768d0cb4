from __future__ import annotations

from typing import Any

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


def _change_form_data(page: Any) -> dict[str, Any]:
    """What the admin's change form would post back unchanged: its fields and inline formsets."""
    forms = [page.context["adminform"].form]
    data: dict[str, Any] = {}
    for inline in page.context["inline_admin_formsets"]:
        forms += [inline.formset.management_form, *inline.formset.forms]
    for form in forms:
        for name in form.fields:
            value = form[name].value()
            if value is None or value is False:
                continue
            data[form.add_prefix(name)] = "on" if value is True else value
    return data


def test_hiding_from_the_change_form_takes_the_set_off_the_cached_ranking_and_its_page_says_why(
    admin_client, anonymous, evaluated, django_capture_on_commit_callbacks
) -> None:
    run = evaluated(model="Cheating LLM", device="cuda")
    url = f"/admin/leaderboard/submission/{run.submission_id}/change/"
    assert "Cheating LLM" in anonymous.get("/").content.decode()  # cached now
    data = _change_form_data(admin_client.get(url)) | {
        "hidden": "on",
        "hidden_reason": "timed a cached answer",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert "Cheating LLM" not in anonymous.get("/").content.decode()
    assert "Cheating LLM" not in anonymous.get("/queries/6/").content.decode()
    page = anonymous.get(f"/submissions/{run.submission_id}/").content.decode()
    assert "Taken off the rankings by the moderators:\n  timed a cached answer" in page


def test_an_evaluated_sets_kernels_and_manifest_cannot_be_changed_in_the_admin(
    admin_client, evaluated
) -> None:
    run = evaluated(model="Measured LLM")
    url = f"/admin/leaderboard/submission/{run.submission_id}/change/"
    page = admin_client.get(url)
    html = page.content.decode()
    assert 'name="kernels-0-source"' not in html and 'name="notes"' not in html
    data = _change_form_data(page) | {"kernels-0-source": "def run_query(tables): ...", "notes": "edited"}
    assert admin_client.post(url, data).status_code == 302
    submission = Submission.objects.get()
    assert (
        submission.notes != "edited" and "def run_query(tables): ..." not in submission.kernels.get().source
    )
    assert submission.language_model.name == "Measured LLM"


def test_a_set_no_worker_has_taken_up_can_still_be_corrected_in_the_admin(admin_client, submit) -> None:
    submission = submit()
    url = f"/admin/leaderboard/submission/{submission.pk}/change/"
    page = admin_client.get(url)
    assert 'name="kernels-0-source"' in page.content.decode()
    data = _change_form_data(page) | {"notes": "typo fixed"}
    assert admin_client.post(url, data).status_code == 302
    assert Submission.objects.get().notes == "typo fixed"


@pytest.fixture
def ranked_gpu_sets(submit: Any, gpu: Any, timed_report: Any) -> Any:
    """`make(speedups)`: one published set per speedup, each with a stable ranked H200 run of `version`."""
    from leaderboard import services

    def make(*speedups: float, version: str = "0.5.0") -> list[EvaluationRun]:
        runs = []
        for number, speedup in enumerate(speedups):
            run = submit(model=f"LLM {number}").runs.get(hardware=gpu)  # queued there at upload
            report = timed_report(baseline_ms=2.0, kernel_ms=2.0 / speedup) | {"harness_version": version}
            runs.append(services.evaluation_record(run=run, report=report))
        return runs

    return make


def test_rerunning_a_hardwares_top_n_asks_how_many_then_queues_them_as_one_batch(
    admin_client: Any, gpu: Any, ranked_gpu_sets: Any
) -> None:
    slow, best, second, third = ranked_gpu_sets(1.1, 4.0, 3.0, 2.0)
    action = {"action": "rerun_top", "_selected_action": [gpu.pk]}
    asked = admin_client.post("/admin/leaderboard/hardware/", action)
    assert asked.status_code == 200 and b'name="count"' in asked.content  # the intermediate form
    assert not EvaluationRun.objects.filter(rerun_of__isnull=False).exists()
    done = admin_client.post(
        "/admin/leaderboard/hardware/", action | {"apply": "1", "count": "3"}, follow=True
    )
    assert "3 rerun(s) of its top 3 queued" in done.content.decode()
    reruns = EvaluationRun.objects.filter(rerun_of__isnull=False)
    assert {run.rerun_of for run in reruns} == {best, second, third}
    assert {(run.status, run.hardware, run.kind) for run in reruns} == {("queued", gpu, "ranked")}


def test_the_batch_leaves_sets_the_current_harness_measured_or_that_wait_for_a_run(
    admin_client: Any, gpu: Any, ranked_gpu_sets: Any
) -> None:
    import evaluator
    from leaderboard import services

    (current,) = ranked_gpu_sets(4.0, version=evaluator.HARNESS_VERSION)
    old, waiting = ranked_gpu_sets(3.0, 2.0)
    services.evaluation_rerun(run=waiting)
    assert services.evaluation_rerun_top(hardware=gpu, count=10) != []
    assert set(EvaluationRun.objects.filter(rerun_of__isnull=False).values_list("rerun_of", flat=True)) == {
        old.pk,
        waiting.pk,  # the one rerun it already had; none added
    }
    assert services.evaluation_rerun_top(hardware=gpu, count=10) == []  # twice: nothing more


def test_a_bad_count_asks_again_and_an_inactive_hardware_queues_nothing(
    admin_client: Any, gpu: Any, ranked_gpu_sets: Any
) -> None:
    ranked_gpu_sets(2.0)
    action = {"action": "rerun_top", "_selected_action": [gpu.pk], "apply": "1"}
    again = admin_client.post("/admin/leaderboard/hardware/", action | {"count": "0"})
    assert again.status_code == 200 and b'name="count"' in again.content
    gpu.active = False
    gpu.save()
    done = admin_client.post("/admin/leaderboard/hardware/", action | {"count": "5"}, follow=True)
    assert "inactive, no worker; nothing queued" in done.content.decode()
    assert not EvaluationRun.objects.filter(status="queued", hardware=gpu).exists()
