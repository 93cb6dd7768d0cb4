"""The harness's handle on a runner (evaluator/harness/remote.py), over a real process and pipe."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import pytest

from evaluator.harness.launch import Launch, Launcher
from evaluator.harness.remote import Remote, RunnerFailed
from evaluator.report import Status

# Answers each command after sleeping its "sleep" seconds, in the order they came.
SLEEPER = """
import os, time
from evaluator.channel import read_blocking, send
while (message := read_blocking(0, 0.0)) is not None:
    command, _ = message
    time.sleep(command["sleep"])
    send(1, {"op": command["op"]})
"""


@pytest.fixture
def sleeper() -> Iterator[Remote]:
    launched = Launch([sys.executable, "-c", SLEEPER], [], [], [], {}, timeout_s=60, channel=True)
    remote = Remote(Launcher().start(launched), "baseline")
    yield remote
    remote.stop()


def test_commands_sent_while_the_runner_is_busy_are_answered_in_turn(sleeper: Remote) -> None:
    """The baseline's runner is sent its pool while it loads its tables: each answer is read in order,
    and each command's time limit and waiting time run from the answer before it."""
    sleeper.send({"op": "tables", "sleep": 0.6}, 5)
    sleeper.send({"op": "pool", "sleep": 0.2}, 0.5)  # due 0.5 s after the tables' answer, not after sending
    assert sleeper.answer()[0] == {"op": "tables"}
    assert sleeper.answer()[0] == {"op": "pool"}
    assert sleeper.waited["tables"] == pytest.approx(0.6, abs=0.15)
    assert sleeper.waited["pool"] == pytest.approx(0.2, abs=0.15)


def test_a_command_queued_behind_another_still_has_its_own_deadline(sleeper: Remote) -> None:
    sleeper.send({"op": "tables", "sleep": 0.1}, 5)
    sleeper.send({"op": "pool", "sleep": 3}, 0.5)
    sleeper.answer()
    started = time.monotonic()
    with pytest.raises(RunnerFailed) as failed:
        sleeper.answer()
    assert (failed.value.status, failed.value.reason) == (
        Status.TIMEOUT,
        "no answer to 'pool' in time; the runner was stopped",
    )
    assert time.monotonic() - started < 1.5


def test_asking_while_an_answer_is_unread_is_refused(sleeper: Remote) -> None:
    """`ask` reads the oldest answer: with one unread it would take another command's answer for its own."""
    sleeper.send({"op": "tables", "sleep": 0}, 5)
    with pytest.raises(AssertionError, match="'trial' asked before the answer to 'tables' was read"):
        sleeper.ask({"op": "trial", "sleep": 0}, 5)
