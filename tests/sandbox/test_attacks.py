"""The adversarial suite: one small kernel per attack (tests/sandbox/attacks/), each run as Q6 through the
real bubblewrap sandbox, and each asserted to be stopped and labelled.

Admission (evaluator/admission.py) refuses several attacks before they run; that is their honest label
in the first table. The second table switches admission off and shows what the sandbox, the limits and
the comparison do on their own. The third asks that the clock measure the kernel's work, which caching
defeats until timed reps get inputs the kernel cannot have seen (protocol: "Rotate parameter sets and
fresh tensor objects between reps").

Covered elsewhere, not repeated here: an endless loop (test_bubblewrap.py: timeout, the rest of the set
still evaluated); a kernel that aborts its runner (tests/evaluator/test_harness.py: crashed); returning
the default parameters' answer, mutating the inputs, a float32 literal, patching time.perf_counter
(test_harness.py); the limits themselves (test_limits.py); the GPU-only attacks (scripts/gpu/sandbox.sh).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import sandbox
from evaluator import admission
from evaluator.report import Status
from sandbox.limits import GiB, Limits

ROOT = Path(__file__).resolve().parents[2]
ATTACKS = Path(__file__).resolve().parent / "attacks"
LIMITS = Limits(memory_bytes=4 * GiB, processes=128)


@dataclass(frozen=True)
class Attack:
    file: str
    status: str
    words: str  # in the reason shown to the submitter

    def __str__(self) -> str:
        return self.file


WITH_ADMISSION = [
    Attack("socket_connect", Status.REFUSED, "line 3: importing socket is not allowed [forbidden-import]"),
    Attack("ctypes_null_pointer", Status.REFUSED, "importing ctypes is not allowed"),
    Attack("background_thread", Status.REFUSED, "importing threading is not allowed"),
    Attack("patch_synchronize", Status.REFUSED, "assigning to torch.cuda.synchronize is not allowed"),
    Attack("patch_comparison", Status.REFUSED, "assigning to torch.equal is not allowed"),
    Attack("tensor_subclass", Status.REFUSED, "class Lying subclasses torch.Tensor"),
    Attack(
        "write_outside_scratch", Status.RUNTIME_ERROR, "every write outside the scratch folder was refused"
    ),
    Attack("read_expected_answers", Status.RUNTIME_ERROR, "PermissionError: [Errno 13] Permission denied"),
    Attack("read_other_submission", Status.RUNTIME_ERROR, "FileNotFoundError: [Errno 2] No such file"),
    Attack("fork_bomb", Status.TIMEOUT, "limit and was stopped"),
    Attack("allocate_all_memory", Status.OUT_OF_MEMORY, "can't allocate memory"),
    Attack("segfault", Status.CRASHED, "crashed: killed by SIGSEGV"),
    Attack("precompute_at_import", Status.WRONG_ANSWER, "column 'revenue' differs"),  # on fresh parameters
    Attack("cache_by_shape", Status.WRONG_ANSWER, "column 'revenue' differs"),
    Attack("float32_sums", Status.WRONG_ANSWER, "column 'revenue' differs"),
]

WITHOUT_ADMISSION = [
    Attack("socket_connect", Status.RUNTIME_ERROR, "ConnectionRefusedError"),  # its own network namespace
    Attack("ctypes_null_pointer", Status.CRASHED, "crashed: killed by SIGSEGV"),
    Attack("background_thread", Status.WRONG_ANSWER, "column 'revenue' differs"),  # read before it is done
    Attack("tensor_subclass", Status.RUNTIME_ERROR, "is a Lying, not a torch.Tensor"),
    Attack("patch_comparison", Status.WRONG_ANSWER, "column 'revenue' differs"),  # zeroed while timed
]

# Caught by the fresh parameter sets after the timed reps (evaluator/fresh.py): a cache by parameters
# returns the answer it kept for the rolled tables; the others are timed doing the work there.
TIMING_HONESTY = [
    Attack("cache_by_pointer", Status.REJECTED, "results are kept across calls"),
    Attack("cache_by_parameters", Status.WRONG_ANSWER, "on a parameter set drawn after its timed reps"),
    Attack("precompute_from_the_request", Status.REJECTED, "results are kept across calls"),
    Attack("read_the_fresh_sets", Status.REJECTED, "gone from the runner's standard input"),
]


def attack_set(tmp_path: Path, name: str) -> Path:
    kernel_dir = tmp_path / "attack"
    shutil.copytree(ROOT / "examples" / "triton-q06-full", kernel_dir)
    source = (ATTACKS / f"{name}.py").read_text()
    if "%(rival)s" in source:
        source = source % {"rival": str(rival_set(tmp_path) / "q06.py")}
    (kernel_dir / "q06.py").write_text(source)
    return kernel_dir


def rival_set(tmp_path: Path) -> Path:
    """Another submission's kernel set on the same worker."""
    rival = tmp_path / "rival"
    shutil.copytree(ROOT / "examples" / "triton-q06-full", rival)
    return rival


def evaluate(kernel_dir: Path, tpch_data: Path, **job: Any) -> dict[str, Any]:
    job = {"max_time_per_query_s": 0.3, "trials": 2, "queries": (6,)} | job
    report = sandbox.evaluate(
        sandbox.Job(kernel_dir=kernel_dir, data_dir=tpch_data, scale_factor=0.01, **job),
        backend="bubblewrap",
        limits=LIMITS,
    )
    assert report["sandbox"]["limits"]["cgroup"], "no cgroup: the process and memory limits are rlimits only"
    (q06,) = report["queries"]
    return q06


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def leftover_runner_cgroups() -> list[Path]:
    """Cgroups of this process's runners still present: one is removed only once its processes are gone."""
    return [p for p in Path("/sys/fs/cgroup").rglob(f"dkb-runner-{os.getpid()}-*")]


@pytest.mark.parametrize("attack", WITH_ADMISSION, ids=str)
def test_an_attack_is_stopped_and_labelled(attack: Attack, tpch_data: Path, tmp_path: Path) -> None:
    kernel_dir = attack_set(tmp_path, attack.file)
    data = tpch_data / "sf0.01"
    before = digest(data), digest(kernel_dir)
    timeout = {"query_timeout_s": 20} if attack.file == "fork_bomb" else {}
    q06 = evaluate(kernel_dir, tpch_data, **timeout)
    assert (q06["status"], attack.words in q06["reason"]) == (attack.status, True), q06["reason"]
    assert q06["kernel_ms"] is None and q06["baseline_ms"] > 0  # the baseline still timed, by a fresh runner
    assert (digest(data), digest(kernel_dir)) == before  # nothing it could reach was changed
    assert leftover_runner_cgroups() == []  # and every process it started is gone


@pytest.mark.parametrize("attack", WITHOUT_ADMISSION, ids=str)
def test_with_admission_switched_off_the_sandbox_and_the_comparison_still_stop_it(
    attack: Attack, tpch_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel_dir = attack_set(tmp_path, attack.file)
    assert admission.check((kernel_dir / "q06.py").read_text()) != []  # admission would have refused it
    monkeypatch.setattr(admission, "check", lambda source, filename="": [])
    q06 = evaluate(kernel_dir, tpch_data)
    assert (q06["status"], attack.words in q06["reason"]) == (attack.status, True), q06["reason"]
    assert q06["kernel_ms"] is None and q06["baseline_ms"] > 0


@pytest.mark.parametrize("attack", TIMING_HONESTY, ids=str)
def test_a_kernel_that_caches_across_calls_is_caught(attack: Attack, tpch_data: Path, tmp_path: Path) -> None:
    # Time enough for the caches to fill (15 pointer and parameter pairs, 50 ms a miss) and the median
    # to be a look-up; with less, the timed reps themselves would be mostly misses, timed doing the work.
    q06 = evaluate(attack_set(tmp_path, attack.file), tpch_data, max_time_per_query_s=2.0)
    assert (q06["status"], attack.words in q06["reason"]) == (attack.status, True), q06["reason"]
    assert q06["kernel_ms"] is None and q06["baseline_ms"] > 0
