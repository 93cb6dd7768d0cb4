"""The harness's handle on one runner process: commands, each answered by a deadline kept from here.

A runner that breaks the protocol, answers late or dies is stopped at once, and `RunnerFailed` says
what that means for the query (docs/sandbox.md): past the compile limit while importing the kernel, a
build error; past any other deadline, a timeout; a death, by its signal or exit (`launch.death`). An
error the runner reports from a call (`CallFailed`) is the candidate's: the runner lives on.
"""

from __future__ import annotations

import subprocess
import time
from collections import deque
from typing import Any

from evaluator.channel import ChannelError, Deadline
from evaluator.harness.launch import Outcome, Started, death, error_status
from evaluator.report import Status

EXIT_WAIT_S = 2.0  # how long a runner whose channel broke may take to exit before it is stopped


class RunnerFailed(Exception):
    """The runner is gone (stopped or dead): (status, reason) for its query."""

    def __init__(self, who: str, status: str, reason: str, outcome: Outcome | None = None) -> None:
        super().__init__(f"{who}: {reason}")
        self.who, self.status, self.reason, self.outcome = who, status, reason, outcome


class CallFailed(Exception):
    """The candidate raised, or returned what is not a result: (status, the runner's words)."""

    def __init__(self, who: str, error: str) -> None:
        super().__init__(f"{who}: {error}")
        self.who, self.status, self.error = who, error_status(error), error


class Remote:
    def __init__(self, started: Started, who: str, spin_s: float = 0.0) -> None:
        self.started, self.who, self.spin_s = started, who, spin_s
        # Commands sent and not yet answered, oldest first: (op, sent at, limit). The runner answers them
        # in turn (the baseline's is sent its next while it is busy), so each one's time runs from the
        # answer before it.
        self.pending: deque[tuple[str, float, float]] = deque()
        self.answered_at = 0.0
        self.waited: dict[str, float] = {}  # per command: seconds from sending to its answer, summed

    def send(self, command: dict[str, Any], limit_s: float) -> None:
        """Send a command; its answer is due within `limit_s` (read it with `answer`), counted from the
        answer to any command sent before it."""
        try:
            self.started.send(command)
        except ChannelError as exc:
            raise self.failed(str(exc)) from None
        self.pending.append((command["op"], time.monotonic(), limit_s))

    def answer(self, deadline_reason: str | None = None) -> tuple[dict[str, Any], bytes]:
        """The oldest pending command's answer; RunnerFailed when none came in time, CallFailed for an
        error."""
        op, sent_at, limit_s = self.pending.popleft()
        started = max(sent_at, self.answered_at)
        due = started + limit_s
        try:
            answer, payload = self.started.read(due, self.spin_s)
        except Deadline:
            if self.started.expires <= due:  # the evaluation's time, not this command's, ran out
                deadline_reason = "no answer before the evaluation's time limit"
            raise self.failed(None, timeout=deadline_reason or f"no answer to '{op}' in time") from None
        except ChannelError as exc:
            raise self.failed(str(exc)) from None
        self.answered_at = time.monotonic()
        self.waited[op] = self.waited.get(op, 0.0) + self.answered_at - started
        if "error" in answer:
            raise CallFailed(self.who, str(answer["error"]))
        return answer, payload

    def ask(
        self, command: dict[str, Any], limit_s: float, deadline_reason: str | None = None
    ) -> tuple[dict[str, Any], bytes]:
        unread = self.pending[0][0] if self.pending else None
        assert unread is None, f"'{command['op']}' asked before the answer to '{unread}' was read"
        self.send(command, limit_s)
        return self.answer(deadline_reason)

    def timed(
        self, command: dict[str, Any], limit_s: float, deadline_reason: str | None = None
    ) -> tuple[float, dict[str, Any], bytes]:
        """Seconds from sending the command to holding its whole answer, on this process's clock."""
        started = time.perf_counter()
        answer, payload = self.ask(command, limit_s, deadline_reason)
        return time.perf_counter() - started, answer, payload

    def cpu_s(self) -> float | None:
        """The runner's CPU seconds so far, counted from outside it (evaluator/harness/launch.py)."""
        return self.started.cpu_s()

    def freeze(self, frozen: bool) -> bool | None:
        """Freeze or thaw everything the runner started, from outside it (evaluator/harness/launch.py)."""
        return self.started.freeze(frozen)

    def failed(self, problem: str | None, timeout: str | None = None) -> RunnerFailed:
        """Stop the runner and say why it failed."""
        if problem is not None:  # a runner that died closed its channel as it went: let it finish dying
            try:
                self.started.proc.wait(timeout=EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                pass
        alive = self.started.proc.poll() is None
        outcome = self.started.stop()
        if problem is not None and alive:  # it broke the protocol, and was stopped for it
            reason = f"the runner broke its channel: {problem}"
            return RunnerFailed(self.who, Status.RUNTIME_ERROR, reason, outcome)
        if timeout is not None:
            return RunnerFailed(self.who, Status.TIMEOUT, f"{timeout}; the runner was stopped", outcome)
        if outcome.out_of_memory:
            reason = f"the runner was killed at its memory limit: {outcome.log[-500:]}"
            return RunnerFailed(self.who, Status.OUT_OF_MEMORY, reason, outcome)
        if outcome.returncode is None:
            return RunnerFailed(self.who, Status.TIMEOUT, "ran past its time limit and was stopped", outcome)
        status, how = death(outcome.returncode, outcome.log)
        return RunnerFailed(self.who, status, f"the runner {how}: {outcome.log[-500:]}", outcome)

    def stop(self) -> Outcome:
        return self.started.stop()
