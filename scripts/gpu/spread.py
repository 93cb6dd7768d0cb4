"""Is the process-to-process spread of sub-millisecond timed calls the host's own speed, and does a
runner pinned to one core or started with a fixed memory layout lose it? (issue 4)

scripts/gpu/variance.py showed (docs/benchmarks.md, session 5) that the same short kernel call, timed
by the harness's loop in fresh processes on one idle machine, moved 11-17% from process to process
while the eager plans moved 2-5% and contention with DuckDB made no consistent difference. This
starts fresh processes under four placements, interleaved so that a drift of the host over time
falls on all of them alike:

    half            the runner's cores in harness 0.3.1 (the upper half; DuckDB gets the lower)
    one-core        one core of that half
    half-fixed      the upper half, address-space randomisation off and PYTHONHASHSEED=0
    one-core-fixed  both

and in each process measures, besides the four calls' medians (first and second half of the reps
apart, to tell a process's own drift from a difference between processes), the host's speed on its
own: a fixed piece of pure Python, a torch launch, a Triton launch and a synchronize round trip.

    python3 scripts/gpu/spread.py SF_FOLDER [SECONDS_OF_TIMING] [SAMPLES_PER_PLACEMENT] > spread.json

What it found on the H200 host: docs/benchmarks.md, session 6 (the host CPU's slow spells).
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CORES = os.cpu_count() or 2
HALF = frozenset(range(CORES // 2, CORES))
ONE = frozenset({CORES - 1})
ADDR_NO_RANDOMIZE = 0x0040000  # personality(2): the next exec maps everything at fixed addresses
PLACEMENTS = {"half": (HALF, False), "one-core": (ONE, False), "half-fixed": (HALF, True),
              "one-core-fixed": (ONE, True)}  # fmt: skip


def _median_of(repeats: int, measure) -> float:
    return statistics.median(measure() for _ in range(repeats))


def host_speed(torch, triton, device) -> dict:
    """The host's speed, no query involved: ns per step of fixed pure Python, µs per launch of a
    one-element torch op and of a one-element Triton kernel (queued, then one sync), µs per
    synchronize after one queued op (the round trip the timed region pays twice)."""
    import triton.language as tl

    @triton.jit
    def bump(x):
        tl.store(x, tl.load(x) + 1)

    def python_ns() -> float:
        counts: dict[int, int] = {}
        started = time.perf_counter()
        for i in range(100_000):
            counts[i & 1023] = counts.get(i & 1023, 0) + i
        return (time.perf_counter() - started) / 100_000 * 1e9

    x = torch.zeros(1, device=device)
    bump[(1,)](x)
    torch.cuda.synchronize()

    def launches_us(launch) -> float:
        torch.cuda.synchronize()
        started = time.perf_counter()
        for _ in range(300):
            launch()
        torch.cuda.synchronize()
        return (time.perf_counter() - started) / 300 * 1e6

    def sync_us() -> float:
        total = 0.0
        for _ in range(100):
            x.add_(1)
            started = time.perf_counter()
            torch.cuda.synchronize()
            total += time.perf_counter() - started
        return total / 100 * 1e6

    return {
        "python_ns": _median_of(7, python_ns),
        "torch_launch_us": _median_of(7, lambda: launches_us(lambda: x.add_(1))),
        "triton_launch_us": _median_of(7, lambda: launches_us(lambda: bump[(1,)](x))),
        "sync_us": _median_of(7, sync_us),
    }


def context_switches() -> tuple[int, int]:
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(status["voluntary_ctxt_switches"]), int(status["nonvoluntary_ctxt_switches"])


def sample(sf_folder: Path, seconds: float) -> dict:
    import torch
    import triton
    from variance import example_calls, last_cpu, warm_up  # scripts/gpu/, this script's folder

    from evaluator.timing import L2_FLUSH_BYTES, _timed

    device = torch.device("cuda")
    calls = example_calls(sf_folder, device)
    speed_before = host_speed(torch, triton, device)
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device)
    warm_up(calls)
    torch.cuda.synchronize()
    samples: dict[str, list[float]] = {name: [] for name in calls}
    switches_before = context_switches()
    started, rep = time.perf_counter(), 0
    while time.perf_counter() - started < seconds:
        for name, fn in calls.items():
            ms, result = _timed(lambda fn=fn, rep=rep: fn(rep), device, flush)
            samples[name].append(ms)
            del result
        rep += 1
    switches_after = context_switches()
    speed_after = host_speed(torch, triton, device)
    libc = ctypes.CDLL("libc.so.6")
    return {
        "host_ms": {name: statistics.median(s) for name, s in samples.items()},
        "first_half_ms": {name: statistics.median(s[: len(s) // 2]) for name, s in samples.items()},
        "second_half_ms": {name: statistics.median(s[len(s) // 2 :]) for name, s in samples.items()},
        "reps": rep,
        "speed_before": speed_before,
        "speed_after": speed_after,
        "switches": {
            "voluntary": switches_after[0] - switches_before[0],
            "involuntary": switches_after[1] - switches_before[1],
        },  # fmt: skip
        "cpu": last_cpu(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "personality": Path("/proc/self/personality").read_text().strip(),
        # Where libc and the heap landed: the same in every process only if randomisation is off. (The
        # session-6 file's `malloc_at` was the python executable's own stub, fixed either way.)
        "libc_malloc_at": hex(ctypes.cast(libc.malloc, ctypes.c_void_p).value or 0),
        "heap_object_at": hex(id(object())),
        "hashseed": os.environ.get("PYTHONHASHSEED", ""),
    }


def _start(cores: frozenset[int], fixed: bool):
    def preexec() -> None:
        os.sched_setaffinity(0, cores)
        if fixed:
            ctypes.CDLL(None, use_errno=True).personality(ADDR_NO_RANDOMIZE)

    return preexec


def main(sf_folder: Path, seconds: float, per_placement: int) -> None:
    from variance import sample_output  # scripts/gpu/, this script's folder

    rows = []
    order = [name for _ in range(per_placement) for name in PLACEMENTS]
    for number, placement in enumerate(order, 1):
        cores, fixed = PLACEMENTS[placement]
        env = dict(os.environ, PYTHONHASHSEED="0") if fixed else {
            k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}  # fmt: skip
        started = time.time()
        out = subprocess.run(
            [sys.executable, __file__, "sample", str(sf_folder), str(seconds)],
            capture_output=True, text=True, env=env, preexec_fn=_start(cores, fixed),
        )  # fmt: skip
        row = {"sample": number, "placement": placement, "wall_s": round(time.time() - started, 1)}
        rows.append(row | sample_output(out))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(json.dumps({"cores": CORES, "seconds": seconds, "samples": rows}, indent=1))


if __name__ == "__main__":
    if sys.argv[1] == "sample":
        print(json.dumps(sample(Path(sys.argv[2]), float(sys.argv[3]))))
    else:
        main(Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 3.0,
             int(sys.argv[3]) if len(sys.argv) > 3 else 5)  # fmt: skip
