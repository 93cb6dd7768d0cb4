"""What the public pages say about a run is true of it: failed kernels are not called correct, an empty state
is not shown above rows, a reason is the real one and is said once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def text(client: Client, url: str) -> str:
    """The page at `url`, its whitespace runs made one space (templates wrap sentences)."""
    response = client.get(url)
    assert response.status_code == 200
    return " ".join(response.content.decode().split())


def test_a_set_whose_only_kernel_failed_to_build_is_not_called_correct(
    anonymous: Client, evaluated: Callable[..., Any], cpu: Any
) -> None:
    run = evaluated(model="Broken LLM", status="build_error", kernel_ms=None, reason="nvcc: error")
    assert run.pass_rate == 0.0 and run.timing_label == "correctness only"

    home = text(anonymous, f"/?hardware={cpu.slug}")
    assert "Broken LLM" in home.split('<table class="unranked">')[1]
    assert "Correct kernels" not in home
    assert "the share of a set's queries whose kernel answered correctly (it may be none)" in home
    page = text(anonymous, run.get_absolute_url())
    assert "show that the kernels run and answer correctly" not in page
    assert (
        "This run checks whether the kernels run and answer correctly, not how fast they are: 0% of its"
        in page
    )


def test_a_hardware_with_only_unranked_sets_says_why_nothing_is_ranked_instead_of_inviting_an_upload(
    anonymous: Client, evaluated: Callable[..., Any], cpu: Any
) -> None:
    evaluated(model="CPU LLM")

    home = text(anonymous, f"/?hardware={cpu.slug}")
    ranking, unranked = home.split('<table class="unranked">')
    assert "No evaluated submissions yet" not in home
    said = "Nothing is ranked on Test CPU: timings on a CPU, through the Triton interpreter, show correctness"
    assert said in ranking
    assert '<a href="#not-ranked">Not ranked</a> below' in ranking and "CPU LLM" in unranked
    everywhere = text(anonymous, "/")
    assert "Nothing is ranked yet: no evaluated set's timings can be ranked" in everywhere


def test_a_query_page_shows_the_calibration_its_published_runs_were_timed_by_and_no_admin_command(
    anonymous: Client, submit: Callable[..., Any], timed_report: Callable[..., Any], gpu: Any, q6: Any
) -> None:
    from leaderboard import services
    from leaderboard.models import BaselineCalibration

    run = submit(model="GPU LLM").runs.get(hardware=gpu)
    services.evaluation_record(run=run, report=timed_report(baseline_ms=2.0, kernel_ms=1.0))
    assert not BaselineCalibration.objects.exists()  # as on a site that imported its reports

    page = text(anonymous, "/queries/6/")
    fastest, baseline = page.split("<h3>Baseline</h3>")
    assert '<td class="small">2.000 ms compiled</td>' in fastest
    assert "dkb_baselines" not in page and "No hardware has a recorded baseline calibration" not in page
    row = baseline.split('<table class="results calibrations">')[1].split("</table>")[0]
    assert "NVIDIA H200" in row and "<strong>compiled</strong>" in row
    assert '<td class="num">4.000' in row and '<td class="num">2.000' in row  # eager, compiled
    assert f'as <a href="/submissions/{run.submission_id}/?run={run.pk}#run">run {run.pk}</a>' in row

    # The site's own calibration of the hardware (`manage.py dkb_baselines`), where it has one, is shown.
    from evaluator import HARNESS_VERSION

    BaselineCalibration.objects.create(
        hardware=gpu,
        query=q6,
        scale_factor=10,
        harness_version=HARNESS_VERSION,
        torch_version="2.9.1",
        mode="eager",
        eager_ms=1.5,
        compiled_ms=1.6,
    )
    baseline = text(anonymous, "/queries/6/").split("<h3>Baseline</h3>")[1]
    assert "<strong>eager</strong>" in baseline and "torch 2.9.1" in baseline
    assert "report records it" not in baseline


def test_a_failed_kernels_page_says_it_was_not_profiled_because_it_failed_not_for_want_of_a_gpu(
    anonymous: Client, submit: Callable[..., Any], make_report: Callable[..., Any], gpu: Any
) -> None:
    from leaderboard import services

    run = submit(model="Wrong LLM").runs.get(hardware=gpu)
    report = make_report(status="wrong_answer", kernel_ms=None, reason="row 3 differs", device="cuda")
    run = services.evaluation_record(run=run, report=report)

    page = text(anonymous, f"/submissions/{run.submission_id}/kernels/6/?run={run.pk}")
    assert "e.g. on a CPU" not in page and "a CPU has no device activity" not in page
    assert "not measured, since the kernel failed (wrong answer) before a call of it was profiled." in page


def test_a_run_page_says_a_query_without_a_kernel_had_only_its_baseline_timed(
    anonymous: Client, evaluated: Callable[..., Any]
) -> None:
    from leaderboard.models import QueryResult

    run = evaluated(model="Sparse LLM")
    # As a calibrated hardware reports a query the set has no kernel for: the calibration's baseline time.
    record = {"query": 6, "mode": "eager", "eager_ms": 2.0}
    QueryResult.objects.filter(run=run).update(
        status="missing",
        reason="no kernel in the set: scores 1.0, not timed",
        kernel_ms=None,
        speedup=None,
        stats={"baseline_mode": "eager", "baseline_calibration": record},
    )

    page = text(anonymous, run.get_absolute_url())
    row = page.split('<table class="results">')[1].split("</table>")[0]
    assert "not timed" not in row and "2.000" in row
    assert (
        "no kernel in the set: the baseline stands in and scores 1.0; its time is what this hardware's "
        "calibration measured, no kernel was timed"
    ) in row.replace("&#x27;", "'")


def test_why_a_run_is_not_ranked_is_said_once_beside_its_label(
    anonymous: Client, evaluated: Callable[..., Any]
) -> None:
    run = evaluated(model="CPU LLM")
    assert run.timing_reason == "correctness only: timed on a CPU"

    unranked = text(anonymous, "/").split('<table class="unranked">')[1]
    assert 'correctness only</span> <span class="muted small">timed on a CPU</span>' in unranked
    assert unranked.count("correctness only") == 1
    page = text(anonymous, run.get_absolute_url())
    assert "correctness only</span> Not ranked: timed on a CPU." in page
    kernel = text(anonymous, f"/submissions/{run.submission_id}/kernels/6/?run={run.pk}")
    assert "correctness only</span> This run's timing is not ranked: timed on a CPU." in kernel
    run.report["timing"]["reason"] = "unstable timing: Q6"  # the harness's words for an unsure median
    run.timing_ranked = False
    run.hardware.device = "cuda"
    assert (run.timing_label, run.timing_detail) == ("unstable timing", "unsure medians in Q6")
