from __future__ import annotations

import datetime
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from pytest_django.asserts import assertContains, assertNotContains, assertRedirects

from leaderboard import services
from leaderboard.models import EvaluationRun, Submission

pytestmark = pytest.mark.django_db


def test_the_ranking_lists_evaluated_submissions_best_first(anonymous, evaluated) -> None:
    evaluated(model="Slow LLM", kernel_ms=4.0, device="cuda")
    evaluated(model="Fast LLM", kernel_ms=0.5, device="cuda")
    page = anonymous.get("/")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.index("Fast LLM") < html.index("Slow LLM")
    assertContains(page, "4.00×")
    assertContains(page, "Triton")


def test_cpu_runs_are_listed_as_correctness_only_below_the_ranking(anonymous, evaluated) -> None:
    evaluated(model="CPU LLM")
    page = anonymous.get("/")
    assertContains(page, "Nothing is ranked yet")  # and it says why, not "upload one"
    unranked = page.content.decode().split('<table class="unranked">')[1]
    assert "CPU LLM" in unranked
    assert '<span class="badge warn">correctness only</span>' in unranked
    assert '<span class="muted small">timed on a CPU</span>' in unranked  # beside the label, not repeating it
    assert '<span class="badge cpu">CPU</span>' in unranked


def test_a_run_against_uncalibrated_baselines_is_not_ranked_and_its_page_says_why(
    anonymous, submit, timed_report
) -> None:
    run = submit(model="Cold LLM").runs.get()
    services.evaluation_record(run=run, report=timed_report(calibrated=False))
    home = anonymous.get("/").content.decode()
    assert "Cold LLM" not in home.split('<table class="unranked">')[0]
    assert "baselines not calibrated on this hardware: Q6" in home.split('<table class="unranked">')[1]
    page = anonymous.get(f"/submissions/{run.submission_id}/")
    assertContains(page, "uncalibrated baselines</span>", count=2)  # the runs table and the notice
    assertContains(page, "not by the hardware's calibration on an idle machine")
    # What the baseline ran as is the default, not a calibration's choice: neither page says otherwise.
    assertContains(
        page,
        "Timed against each query&#x27;s TorchPlan in its default mode (compiled for Q6), since this "
        "hardware&#x27;s calibration recorded no mode for them.",
    )
    kernel = anonymous.get(f"/submissions/{run.submission_id}/kernels/6/?run={run.pk}")
    assertContains(kernel, "this hardware's calibration has no record of Q6")
    assertNotContains(kernel, "calibration recorded")
    # The run was asked for as a ranked one, but its header says what came of it, as the notice does.
    assertContains(kernel, ", not ranked, harness")
    assertNotContains(kernel, ", ranked, harness")


def test_an_unstable_run_is_not_ranked_and_its_page_shows_each_unsure_interval(
    anonymous, submit, timed_report
) -> None:
    run = submit(model="Noisy LLM").runs.get()
    report = timed_report(kernel_ms=1.25, kernel_stderr_pct=3.5, kernel_n=18, set_aside=357)
    services.evaluation_record(run=run, report=report)
    home = anonymous.get("/").content.decode()
    assert "Noisy LLM" not in home.split('<table class="unranked">')[0]  # not in the ranking
    assert "unsure medians in Q6" in home.split('<table class="unranked">')[1]
    page = anonymous.get(f"/submissions/{run.submission_id}/")
    assertContains(page, "unstable timing</span>", count=2)  # the runs table and the notice
    assertContains(page, "Not ranked: unsure medians in Q6.")
    assertContains(page, "the kernel&#x27;s median has a 3.5% standard error, over 2%")
    assertContains(page, "baseline 2.000 ms ± 0.5%")
    assertContains(page, "kernel 1.250 ms ± 3.5%")
    # Few samples left, and why: most rounds ran on a slowed host and were not counted.
    assertContains(page, "(n=18; 357 rounds set aside as timed on a slowed host)")
    kernel = anonymous.get(f"/submissions/{run.submission_id}/kernels/6/?run={run.pk}")
    assertContains(kernel, '<td class="num">357 <span class="muted small">(1.250 ms)</span></td>')


def test_a_ranked_run_carries_no_label(anonymous, submit, timed_report) -> None:
    run = submit(model="Steady LLM").runs.get()
    services.evaluation_record(run=run, report=timed_report())
    assertContains(anonymous.get("/"), "Steady LLM")
    page = anonymous.get(f"/submissions/{run.submission_id}/")
    assertNotContains(page, "Not ranked")
    assertNotContains(page, "badge warn")
    assertContains(page, "compiled")  # the mode Q6's baseline was timed in


def test_the_ranking_leaves_out_hidden_submissions(anonymous, evaluated) -> None:
    evaluated(model="Honest LLM", device="cuda")
    cheat = evaluated(model="Cheating LLM", kernel_ms=0.001)
    services.submission_hide(submission=cheat.submission)
    page = anonymous.get("/")
    assertContains(page, "Honest LLM")
    assertNotContains(page, "Cheating LLM")


def test_the_ranking_is_fresh_after_a_new_result(anonymous, submit, evaluated, make_report) -> None:
    evaluated(model="First LLM", device="cuda")
    assertNotContains(anonymous.get("/"), "Second LLM")
    run = submit(model="Second LLM").runs.get()
    services.evaluation_record(run=run, report=make_report(device="cuda"))
    services.results_changed()  # what on_commit does once the record's transaction commits
    assertContains(anonymous.get("/"), "Second LLM")


def test_the_empty_ranking_invites_an_upload(anonymous, db) -> None:
    assertContains(anonymous.get("/"), "No evaluated submissions yet")


def test_the_ranking_shows_the_mean_roofline_and_the_kernels_flagged_for_review(
    anonymous, submit, make_report
) -> None:
    report = make_report(kernel_ms=0.1, device="cuda")  # 20x: the harness flags it
    report["queries"][0]["stats"]["flagged"] = "near the bandwidth floor or > 10x faster: flagged for review"
    run = services.evaluation_record(run=submit(model="Flagged LLM").runs.get(), report=report)
    row = anonymous.get("/").content.decode().split('<table class="ranking">')[1].split("</tr>")[1]
    assert "Flagged LLM" in row
    assert '<td class="num wide-only">42%</td>' in row  # make_report's roofline, the one passing kernel
    assert '<span class="badge warn">1</span>' in row
    page = anonymous.get(f"/submissions/{run.submission_id}/")
    assertContains(
        page, 'title="near the bandwidth floor or &gt; 10x faster: flagged for review">flagged</span>'
    )


def test_an_unknown_hardware_filter_is_a_404(anonymous, db) -> None:
    assert anonymous.get("/?hardware=nope").status_code == 404


def test_the_ranking_and_its_chart_can_be_narrowed_to_one_scope(
    anonymous, cpu, submit, evaluated, make_report
) -> None:
    evaluated(model="Full LLM", device="cuda")
    core = submit(model="Core LLM", scope="core").runs.get()
    services.evaluation_record(run=core, report=make_report(device="cuda"))
    for scope, shown, left_out in (("core", "Core LLM", "Full LLM"), ("full", "Full LLM", "Core LLM")):
        page = anonymous.get(f"/?scope={scope}&hardware={cpu.slug}").content.decode()
        ranking = page.split("<h2>Ranking</h2>")[1].split("<h2>Latest submissions</h2>")[0]
        assert shown in ranking and left_out not in ranking
        assert f'/charts/ranking.svg?hardware={cpu.slug}&amp;scope={scope}"' in page
        chart = anonymous.get(f"/charts/ranking.svg?scope={scope}").content.decode()
        assert shown in chart and left_out not in chart
    both = anonymous.get("/").content.decode()
    assert "Core LLM" in both and "Full LLM" in both
    assert anonymous.get("/?scope=everything").status_code == 404
    assert anonymous.get("/charts/ranking.svg?scope=everything").status_code == 404


def test_the_ranking_chart_is_an_svg_of_ranked_runs_only(anonymous, evaluated) -> None:
    evaluated(model="GPU LLM", device="cuda")
    evaluated(model="CPU LLM")
    response = anonymous.get("/charts/ranking.svg")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert b"<svg" in response.content
    assert b"GPU LLM" in response.content
    assert b"CPU LLM" not in response.content


def test_a_passing_kernel_far_slower_than_the_baseline_reads_with_significant_figures(
    anonymous, evaluated
) -> None:
    run = evaluated(baseline_ms=0.044, kernel_ms=10.0)
    page = anonymous.get(f"/submissions/{run.submission_id}/")
    assertContains(page, "0.0044×")
    assertNotContains(page, "0.00×")


def test_the_ranking_chart_shows_the_best_set_per_model_and_kernels_slower_than_1x(
    anonymous, evaluated
) -> None:
    evaluated(model="Twice LLM", kernel_ms=1.0, device="cuda")
    evaluated(model="Twice LLM", kernel_ms=1.5, device="cuda")
    evaluated(model="Slow LLM", baseline_ms=0.044, kernel_ms=10.0, device="cuda")
    svg = anonymous.get("/charts/ranking.svg").content.decode()
    assert svg.count("<!-- Twice LLM Triton-full · 100% pass -->") == 1  # its best set only
    assert "2.00x (alone 2.00x)" in svg
    assert "1.00x (alone 0.0044x)" in svg


def test_a_run_page_says_what_each_query_was_timed_against_as_the_report_says(
    anonymous, submit, evaluated, timed_report
) -> None:
    run = submit(model="Recorded LLM").runs.get()
    services.evaluation_record(run=run, report=timed_report())  # baseline "recorded", Q6 compiled
    page = anonymous.get(f"/submissions/{run.submission_id}/")
    assertContains(
        page,
        "Timed against each query&#x27;s TorchPlan in the mode this hardware&#x27;s calibration recorded: "
        "compiled for Q6.",
    )
    assertNotContains(page, "compiled TorchPlan")
    kernel = anonymous.get(f"/submissions/{run.submission_id}/kernels/6/?run={run.pk}")
    assertContains(kernel, "the mode this hardware's calibration recorded for Q6")
    older = evaluated(model="Older LLM", baseline="best")
    assertContains(
        anonymous.get(f"/submissions/{older.submission_id}/"),
        "Timed against the faster of the eager and the compiled TorchPlan, per query",
    )


def test_a_submission_page_shows_per_query_results_and_highlighted_sources(anonymous, evaluated) -> None:
    run = evaluated(baseline_ms=3.0, kernel_ms=1.5)
    page = anonymous.get(f"/submissions/{run.submission_id}/")
    assert page.status_code == 200
    assertContains(page, "Q6")
    assertContains(page, "passed")
    assertContains(page, "3.000")  # baseline ms
    assertContains(page, "1.500")  # kernel ms
    assertContains(page, "2.00×")
    assertContains(page, '<td class="num">–</td>')  # no roofline: a CPU has no peak bandwidth
    assertContains(page, "q06.py")
    assertContains(page, "TorchPlan baseline")
    assertContains(page, '<div class="highlight">')
    assertContains(page, "_query_core")  # the TorchPlan's source beside the kernel
    assertContains(page, "CPU timings through the Triton interpreter")
    assertContains(page, '<span class="badge warn">correctness only</span>')
    assertContains(page, "Not ranked: timed on a CPU.")


def test_a_running_run_shows_which_query_it_is_on_and_the_page_refreshes(anonymous, submit) -> None:
    run = submit().runs.get()
    services.evaluation_claim(run_id=run.pk, backend="bubblewrap")
    services.evaluation_progress(
        run=run, progress={"done": 0, "total": 3, "query": 6, "phase": "started", "status": ""}
    )
    page = anonymous.get(f"/submissions/{run.submission_id}/")
    assertContains(page, "query 1 of 3: Q6 started", count=2)  # runs table and the run's notice
    assertContains(page, 'http-equiv="refresh"')


def test_a_submission_page_explains_a_failed_evaluation(anonymous, submit) -> None:
    run = submit().runs.get()
    services.evaluation_fail(run=run, error="SandboxTimeout: over 1800 s", retryable=True)
    page = anonymous.get(f"/submissions/{run.submission_id}/")
    assertContains(page, "could not be completed")
    assertContains(page, "SandboxTimeout: over 1800 s")


def test_a_submission_page_refreshes_while_a_run_is_queued(anonymous, submit) -> None:
    submission = submit()
    page = anonymous.get(f"/submissions/{submission.pk}/")
    assertContains(page, 'http-equiv="refresh"')
    assertContains(page, "queued")


def test_a_submission_page_can_show_an_older_run(anonymous, evaluated, make_report) -> None:
    first = evaluated(kernel_ms=1.0)
    rerun = services.evaluation_record(
        run=services.evaluation_rerun(run=first), report=make_report(kernel_ms=0.5)
    )
    page = anonymous.get(f"/submissions/{first.submission_id}/?run={first.pk}")
    assert page.context["run"] == first
    assertContains(page, f"rerun of {first.pk}")
    assert anonymous.get(f"/submissions/{first.submission_id}/").context["run"] == rerun


def test_a_submission_page_opens_on_its_ranked_run_rather_than_a_newer_correctness_only_one(
    anonymous, submit, gpu, make_report, timed_report
) -> None:
    submission = submit()
    on_gpu = services.evaluation_enqueue(submission=submission, hardware=gpu, enqueue=False)
    ranked = services.evaluation_record(run=on_gpu, report=timed_report())
    EvaluationRun.objects.filter(pk=ranked.pk).update(created=ranked.created - datetime.timedelta(days=1))
    on_cpu = submission.runs.get(hardware__device="cpu")
    checked = services.evaluation_record(run=on_cpu, report=make_report())
    assert checked.timing_label == "correctness only"
    assert anonymous.get(f"/submissions/{submission.pk}/").context["run"] == ranked
    assert anonymous.get(f"/submissions/{submission.pk}/?run={checked.pk}").context["run"] == checked


def test_a_run_of_another_submission_is_a_404(anonymous, evaluated) -> None:
    mine, other = evaluated(), evaluated()
    assert anonymous.get(f"/submissions/{mine.submission_id}/?run={other.pk}").status_code == 404


def test_a_hidden_submission_stays_at_its_address_and_says_why(anonymous, submit) -> None:
    submission = services.submission_hide(submission=submit(), reason="it timed a cached answer")
    page = anonymous.get(f"/submissions/{submission.pk}/")
    assertContains(page, "Taken off the rankings by the moderators:\n  it timed a cached answer")


def test_a_private_submission_is_not_found_by_the_public(anonymous, uploader_client, submit) -> None:
    submission = submit(published=False)
    assert anonymous.get(f"/submissions/{submission.pk}/").status_code == 404
    page = uploader_client.get(f"/submissions/{submission.pk}/")
    assertContains(page, "This set is <strong>private</strong>")
    assertContains(page, "Publish this set")


def test_the_not_found_page_uses_the_site_template(anonymous, db) -> None:
    page = anonymous.get("/submissions/999/")
    assert page.status_code == 404
    assertContains(page, "There is nothing at this address", status_code=404)


def test_two_sets_compare_side_by_side_per_query(anonymous, evaluated) -> None:
    fast = evaluated(model="Fast LLM", kernel_ms=0.5, device="cuda")
    wrong = evaluated(model="Wrong LLM", status="wrong_answer", reason="row 3 differs", device="cuda")
    page = anonymous.get(f"/compare/?a={fast.submission_id}&b={wrong.submission_id}")
    html = page.content.decode()
    row = html.split('<a href="/queries/6/">Q6</a>')[1].split("</tr>")[0]
    assert row.index("4.00×") < row.index("wrong answer")
    assert f'/submissions/{fast.submission_id}/kernels/6/?run={fast.pk}">kernel' in row
    assert "Fast LLM" in html and "Wrong LLM" in html


def test_a_comparison_needs_two_set_numbers(anonymous, db) -> None:
    assertContains(anonymous.get("/compare/?a=1"), "needs two set numbers", status_code=404)
    assertContains(anonymous.get("/compare/?a=1&b=x"), "needs two set numbers", status_code=404)


def test_comparing_with_a_set_one_may_not_see_says_which_number(anonymous, evaluated) -> None:
    shown = evaluated(model="Shown LLM")
    private = evaluated(model="Private LLM", published=False)
    for other in (private.submission_id, 999):
        page = anonymous.get(f"/compare/?a={shown.submission_id}&b={other}")
        assertContains(page, f"There is no set #{other} to compare", status_code=404)
        assertNotContains(page, "Private LLM", status_code=404)


def test_the_query_pages_show_sql_and_the_torchplan(anonymous, q6, evaluated) -> None:
    evaluated(model="Fast LLM", kernel_ms=0.5, device="cuda")
    listing = anonymous.get("/queries/")
    assertContains(listing, "Forecasting Revenue Change")
    page = anonymous.get("/queries/6/")
    assertContains(page, "l_extendedprice")
    assertContains(page, "run_query")
    assertContains(page, "Fast LLM")
    assert anonymous.get("/queries/1/").status_code == 404


def test_a_query_page_ranks_only_stable_speeds_and_lists_the_rest_as_correct(
    anonymous, q6, evaluated, submit, timed_report
) -> None:
    evaluated(model="CPU LLM")
    services.evaluation_record(run=submit(model="Noisy LLM").runs.get(), report=timed_report(kernel_n=5))
    services.evaluation_record(run=submit(model="Steady LLM").runs.get(), report=timed_report())
    html = anonymous.get("/queries/6/").content.decode()
    fastest, correct = html.split("Correct, timing not ranked")
    assert "Steady LLM" in fastest and "CPU LLM" not in fastest and "Noisy LLM" not in fastest
    assert "CPU LLM" in correct and "correctness only" in correct
    assert "Noisy LLM" in correct and "the kernel was timed 5 times, fewer than 10" in correct


def test_a_query_page_lists_each_set_once_at_its_latest_ranked_run(
    anonymous, q6, evaluated, make_report
) -> None:
    first = evaluated(model="Rerun LLM", kernel_ms=3.0, device="cuda")  # 0.67x
    services.evaluation_record(
        run=services.evaluation_rerun(run=first), report=make_report(kernel_ms=0.8, device="cuda")
    )
    fastest = anonymous.get("/queries/6/").content.decode().split("Fastest passing kernels")[1]
    assert fastest.count("Rerun LLM") == 1
    assert "2.50×" in fastest and "0.67×" not in fastest


def test_model_names_are_shown_as_given_even_when_they_slugify_alike(anonymous, evaluated) -> None:
    evaluated(model="GPT-4o", device="cuda")
    evaluated(model="gpt 4o", device="cuda")
    ranking = anonymous.get("/").content.decode().split('<table class="ranking">')[1]
    assert ">GPT-4o</a>" in ranking and ">gpt 4o</a>" in ranking


def test_a_query_page_shows_each_hardwares_recorded_baseline_and_the_rule(anonymous, q6, cpu, gpu) -> None:
    from evaluator import HARNESS_VERSION
    from evaluator.harness import baselines

    rows = [
        {
            "query": 6,
            "mode": "compiled",
            "eager_ms": 3.0,
            "compiled_ms": 1.2,
            "eager_stderr_pct": 0.4,
            "compiled_stderr_pct": 0.3,
            "rounds": 120,
            "compile_s": 14.2,
        }
    ]
    services.baseline_calibration_store(
        hardware=gpu,
        rows=rows,
        key={"hardware": "NVIDIA H200", "harness": HARNESS_VERSION, "torch": "2.13.0"},
    )
    page = anonymous.get("/queries/6/")
    assertContains(page, baselines.RULE)
    html = page.content.decode().split('<table class="results calibrations">')[1]
    assert "NVIDIA H200" in html and "<strong>compiled</strong>" in html
    assert "3.000" in html and "1.200" in html and "± 0.3%" in html
    assert "Test CPU" not in html  # not calibrated


def test_a_query_page_says_when_no_hardware_was_calibrated(anonymous, q6) -> None:
    assertContains(anonymous.get("/queries/6/"), "No hardware has a recorded baseline calibration")


def test_uploading_needs_an_account(anonymous, db) -> None:
    assertRedirects(anonymous.get("/upload/"), "/accounts/login/?next=/upload/")


def test_the_login_page_logs_an_uploader_in(anonymous, uploader, password) -> None:
    assert anonymous.get("/accounts/login/").status_code == 200
    response = anonymous.post("/accounts/login/", {"username": uploader.username, "password": password})
    assertRedirects(response, "/upload/")


def test_uploading_files_through_the_form_stores_the_set(uploader_client, q6, cpu, example_dir) -> None:
    data = {
        "manifest": SimpleUploadedFile("manifest.json", (example_dir / "manifest.json").read_bytes()),
        "kernels": [SimpleUploadedFile("q06.py", (example_dir / "q06.py").read_bytes())],
    }
    response = uploader_client.post("/upload/", data)
    submission = Submission.objects.get()
    assertRedirects(response, f"/submissions/{submission.pk}/")
    assert submission.runs.get().status == "queued"


def test_uploading_an_archive_through_the_form_stores_the_set(uploader_client, q6, cpu, example_dir) -> None:
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in example_dir.iterdir():
            archive.write(path, path.name)
    response = uploader_client.post("/upload/", {"archive": SimpleUploadedFile("set.zip", buffer.getvalue())})
    assert response.status_code == 302
    assert Submission.objects.count() == 1


def test_an_empty_archive_in_the_form_is_called_empty_and_nothing_else(uploader_client, q6, cpu) -> None:
    page = uploader_client.post("/upload/", {"archive": SimpleUploadedFile("set.zip", b"")})
    assertContains(page, "The submitted file is empty.", status_code=400)
    assertContains(page, 'id="id_archive_error"', status_code=400)  # the field's aria-describedby
    assertNotContains(page, "send an archive", status_code=400)  # one was sent
    assert Submission.objects.count() == 0


def test_a_bad_manifest_in_the_form_shows_the_same_error_as_the_api(
    uploader_client, q6, cpu, example_dir
) -> None:
    manifest = json.dumps({"model": "X", "language": "fortran", "scope": "full"}).encode()
    data = {
        "manifest": SimpleUploadedFile("manifest.json", manifest),
        "kernels": [SimpleUploadedFile("q06.py", (example_dir / "q06.py").read_bytes())],
    }
    page = uploader_client.post("/upload/", data)
    assertContains(page, "must be one of triton, cuda", status_code=400)
    assert Submission.objects.count() == 0


def test_an_api_token_is_shown_once_right_after_it_is_created(uploader_client, uploader) -> None:
    response = uploader_client.post("/upload/token/")
    assertRedirects(response, "/upload/", fetch_redirect_response=False)
    key = uploader.auth_token.key
    assertContains(uploader_client.get("/upload/"), key, count=2)  # the key and the curl line
    later = uploader_client.get("/upload/")
    assertNotContains(later, key)
    assertContains(later, "You have an API token")


def test_an_api_token_can_be_revoked(uploader_client, uploader) -> None:
    from rest_framework.authtoken.models import Token

    uploader_client.post("/upload/token/")
    key = Token.objects.get(user=uploader).key
    assertRedirects(uploader_client.post("/upload/token/revoke/"), "/upload/")
    assert not Token.objects.filter(user=uploader).exists()
    assert Client().get("/api/runs/1/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 401
    assertContains(uploader_client.get("/upload/"), "Create an API token")


def test_the_server_error_page_needs_no_context_or_database() -> None:
    from django.template.loader import render_to_string

    assert "Something went wrong on our side" in render_to_string("500.html")
