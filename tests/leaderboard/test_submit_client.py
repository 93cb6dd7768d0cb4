"""`python -m evaluator submit` against the real site (pytest-django's live server): upload, follow the run
while a worker's steps are played through the services, print the results."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token

from evaluator.__main__ import main
from evaluator.errors import SubmissionError
from evaluator.tools.submit import Client, submit
from leaderboard import services
from leaderboard.models import EvaluationRun, Submission

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def token(uploader: User) -> str:
    return Token.objects.create(user=uploader).key


@pytest.fixture
def worker(make_report: Callable[..., dict[str, Any]]) -> Callable[[float], None]:
    """Stands in for `time.sleep` between the client's polls: each call is the next step of a worker's
    evaluation of the one queued run (claimed, Q06 started, Q06 ended, report recorded)."""
    steps: Iterator[Callable[[EvaluationRun], object]] = iter(
        [
            lambda run: services.evaluation_claim(run_id=run.pk, backend="bubblewrap"),
            lambda run: services.evaluation_progress(
                run=run, progress={"done": 0, "total": 1, "query": 6, "phase": "started", "status": ""}
            ),
            lambda run: services.evaluation_progress(
                run=run, progress={"done": 1, "total": 1, "query": 6, "phase": "ended", "status": "passed"}
            ),
            lambda run: services.evaluation_record(run=run, report=make_report(kernel_ms=0.5)),
        ]
    )

    def step(seconds: float) -> None:
        next(steps)(EvaluationRun.objects.get())

    return step


def test_it_uploads_publishes_follows_the_run_and_prints_the_results(
    live_server: Any, token: str, q6: Any, cpu: Any, example_dir: Path, worker: Callable[[float], None]
) -> None:
    lines: list[str] = []
    code = submit(
        example_dir,
        client=Client(live_server.url, token),
        publish=True,
        poll_s=0,
        echo=lines.append,
        sleep=worker,
    )
    assert code == 0, lines
    submission = Submission.objects.get()
    assert submission.published_at is not None
    run = submission.runs.get()
    assert lines[0] == f"uploaded submission #{submission.pk}: {live_server.url}/submissions/{submission.pk}/"
    assert lines[1].startswith("published at ")
    assert lines[2:7] == [
        f"run {run.pk} on cpu-test: queued",
        f"run {run.pk} on cpu-test: running",
        f"run {run.pk} on cpu-test: running: query 1 of 1, Q06 started",
        f"run {run.pk} on cpu-test: running: query 1 of 1, Q06 ended (passed)",
        f"run {run.pk} on cpu-test: succeeded",
    ]
    table = "\n".join(lines[7:])
    assert f"run {run.pk} on cpu-test (ranked):" in table
    assert "Q06   passed" in table and "2.000" in table and "0.500" in table and "4.00x" in table
    assert "overall speedup 4.00x" in table and "pass rate 100%" in table


def test_the_same_set_again_is_answered_with_the_first_upload(
    live_server: Any, token: str, q6: Any, cpu: Any, example_dir: Path
) -> None:
    client = Client(live_server.url, token)
    first: list[str] = []
    assert submit(example_dir, client=client, wait=False, echo=first.append) == 0
    again: list[str] = []
    assert submit(example_dir, client=client, wait=False, echo=again.append) == 0
    (submission,) = Submission.objects.all()
    assert again[0].startswith(f"already uploaded as submission #{submission.pk}")
    assert "private until you publish it" in again[1]


def test_a_bad_token_and_a_bad_set_are_errors_with_codes(
    live_server: Any, q6: Any, cpu: Any, example_dir: Path, tmp_path: Path, capsys: Any
) -> None:
    with pytest.raises(SubmissionError) as caught:
        submit(example_dir, client=Client(live_server.url, "not-a-token"), wait=False, echo=print)
    assert caught.value.code == "unauthorized"
    (tmp_path / "manifest.json").write_text('{"model": "x", "language": "fortran", "scope": "full"}')
    (tmp_path / "q06.py").write_text((example_dir / "q06.py").read_text())
    # Through the command line: checked here before any upload, with the code the server would give.
    assert main(["submit", str(tmp_path), "--server", live_server.url, "--token", "t"]) == 2
    assert "manifest_" in capsys.readouterr().err
    assert Submission.objects.count() == 0
