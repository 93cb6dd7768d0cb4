"""The report the harness writes against what docs/report-schema.md documents and what the site reads.

The fixture (tests/leaderboard/fixtures/, made by scripts/report_fixture.py) is a real CPU evaluation; a
key the docs name that it lacks is either in `CONDITIONAL`, with why, or a drift to fix on one side.
Reports of the previous schema (2, from the H200 sessions in docs/results) must still show on every page.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from evaluator.report import SCHEMA_VERSION, Report, TimingStats
from evaluator.report import QueryResult as ReportQueryResult
from leaderboard import services
from leaderboard.formatting import speedup_text
from leaderboard.models import EvaluationRun

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DOC = ROOT / "docs" / "report-schema.md"
# Schema 2, harness 0.2.0: examples/triton-q06-full on the H200 at SF10.
SCHEMA_2_REPORT = (
    ROOT / "docs" / "results" / "2026-12-02-h200-evaluation" / "reports" / "triton-q06-full-r1.json"
)
# Documented keys a CPU evaluation of one query does not write, and why.
CONDITIONAL = {
    "hardware": {
        "sm_count": "CUDA only",
        "memory_gb": "CUDA only",
        "cuda": "CUDA only",
        "gpu_start": "read with nvidia-smi",
        "gpu_end": "read with nvidia-smi",
        "roofline_peak_gbs": "GPU hosts only",
        "measured_copy_gbs": "GPU hosts only",
        "cores": "GPU hosts only",
    },
    "stats": {
        "baseline_alone": "GPU only",
        "device_busy": "GPU only (the baseline's runner drains the device)",
        "host_usual_us": "a GPU session's host probe",
        "slow_host": "only when the host ran slow",
        "unstable": "only for an unsure median",
        "roofline_floor_ms": "needs a peak bandwidth: GPU only",
        "scan_floor_ms": "needs a peak bandwidth: GPU only",
        "flagged": "only when the result needs review",
        "framework_fallback": "only under 80% own device time",
        "timed_checks_capped_at": "only when a candidate repeats its results",
    },
    "wall_s": {
        "ahead": "only when a next query is prepared: the fixture runs Q6 alone",
        "alone": "GPU only (the baseline timed alone)",
        "runner": "until 0.4.1",
        "runner_process": "until 0.4.1",
        "runner_phases": "until 0.4.1",
    },
}
# 0.6.1's additions (schema 3, keys added): a report of 0.6.0 lacks them.
ADDED_IN_0_6_1 = {"waited_s", "started_ahead"}


def documented_keys() -> dict[str, set[str]]:
    """Per table of docs/report-schema.md (top level, hardware, per query, stats), the keys its first
    column names; plus `wall_s`'s, which the stats table lists in its meaning."""
    sections = re.split(r"^#+ ", SCHEMA_DOC.read_text(), flags=re.MULTILINE)
    keys: dict[str, set[str]] = {}
    for section in sections:
        title, _, body = section.partition("\n")
        name = {"Top level": "top", "`hardware`": "hardware", "Per query": "query", "`stats`": "stats"}.get(
            title.strip()
        )
        if name is None:
            continue
        rows = [line.split("|")[1] for line in body.splitlines() if line.startswith("| `")]
        # A first cell's parenthesis gives values (`cpu`/`cuda`), not keys.
        keys[name] = {key for cell in rows for key in re.findall(r"`(\w+)`", re.sub(r"\(.*?\)", "", cell))}
        if name == "stats":
            (wall,) = (line for line in body.splitlines() if line.startswith("| `wall_s`"))
            keys["wall_s"] = set(re.findall(r"`(\w+)`", wall.split("|")[2]))
    return keys


@pytest.fixture
def report() -> dict[str, Any]:
    return json.loads(
        (ROOT / "tests" / "leaderboard" / "fixtures" / "report-triton-q06-full-cpu.json").read_text()
    )


def q6(report: dict[str, Any]) -> dict[str, Any]:
    (result,) = (q for q in report["queries"] if q["query"] == 6)
    return result


def test_the_fixture_is_the_current_schema_and_loads_into_the_reports_dataclasses_whole(
    report: dict[str, Any],
) -> None:
    assert report["schema_version"] == SCHEMA_VERSION
    assert set(report) == {f.name for f in dataclasses.fields(Report)}
    for result in report["queries"]:
        assert set(result) == {f.name for f in dataclasses.fields(ReportQueryResult)}
    assert set(q6(report)["stats"]["kernel"]) == {f.name for f in dataclasses.fields(TimingStats)}
    loaded = Report(**report | {"queries": [ReportQueryResult(**q) for q in report["queries"]]})
    assert dataclasses.asdict(loaded) == report  # nothing dropped or changed on the way


def test_every_key_the_schema_documents_is_in_the_report_the_harness_wrote(report: dict[str, Any]) -> None:
    documented = documented_keys()
    assert documented.keys() == {"top", "hardware", "query", "stats", "wall_s"}
    stats = q6(report)["stats"]
    written = {
        "top": set(report),
        "hardware": set(report["hardware"]),
        "query": set(q6(report)),
        "stats": set(stats),
        "wall_s": set(stats["wall_s"]),
    }
    for table, keys in documented.items():
        exempt = CONDITIONAL.get(table, {})
        assert set(exempt) <= keys, f"{table}: exempted but no longer documented"
        assert keys - set(exempt) <= written[table], f"{table}: documented, not written"
    assert {"paired_speedup", "paired_stderr_pct"} <= set(stats["kernel"])


@pytest.fixture
def gpu_run(submit: Callable[..., Any], gpu: Any) -> Callable[[dict[str, Any]], EvaluationRun]:
    """A published set's ranked H200 run recorded with the given report."""

    def record(report: dict[str, Any]) -> EvaluationRun:
        submission = submit()
        run = services.evaluation_enqueue(submission=submission, hardware=gpu, enqueue=False)
        return services.evaluation_record(run=run, report=report)

    return record


def older_schema_3(report: dict[str, Any]) -> dict[str, Any]:
    """The fixture as harness 0.6.0 wrote it: without 0.6.1's keys."""
    older = json.loads(json.dumps(report)) | {"harness_version": "0.6.0"}
    stats = q6(older)["stats"]
    for key in ADDED_IN_0_6_1:
        stats.pop(key)
    for key in ("paired_speedup", "paired_stderr_pct"):
        stats["kernel"].pop(key)
    stats["wall_s"].pop("ahead", None)
    return older


@pytest.mark.parametrize("version", ["schema 2 (harness 0.2.0, H200)", "schema 3 (harness 0.6.0)"])
def test_a_report_of_an_earlier_schema_still_shows_on_every_page(
    gpu_run: Callable[[dict[str, Any]], EvaluationRun],
    anonymous: Client,
    report: dict[str, Any],
    version: str,
) -> None:
    if version.startswith("schema 2"):
        old = json.loads(SCHEMA_2_REPORT.read_text())
        assert (old["schema_version"], "timing" in old) == (2, False)
    else:
        old = older_schema_3(report)
    run = gpu_run(old)
    speedup = speedup_text(q6(old)["speedup"])  # the site's own rule (a CPU run's can be far below 0.1)
    submission = run.submission_id
    pages = [
        f"/submissions/{submission}/?run={run.pk}",
        f"/submissions/{submission}/kernels/6/?run={run.pk}",
        "/queries/6/",
        "/queries/6/chart.svg",
        "/matrix/",
        f"/compare/?a={submission}&b={submission}",
        f"/api/runs/{run.pk}/",
        f"/api/runs/{run.pk}/results/?format=csv",
        "/api/leaderboard/?hardware=cuda-h200",
        "/",
    ]
    for page in pages:
        response = anonymous.get(page)
        assert response.status_code == 200, (page, response.content[:300])
    run_page = anonymous.get(f"/submissions/{submission}/?run={run.pk}").content.decode()
    assert speedup in run_page and old["harness_version"] in run_page
