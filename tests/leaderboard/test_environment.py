"""A run's page: the environment its report records, and where a queued run stands in its queue."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import pytest
from pytest_django.asserts import assertContains

from leaderboard import services
from leaderboard.environment import run_environment
from leaderboard.models import EvaluationRun
from sandbox.limits import GiB, Limits

ROOT = Path(__file__).resolve().parents[2]
# A report the harness wrote on the lent H200 (docs/results): GPU clocks, driver, versions, the seed.
H200_REPORT = ROOT / "docs/results/2026-12-02-h200-evaluation-s3/reports/cuda-core-r3.json"


def test_the_environment_of_a_real_h200_report() -> None:
    rows = dict(run_environment(json.loads(H200_REPORT.read_text())))
    assert rows["Device"] == "NVIDIA H200"
    assert rows["Driver"] == "580.159.04"
    assert rows["Clocks at start"] == "SM 345 MHz, memory 3201 MHz, 45 °C"
    assert rows["Clocks at end"] == "SM 1980 MHz, memory 3201 MHz, 47 °C"
    assert (rows["PyTorch"], rows["Triton"], rows["CUDA"]) == ("2.11.0+cu130", "3.6.0", "13.0")
    assert rows["Harness"] == "0.3.0"
    assert rows["Sandbox"] == "none"
    assert rows["Seed"] == "20261202"
    assert rows["Scale factor"] == "SF10 (also checked at SF1)"
    assert rows["Measured copy"] == "4203.2 GB/s"


def test_the_duckdb_that_computed_the_answers_is_shown(real_report) -> None:
    """Since harness 0.6.1 the trusted side records its DuckDB; the fixture is a report it wrote."""
    rows = dict(run_environment(real_report()))
    assert rows["DuckDB"] == version("duckdb")


def test_the_sandbox_limits_as_the_launcher_describes_them() -> None:
    limits = Limits(memory_bytes=8 * GiB, processes=256).describe() | {"cgroup": None}
    report = {"sandbox": {"backend": "bubblewrap", "isolated": True, "limits": limits}}
    rows = dict(run_environment(report))
    assert rows["Sandbox"] == "bubblewrap (isolated)"
    assert rows["Sandbox limits"] == (
        "memory 8 GiB, 256 processes, 4096 open files, scratch 4 GiB, no cgroup (rlimits only)"
    )


def test_memory_sizes_read_in_one_unit_with_at_most_one_decimal() -> None:
    h200 = dict(run_environment(json.loads(H200_REPORT.read_text())))
    assert h200["Device memory"] == "139.8 GiB"  # the report's 150.1 decimal GB
    limits = {"memory_bytes": int(62.9244 * GiB), "scratch_bytes": 4 * GiB}
    rows = dict(run_environment({"sandbox": {"backend": "bubblewrap", "limits": limits}}))
    assert rows["Sandbox limits"] == "memory 62.9 GiB, scratch 4 GiB"


def test_nothing_the_report_does_not_say_is_shown() -> None:
    assert run_environment(None) == []
    assert dict(run_environment({"harness_version": "0.6.0"})) == {"Harness": "0.6.0"}


@pytest.mark.django_db
def test_a_run_page_shows_the_environment_its_report_records(anonymous, submit, make_report) -> None:
    report = make_report() | {"hardware": json.loads(H200_REPORT.read_text())["hardware"]}
    report["manifest"] = {"seed": 77}
    run = services.evaluation_record(run=submit(model="Env LLM").runs.get(), report=report)
    page = anonymous.get(run.get_absolute_url())
    assertContains(page, "<dt>Driver</dt><dd>580.159.04</dd>")
    assertContains(page, "<dt>Clocks at end</dt><dd>SM 1980 MHz, memory 3201 MHz, 47 °C</dd>")
    assertContains(page, "<dt>Seed</dt><dd>77</dd>")
    assertContains(page, "<dt>Sandbox</dt><dd>bubblewrap (isolated)</dd>")


@pytest.mark.django_db
def test_a_queued_run_says_how_many_runs_wait_before_it_on_its_hardware(
    anonymous, submit, cpu, gpu, rival
) -> None:
    first = submit(model="First LLM")  # queued on both hardware
    submit(model="Second LLM", user=rival, published=False)  # a private set's run still holds a place
    mine = submit(model="Third LLM")
    services.evaluation_enqueue(submission=first, hardware=gpu, enqueue=False)  # later, and another queue
    assert EvaluationRun.objects.ahead_of(mine.runs.get(hardware=cpu)) == 2
    page = anonymous.get(mine.runs.get(hardware=cpu).get_absolute_url())
    assertContains(page, "<strong>2</strong> queued runs ahead of it\n      on the Test CPU queue")
    assertContains(page, '<span class="muted small">2 ahead</span>')
    # Once the first has started, one is left before it.
    first.runs.filter(hardware=cpu).update(status=EvaluationRun.Status.RUNNING)
    assert EvaluationRun.objects.ahead_of(mine.runs.get(hardware=cpu)) == 1
