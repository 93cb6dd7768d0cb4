"""Starting a runner: what to start (`Launch`), the running process and its channel (`Started`), how it
ended (`Outcome`), and what its death means (`error_status`, `death`). `Launcher` starts a plain child
process (the trusted baseline's runner, or anything where isolation was declined); sandbox/ has the
isolated ones.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from evaluator.channel import ChannelError, Reader, send
from evaluator.report import Status

RUNNER_LOG_CHARS = 2000


@dataclass(frozen=True)
class Launch:
    """One runner to start: its command, what it may read and write, and its limit."""

    argv: list[str]
    readable: list[Path]
    writable: list[Path]
    hidden: list[Path]  # readable folders' files it must not see (the DuckDB file with the answers)
    env: dict[str, str]
    timeout_s: float
    # Written to the process's standard input, which is then closed (a plain run, `Launcher.__call__`).
    stdin: bytes = b""
    # A runner the harness commands: its standard input and output are the channel (evaluator/channel.py)
    # and its log is its standard error.
    channel: bool = False


@dataclass(frozen=True)
class Outcome:
    returncode: int | None  # None: killed at the time limit
    log: str
    out_of_memory: bool = False  # the launcher saw it killed at its memory limit (cgroup, Docker's OOMKilled)


class Started:
    """A started process: its channel (for a runner), its log (the last `RUNNER_LOG_CHARS`, however much
    it writes), and `stop()`, which kills what is left of it and says how it ended. `expires` is the
    `time.monotonic()` past which it must be stopped: the harness reads no answer after it."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        timeout_s: float,
        channel: bool,
        finish: Callable[[Outcome], Outcome] | None = None,
    ) -> None:
        self.proc = proc
        self.expires = time.monotonic() + timeout_s
        self._finish = finish
        self._log: deque[str] = deque()
        self._log_chars = 0
        self._outcome: Outcome | None = None
        source = proc.stderr if channel else proc.stdout
        self._drain = threading.Thread(target=self._read_log, args=(source,), daemon=True)
        self._drain.start()
        self.reader = Reader(proc.stdout.fileno()) if channel and proc.stdout else None
        self.killed_at_limit = False
        # CPU seconds the runner has used so far, all its threads: set by a launcher that can count them
        # (its cgroup's, or a plain child's own); None where it cannot.
        self.cpu_s: Callable[[], float | None] = lambda: None
        # What `freeze` does, set by a launcher that can (its cgroup's freezer, sandbox/cgroup.py).
        self.freezer: Callable[[bool], bool | None] = lambda frozen: None
        self._frozen = False

    def send(self, header: dict[str, Any], payload: bytes = b"") -> None:
        """A command to the runner; ChannelError when it is gone."""
        try:
            send(self.proc.stdin.fileno(), header, payload)  # type: ignore[union-attr]
        except (OSError, ValueError) as exc:
            raise ChannelError(f"the runner is gone: {exc}") from None

    def freeze(self, frozen: bool) -> bool | None:
        """Freeze (True) or thaw (False) everything the runner started: True once done, False when not in
        time, None where its launcher cannot."""
        self._frozen = frozen
        return self.freezer(frozen)

    def read(self, deadline: float, spin_s: float = 0.0) -> tuple[dict[str, Any], bytes]:
        assert self.reader is not None
        return self.reader.read(min(deadline, self.expires), spin_s)

    def wait(self) -> Outcome:
        """Wait for it to exit by itself, until it expires; then `stop()`."""
        try:
            self.proc.wait(timeout=max(0.0, self.expires - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.killed_at_limit = True
        return self.stop()

    def stop(self) -> Outcome:
        if self._outcome is not None:
            return self._outcome
        if self._frozen:
            self.freeze(False)  # a task frozen by cgroup v1 would not die of the signal below
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        # Not the pipe the log thread reads (a plain run's output): it closes that itself at its end.
        for pipe in (self.proc.stdin, self.proc.stdout if self.reader else None):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        self.proc.wait()
        self._drain.join(timeout=5)
        code = None if self.killed_at_limit else self.proc.returncode
        outcome = Outcome(code, "".join(self._log)[-RUNNER_LOG_CHARS:])
        self._outcome = self._finish(outcome) if self._finish else outcome
        return self._outcome

    def _read_log(self, pipe: Any) -> None:
        """Keep the end of what it writes and drop the rest: a runner may write gigabytes."""
        while chunk := os.read(pipe.fileno(), 1 << 16):
            self._log.append(chunk.decode(errors="replace"))
            self._log_chars += len(self._log[-1])
            while self._log_chars - len(self._log[0]) >= RUNNER_LOG_CHARS:
                self._log_chars -= len(self._log.popleft())
        pipe.close()


class Launcher:
    """Starts runners. `backend` names the isolation in every report; this one has none. An isolated
    launcher gives each runner a private /tmp, a tmpfs of bounded size (`sandbox.limits.Limits`)."""

    backend = "none"
    isolated = False

    def check(self) -> None:
        """Raise when the evaluation may start no more work (a sandbox's wall-time limit has passed)."""

    def describe(self) -> dict[str, Any]:
        """The report's `sandbox` section."""
        return {"backend": self.backend, "isolated": self.isolated}

    def start(self, launch: Launch) -> Started:
        started = start_process(
            launch.argv, env=self.environment(launch), timeout_s=launch.timeout_s, channel=launch.channel
        )
        started.cpu_s = partial(process_cpu_s, started.proc.pid)
        return started

    def __call__(self, launch: Launch) -> Outcome:
        """Run to the end: standard input written and closed, the exit awaited until the limit."""
        started = self.start(launch)
        if launch.stdin:
            with contextlib.suppress(OSError):
                started.proc.stdin.write(launch.stdin)  # type: ignore[union-attr]
        with contextlib.suppress(OSError):
            started.proc.stdin.close()  # type: ignore[union-attr]
        return started.wait()

    def environment(self, launch: Launch) -> dict[str, str]:
        package_root = str(Path(__file__).resolve().parent.parent)
        env = {**os.environ, **launch.env, "PYTHONUNBUFFERED": "1"}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH", "")]))
        return env


# Signals a runner dies of that are the kernel's crash (a bad pointer, an abort, a bad instruction).
CRASH_SIGNALS = frozenset(
    {signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE, signal.SIGSYS}
)
# Error texts that mean an allocation failed (Python, torch on the CPU or the GPU, the OS) ...
OOM_MARKS = (
    "MemoryError",
    "OutOfMemoryError",
    "out of memory",
    "can't allocate memory",
    "Cannot allocate memory",
)
# ... or that the GPU faulted: the CUDA context is lost, as a segfault loses a process.
CUDA_FAULT_MARKS = (
    "illegal memory access",
    "misaligned address",
    "illegal instruction",
    "unspecified launch failure",
    "device-side assert",
    "CUDA_ERROR_ILLEGAL",
)


def error_status(error: str) -> str:
    """The status for a kernel's error message: out of memory, crashed (a GPU fault) or a runtime error."""
    if any(mark in error for mark in OOM_MARKS):
        return Status.OUT_OF_MEMORY
    if any(mark in error for mark in CUDA_FAULT_MARKS):
        return Status.CRASHED
    return Status.RUNTIME_ERROR


def death(returncode: int, log: str) -> tuple[str, str]:
    """How a runner that wrote no usable response died: (status, what happened)."""
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode)
        except ValueError:
            return Status.CRASHED, f"was killed by signal {-returncode}"
        if sig == signal.SIGKILL:
            # Not ours (a time limit returns no code): the kernel's out-of-memory killer sends it.
            return Status.OUT_OF_MEMORY, "was killed by SIGKILL, as the out-of-memory killer does"
        if sig == signal.SIGXCPU:
            return Status.TIMEOUT, "used up its CPU-time limit (SIGXCPU)"
        if sig in CRASH_SIGNALS:
            return Status.CRASHED, f"crashed: killed by {sig.name}"
        return Status.CRASHED, f"was killed by {sig.name}"
    if returncode == 0:
        return Status.RUNTIME_ERROR, "exited without writing its response"
    return error_status(log), f"exited with status {returncode}"


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds a process has used: all its threads to the nanosecond (its CPU-time clock), and its
    children that have exited at the kernel's tick (10 ms); None once it is gone. At the tick alone
    (`/proc/PID/stat`'s utime) a runner was charged in whole ticks for what it ran while the baseline
    was timed: over a short timing one tick read as up to a quarter of a core (`Beside`,
    evaluator/harness/timed.py)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        own = time.clock_gettime(((~pid) << 3) | _CPUCLOCK_SCHED)
    except (OSError, IndexError):
        return None
    # After the command's closing parenthesis: state is field 3, cutime and cstime fields 16-17.
    return own + sum(int(v) for v in fields[13:15]) / os.sysconf("SC_CLK_TCK")


# clock_getcpuclockid(pid) as Linux builds it: the whole process's scheduler clock.
_CPUCLOCK_SCHED = 2


def start_process(
    argv: list[str],
    *,
    env: dict[str, str],
    timeout_s: float,
    channel: bool = False,
    preexec: Callable[[], None] | None = None,
    finish: Callable[[Outcome], Outcome] | None = None,
) -> Started:
    """A child in its own process group, so that stopping it kills everything it started."""
    proc = subprocess.Popen(
        argv,
        preexec_fn=preexec,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if channel else subprocess.STDOUT,
        stdin=subprocess.PIPE,
        cwd=tempfile.gettempdir(),
        start_new_session=True,
        bufsize=0,
    )
    return Started(proc, timeout_s, channel, finish)
