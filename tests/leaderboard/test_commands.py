from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from evaluator.queries import QUERIES
from leaderboard.models import BaselineCalibration, Hardware, Query, Submission

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_setup_loads_queries_this_machine_and_the_demo_user_and_can_run_again(settings) -> None:
    settings.DKB_DEVICE = "cpu"
    first = run("dkb_setup")
    assert "query q06: loaded" in first
    assert "CPU, Triton interpreter" in first
    assert "user demo: created" in first
    second = run("dkb_setup")
    assert "query q06: updated" in second
    assert "user demo: exists" in second
    from django_q.models import Schedule

    (schedule,) = Schedule.objects.filter(func="leaderboard.tasks.evaluation_reclaim")  # not duplicated
    assert (schedule.schedule_type, schedule.minutes) == (Schedule.MINUTES, 10)
    assert Query.objects.count() == len(QUERIES)
    assert all(q.torchplan_source.startswith('"""') and q.sql for q in Query.objects.all())
    hardware = Hardware.objects.get()
    assert (hardware.device, hardware.scale_factor, hardware.active) == (
        "cpu",
        settings.DKB_SCALE_FACTOR,
        True,
    )
    assert hardware.queue == settings.Q_CLUSTER["name"]
    assert not User.objects.get(username="demo").has_usable_password()


def test_submit_stores_a_folder_as_the_given_user(q6, cpu, uploader, example_dir) -> None:
    out = run("dkb_submit", str(example_dir), "--user", uploader.username)
    submission = Submission.objects.get()
    assert f"submission {submission.pk}: 1 run(s) on cpu-test" in out
    assert submission.uploader == uploader
    assert submission.published_at is not None  # the operator's sets are there to be seen


def test_submit_can_keep_the_set_private(q6, cpu, uploader, example_dir) -> None:
    run("dkb_submit", str(example_dir), "--user", uploader.username, "--private")
    assert Submission.objects.get().published_at is None


def test_submit_refuses_an_unknown_user(q6, cpu, example_dir) -> None:
    with pytest.raises(CommandError, match="no user 'nobody'"):
        run("dkb_submit", str(example_dir), "--user", "nobody")


def test_submit_refuses_a_folder_that_is_not_a_kernel_set(q6, cpu, uploader, tmp_path) -> None:
    with pytest.raises(CommandError, match="manifest_missing"):
        run("dkb_submit", str(tmp_path), "--user", uploader.username)


def test_submitting_the_same_folder_twice_is_skipped_unless_asked(q6, cpu, uploader, example_dir) -> None:
    run("dkb_submit", str(example_dir), "--user", uploader.username)
    again = run("dkb_submit", str(example_dir), "--user", uploader.username, "--skip-existing")
    assert "already submitted" in again
    assert Submission.objects.count() == 1
    run("dkb_submit", str(example_dir), "--user", uploader.username, "--again")
    assert Submission.objects.count() == 2


@pytest.fixture
def calibration_data(settings, tpch_data: Path, tmp_path: Path) -> Path:
    """A data folder of its own holding the session's SF0.01 tables: the calibration's record lands here,
    not where other tests' evaluations would read it."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "sf0.01").symlink_to(tpch_data / "sf0.01")
    settings.DKB_DATA_DIR = data_dir
    return data_dir


def test_baselines_calibrates_the_hardware_on_this_machine_into_the_record_and_the_site(
    q6, cpu, calibration_data: Path
) -> None:
    from evaluator import HARNESS_VERSION
    from evaluator.harness import baselines

    out = run("dkb_baselines", "--hardware", cpu.slug, "--queries", "6", "--jobs", "1")
    assert baselines.RULE in out
    assert "Q06 eager: eager " in out  # a CPU times the eager plan only
    assert "1 calibration(s) stored for cpu-test" in out
    [row] = BaselineCalibration.objects.all()
    assert (row.hardware, row.query, row.scale_factor, row.mode) == (cpu, q6, 0.01, "eager")
    assert row.harness_version == HARNESS_VERSION and row.torch_version
    assert row.eager_ms > 0 and row.compiled_ms is None and row.rounds > 0
    # The record every evaluation in this data folder reads holds the same measurement.
    recorded = baselines.recorded(calibration_data, 0.01, "cpu")
    assert recorded[6]["mode"] == "eager" and recorded[6]["eager_ms"] == row.eager_ms


def test_baselines_picks_the_active_hardware_of_this_machines_device_by_default(
    q6, cpu, gpu, calibration_data: Path, settings
) -> None:
    settings.DKB_DEVICE = "cpu"
    out = run("dkb_baselines", "--queries", "6", "--jobs", "1")
    assert "stored for cpu-test" in out
    assert BaselineCalibration.objects.get().hardware == cpu


def test_baselines_refuses_an_unknown_hardware_or_query_list(q6, cpu) -> None:
    with pytest.raises(CommandError, match="no hardware 'nope'"):
        run("dkb_baselines", "--hardware", "nope")
    with pytest.raises(CommandError, match="--queries takes numbers"):
        run("dkb_baselines", "--hardware", cpu.slug, "--queries", "six")
    assert not BaselineCalibration.objects.exists()
