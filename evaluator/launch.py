"""Starting an untrusted runner: what to start (`Launch`), how it ended (`Outcome`), and what its death
means (`error_status`, `death`). `Launcher` is the plain child process; sandbox/ has the isolated ones.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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
    # Written to the runner's standard input, which it reads only after its timed reps: the fresh
    # parameter sets (evaluator/fresh.py) are in no file and in no memory a kernel could read at import.
    stdin: bytes = b""


@dataclass(frozen=True)
class Outcome:
    returncode: int | None  # None: killed at the time limit
    log: str
    out_of_memory: bool = False  # the launcher saw it killed at its memory limit (cgroup, Docker's OOMKilled)


class Launcher:
    """Starts runners. `backend` names the isolation in every report; this one has none."""

    backend = "none"

    def __call__(self, launch: Launch) -> Outcome:
        return run_process(
            launch.argv, env=self.environment(launch), timeout_s=launch.timeout_s, stdin=launch.stdin
        )

    def environment(self, launch: Launch) -> dict[str, str]:
        package_root = str(Path(__file__).resolve().parent.parent)
        env = {**os.environ, **launch.env, "PYTHONUNBUFFERED": "1"}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH", "")]))
        return env


# Signals a runner dies of that are the kernel's crash (a bad pointer, an abort, a bad instruction).
CRASH_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE,
                           signal.SIGSYS})  # fmt: skip
# Error texts that mean an allocation failed (Python, torch on the CPU or the GPU, the OS) ...
OOM_MARKS = ("MemoryError", "OutOfMemoryError", "out of memory", "can't allocate memory",
             "Cannot allocate memory")  # fmt: skip
# ... or that the GPU faulted: the CUDA context is lost, as a segfault loses a process.
CUDA_FAULT_MARKS = ("illegal memory access", "misaligned address", "illegal instruction",
                    "unspecified launch failure", "device-side assert", "CUDA_ERROR_ILLEGAL")  # fmt: skip


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


def run_process(
    argv: list[str],
    *,
    env: dict[str, str],
    timeout_s: float,
    preexec: Callable[[], None] | None = None,
    stdin: bytes = b"",
) -> Outcome:
    """A child in its own process group, so a time limit kills everything it started. `stdin` is written
    to its standard input, which is then closed (none: it reads end-of-file)."""
    proc = subprocess.Popen(
        argv,
        preexec_fn=preexec,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        cwd=tempfile.gettempdir(),
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(input=stdin or None, timeout=timeout_s)
        return Outcome(proc.returncode, output.decode(errors="replace")[-RUNNER_LOG_CHARS:])
    except subprocess.TimeoutExpired:
        return Outcome(None, "")
    finally:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate()
