"""`manage.py dkb_import_reports`: the committed H200 reports as published results of their hardware."""

from __future__ import annotations

import datetime
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from evaluator.queries import QUERIES
from leaderboard.models import EvaluationRun, Hardware, Query, QueryResult, Submission

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
# What `make run` imports: the site's own runs on the H200 (harness 0.6.0), as its API gave them.
SITE_RUNS = ROOT / "docs" / "results" / "2026-12-03-h200-site-s9" / "reports.tgz"
# Session 13's (harness 0.6.4): the example sets again and both reference sets, with their sources' digests.
SESSION_13 = ROOT / "docs" / "results" / "2026-12-04-h200-s13"
# A report as `python -m evaluator run --out` wrote it (schema 2, harness 0.2.0).
RAW_REPORT = ROOT / "docs" / "results" / "2026-12-02-h200-evaluation" / "reports" / "triton-q06-full-r1.json"


@pytest.fixture
def demo(q6: Query) -> User:
    """The examples' owner, with the benchmark's other queries loaded beside Q6 (the sets use Q1, Q3, Q14)."""
    for query in QUERIES.values():
        Query.objects.get_or_create(number=query.number, defaults={"name": query.name, "sql": "select 1"})
    return User.objects.create_user("demo")


def counts() -> tuple[int, ...]:
    return tuple(m.objects.count() for m in (Submission, EvaluationRun, QueryResult, Hardware))


def site_run(name: str) -> dict[str, Any]:
    with tarfile.open(SITE_RUNS) as archive:
        content = archive.extractfile(f"reports/{name}")
        assert content is not None
        return json.loads(content.read())


def test_the_site_runs_become_published_ranked_h200_runs_dated_and_versioned_as_measured(
    q6: Any, demo: User, anonymous: Client
) -> None:
    call_command("dkb_import_reports", str(SITE_RUNS), stdout=open("/dev/null", "w"))
    runs = EvaluationRun.objects.select_related("hardware", "submission")
    assert runs.count() == 8  # cuda-core, triton-core three times, triton-q06-full, three planted sets
    published = {s.language_model.name: s.is_published for s in Submission.objects.all()}
    # The planted bugs' sets are the harness's test cases, not anyone's kernels: never published.
    assert Submission.objects.count() == 6 and published == {
        "DataKernelBench example": True,
        "planted bug": False,
    }
    h200 = Hardware.objects.get()
    assert (h200.slug, h200.name, h200.device, h200.scale_factor, h200.active) == (
        "cuda-nvidia-h200",
        "NVIDIA H200",
        "cuda",
        10.0,
        False,  # no worker here: uploads are not queued on it
    )
    original = site_run("triton-q06-full-run3.json")
    (run,) = (run for run in runs if run.report == original["report"])
    assert (run.kind, run.status, run.harness_version, run.report) == (
        "ranked",
        "succeeded",
        "0.6.0",
        original["report"],
    )
    assert run.finished == datetime.datetime.fromisoformat(original["finished"])
    assert run.results.get(query=q6).speedup == original["report"]["queries"][5]["speedup"]
    home = anonymous.get("/").content.decode()
    assert "NVIDIA H200" in home and "0.6.0" in home
    page = anonymous.get(f"/submissions/{run.submission_id}/").content.decode()
    assert f"{run.started:%Y-%m-%d %H:%M}" == "2026-12-03 19:00" and "2026-12-03 19:00" in page  # as measured


def test_no_set_is_dated_after_its_earliest_run_started(q6: Any, demo: User, cpu: Hardware) -> None:
    """A set `make run` submitted today, and sets new to the site, dated by the reports' runs."""
    call_command("dkb_submit", str(ROOT / "examples" / "triton-q06-full"), stdout=open("/dev/null", "w"))
    call_command("dkb_import_reports", str(SITE_RUNS), stdout=open("/dev/null", "w"))
    for submission in Submission.objects.all():
        earliest = min(run.created for run in submission.runs.all())
        assert submission.created <= earliest, submission
    (submitted,) = Submission.objects.filter(runs__hardware=cpu)
    assert submitted.created.date() == datetime.date(2026, 12, 3)  # its first H200 run, not today


def test_importing_twice_adds_nothing(q6: Any, demo: User) -> None:
    call_command("dkb_import_reports", str(SITE_RUNS), str(RAW_REPORT), stdout=open("/dev/null", "w"))
    before = counts()
    call_command("dkb_import_reports", str(SITE_RUNS), str(RAW_REPORT), stdout=open("/dev/null", "w"))
    assert counts() == before
    assert before[:2] == (6, 9)  # the raw report joins triton-q06-full's set


def test_a_raw_report_is_dated_by_its_session_folder_and_keeps_its_harness_version(
    q6: Any, demo: User
) -> None:
    call_command("dkb_import_reports", str(RAW_REPORT), stdout=open("/dev/null", "w"))
    run = EvaluationRun.objects.get()
    assert (run.harness_version, run.finished) == (
        "0.2.0",
        datetime.datetime(2026, 12, 2, tzinfo=datetime.UTC),
    )


def test_the_h200_runs_join_the_set_make_run_submitted_beside_its_cpu_run(
    q6: Any, demo: User, cpu: Hardware, anonymous: Client
) -> None:
    call_command("dkb_submit", str(ROOT / "examples" / "triton-q06-full"), stdout=open("/dev/null", "w"))
    (submission,) = Submission.objects.all()
    call_command("dkb_import_reports", str(RAW_REPORT), stdout=open("/dev/null", "w"))
    assert Submission.objects.get() == submission
    assert sorted(submission.runs.values_list("hardware__name", "status")) == [
        ("NVIDIA H200", "succeeded"),
        ("Test CPU", "queued"),
    ]


def test_files_that_are_not_reports_of_an_example_set_are_skipped_with_a_word(
    q6: Any, demo: User, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    (tmp_path / "lines.json").write_text('{"a": 1}\n{"a": 2}\n')
    stranger = json.loads(RAW_REPORT.read_text())
    stranger["manifest"]["model"] = "A set whose sources are not here"
    (tmp_path / "stranger.json").write_text(json.dumps(stranger))
    shutil.copy(RAW_REPORT, tmp_path / "known.json")
    call_command("dkb_import_reports", str(tmp_path))
    out = capsys.readouterr().out
    assert "notes.json: not a report" in out and "lines.json: not a report" in out
    assert "stranger.json: no examples/ or reference/ folder has its manifest" in out
    assert "1 report(s) imported" in out and EvaluationRun.objects.count() == 1


def test_the_reference_sets_runs_are_published_on_their_sets_while_their_sources_are_the_ones_that_ran(
    q6: Any, demo: User, anonymous: Client
) -> None:
    call_command("dkb_import_reports", str(SESSION_13 / "reports.tgz"), stdout=open("/dev/null", "w"))
    runs = EvaluationRun.objects.values_list("submission__language_model__name", "overall_speedup")
    models = dict(runs)
    # cuda-core, triton-core, triton-q06-full, the three planted sets, both reference sets; not
    # triton-core's repeats (their manifests' notes name the upload).
    assert EvaluationRun.objects.count() == 8
    assert models["DataKernelBench reference - Triton, full"] == pytest.approx(2.7618, abs=1e-4)
    assert models["DataKernelBench reference - CUDA, full"] == pytest.approx(2.1969, abs=1e-4)
    home = anonymous.get("/").content.decode()
    assert "DataKernelBench reference - Triton, full" in home


def test_a_set_whose_sources_changed_since_its_run_is_not_given_that_run(
    q6: Any, demo: User, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(SESSION_13 / "reports.tgz", tmp_path / "reports.tgz")
    recorded = json.loads((SESSION_13 / "sources.json").read_text())
    recorded["reference/cuda-full"] = "0" * 64  # as if a kernel of the set had been edited since
    (tmp_path / "sources.json").write_text(json.dumps(recorded))
    call_command("dkb_import_reports", str(tmp_path / "reports.tgz"))
    out = capsys.readouterr().out
    assert "reference-cuda-full-run7.json: cuda-full's sources changed since this run; skipped" in out
    models = set(EvaluationRun.objects.values_list("submission__language_model__name", flat=True))
    assert "DataKernelBench reference - CUDA, full" not in models
    assert "DataKernelBench reference - Triton, full" in models
