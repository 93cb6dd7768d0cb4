"""How a runner's end becomes a status: every way a kernel can fail has its own label and reason."""

from __future__ import annotations

import signal

import pytest

from evaluator.harness.launch import death as _death
from evaluator.harness.launch import error_status
from evaluator.report import Status


@pytest.mark.parametrize(
    ("returncode", "log", "status", "words"),
    [
        (-signal.SIGSEGV, "", Status.CRASHED, "crashed: killed by SIGSEGV"),
        (-signal.SIGBUS, "", Status.CRASHED, "crashed: killed by SIGBUS"),
        (-signal.SIGABRT, "", Status.CRASHED, "crashed: killed by SIGABRT"),
        (-signal.SIGKILL, "", Status.OUT_OF_MEMORY, "SIGKILL, as the out-of-memory killer does"),
        (-signal.SIGXCPU, "", Status.TIMEOUT, "CPU-time limit"),
        (-signal.SIGTERM, "", Status.CRASHED, "was killed by SIGTERM"),
        (-77, "", Status.CRASHED, "was killed by signal 77"),
        (1, "Traceback ...\nMemoryError\n", Status.OUT_OF_MEMORY, "exited with status 1"),
        (1, "RuntimeError: CUDA error: an illegal memory access was encountered", Status.CRASHED, "status 1"),
        (1, "Traceback ...\nKeyError: 'lineitem'\n", Status.RUNTIME_ERROR, "exited with status 1"),
        (0, "", Status.RUNTIME_ERROR, "exited without writing its response"),
    ],
)
def test_a_runner_that_died_is_labelled_by_how(returncode: int, log: str, status: str, words: str) -> None:
    got_status, reason = _death(returncode, log)
    assert got_status == status and words in reason


@pytest.mark.parametrize(
    ("error", "status"),
    [
        ("MemoryError: ", Status.OUT_OF_MEMORY),
        (
            "RuntimeError: [enforce fail at alloc_cpu.cpp:118] DefaultCPUAllocator: can't allocate memory: "
            "you tried to allocate 8000000000000 bytes.",
            Status.OUT_OF_MEMORY,
        ),
        ("OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 TiB.", Status.OUT_OF_MEMORY),
        ("RuntimeError: CUDA error: an illegal memory access was encountered", Status.CRASHED),
        ("RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered", Status.CRASHED),
        ("RuntimeError: CUDA error: device-side assert triggered", Status.CRASHED),
        ("ValueError: boom (line 3)", Status.RUNTIME_ERROR),
        ("OutOfResources: out of resource: shared memory, Required: 262144", Status.RUNTIME_ERROR),
    ],
)
def test_a_kernels_error_inside_a_trial_is_a_runtime_error_unless_memory_or_the_gpu_failed(
    error: str, status: str
) -> None:
    assert error_status(error) == status
