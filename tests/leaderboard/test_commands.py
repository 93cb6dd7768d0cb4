from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from evaluator.queries import QUERIES
from leaderboard.models import Hardware, Query, Submission

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
