"""Round by round: can anything a runner measures about its host tell a slow process from a fast one?
(issue 4)

Harness 0.4.0 on the H200 (docs/benchmarks.md, session 7) brought the overall speedups of three runs
within 0.1%, but the host-clock medians of single queries still moved 5-7% from run to run while the
profiler's device time of the same calls moved under 1%. Setting aside the rounds whose pure-Python
probe ran slow did not catch it: a run could be slow with a usual probe (Triton Q01, run 3).

This starts fresh processes one after another on the runner's cores (the upper half, as the harness
places them) and in each records, for every round: the pure-Python probe the harness takes
(evaluator.timing.host_probe), a synchronize round trip after one queued op, the time of ten queued
one-element launches, and the host-clock time of each call (the harness's `_timed`: L2 flushed,
sync -> call -> sync). The calls are the Triton Q01, Q03 and Q14 and the CUDA Q14 examples and the eager
Q14 plan, on the query's tables with rotated parameter sets. Offline, the rounds show which probe, if
any, follows the calls' times within a process and between processes.

    python3 scripts/gpu/rounds.py SF_FOLDER SECONDS_PER_PROCESS DEADLINE_S > rounds.jsonl

One JSON line per process.

It starts no process once DEADLINE_S seconds have passed since it began.
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEED = 20261202
CORES = os.cpu_count() or 2
HALF = frozenset(range(CORES // 2, CORES))
CALLS = ["t01", "t03", "t14", "c14", "e14"]
PROBES = ["python_us", "sync_us", "launch_us"]
KERNELS = {  # name: (query, file), each scope core
    "t01": (1, EXAMPLES / "triton-core" / "q01.py"),
    "t03": (3, EXAMPLES / "triton-core" / "q03.py"),
    "t14": (14, EXAMPLES / "triton-core" / "q14.py"),
    "c14": (14, EXAMPLES / "cuda-core" / "q14.py"),
}


def calls(sf_folder: Path, device) -> dict:
    """Each example kernel, and the eager Q14 plan, as a call of the rep's index."""
    from evaluator.queries import QUERIES
    from evaluator.runner.kernel_loader import load_kernel
    from evaluator.tpch.load import load_tables

    tables, params = {}, {}
    for number in {n for n, _ in KERNELS.values()}:
        query = QUERIES[number]
        tables[number] = load_tables(sf_folder, query.columns(), device)
        params[number] = query.parameter_sets(4, SEED)
    kernels = {k: v for k, v in KERNELS.items() if device.type == "cuda" or k != "c14"}  # CPU: a dry run
    fns = {name: (n, load_kernel(QUERIES[n], path, "core")) for name, (n, path) in kernels.items()}
    fns["e14"] = (14, QUERIES[14].plan().run_query)
    return {
        name: (lambda rep, fn=fn, t=tables[n], p=params[n]: fn(t, **p[rep % len(p)]))
        for name, (n, fn) in fns.items()
    }


def sample(sf_folder: Path, seconds: float) -> dict:
    import torch
    from variance import last_cpu, warm_up  # scripts/gpu/, this script's folder

    from evaluator.timing import L2_FLUSH_BYTES, _timed, host_probe, host_usual

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # the CPU: a dry run
    sync = torch.cuda.synchronize if device.type == "cuda" else lambda: None
    fns = calls(sf_folder, device)
    flush = (
        torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device) if device.type == "cuda" else None
    )
    x = torch.zeros(1, device=device)
    warm_up(fns)
    sync()
    usual_us = host_usual() * 1e6
    rounds: dict[str, list[float]] = {name: [] for name in PROBES + list(fns)}
    started, rep = time.perf_counter(), 0
    while time.perf_counter() - started < seconds:
        rounds["python_us"].append(host_probe() * 1e6)
        x.add_(1)
        t0 = time.perf_counter()
        sync()
        rounds["sync_us"].append((time.perf_counter() - t0) * 1e6)
        t0 = time.perf_counter()
        for _ in range(10):
            x.add_(1)
        rounds["launch_us"].append((time.perf_counter() - t0) * 1e6 / 10)  # µs a launch
        sync()
        for name, fn in fns.items():
            ms, result = _timed(lambda fn=fn, rep=rep: fn(rep), device, flush)
            rounds[name].append(ms)
            del result
        rep += 1
    return {
        "host_usual_us": round(usual_us, 2),
        "cpu": last_cpu(),
        "rounds": {k: [round(v, 4) for v in vs] for k, vs in rounds.items()},
    }


def main(sf_folder: Path, seconds: float, deadline_s: float) -> None:
    from variance import sample_output  # scripts/gpu/, this script's folder

    began = time.time()
    number = 0
    while time.time() - began < deadline_s:
        number += 1
        started = time.time()
        out = subprocess.run(
            [sys.executable, __file__, "sample", str(sf_folder), str(seconds)],
            capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, HALF),
        )  # fmt: skip
        wall_s = round(time.time() - started, 1)
        row = {"sample": number, "began_s": round(started - began, 1), "wall_s": wall_s, "cores": CORES}
        row |= {"seconds": seconds} | sample_output(out)
        print(json.dumps(row), flush=True)  # a line per process: a call cut short keeps what it had
        print(json.dumps({k: v for k, v in row.items() if k != "rounds"}), file=sys.stderr, flush=True)


def _p10(values: list[float]) -> float:
    return sorted(values)[len(values) // 10]


def _spread(values: list[float]) -> str:
    return f"{100 * (max(values) - min(values)) / min(values):.1f}%" if len(values) > 1 else "-"


def _medians(rows: list[dict], calls: list[str], kept) -> tuple[int, dict[str, list[float]]]:
    """Each call's median per process over the rounds `kept(row)` names; a process with under 30 of
    them is left out (the harness's minimum of reps), as a re-timing rule would leave it out."""
    medians: dict[str, list[float]] = {call: [] for call in calls}
    for row in rows:
        rounds = kept(row)
        if len(rounds) < 30:
            continue
        for call in calls:
            medians[call].append(statistics.median(row["rounds"][call][i] for i in rounds))
    return len(medians[calls[0]]), medians


def analyze(path: Path) -> None:
    """Each process's usual probes and medians; then, for a set-aside rule, how far the calls' medians
    still spread between processes: all rounds; harness 0.4.0's rule (the Python probe within 1.25x of
    the lower of the session's usual and the usual taken before it); each probe within a factor of the
    fastest process's usual."""
    with (gzip.open if path.suffix == ".gz" else open)(path, "rt") as lines:
        rows = [row for row in map(json.loads, lines) if "rounds" in row]
    calls = [call for call in CALLS if call in rows[0]["rounds"]]  # a CPU dry run has no CUDA call
    print("process | usual probe, µs: " + ", ".join(PROBES) + " | rounds | medians, ms: " + " ".join(calls))
    for row in rows:
        rounds = row["rounds"]
        probes = ", ".join(f"{_p10(rounds[probe]):.1f}" for probe in PROBES)
        medians = " ".join(f"{statistics.median(rounds[call]):.3f}" for call in calls)
        print(f"{row['sample']} | {probes} | {len(rounds[CALLS[0]])} | {medians}")
    rules = {
        "all rounds": lambda row: range(len(row["rounds"]["python_us"])),
        "0.4.0-0.6.12: python 1.25x its own": lambda row: [
            i for i, p in enumerate(row["rounds"]["python_us"])
            if p <= 1.25 * min(_p10(row["rounds"]["python_us"]), row["host_usual_us"])
        ],
        "0.6.13: python 1.25x its median": lambda row: [
            i for i, p in enumerate(row["rounds"]["python_us"])
            if p <= 1.25 * statistics.median(row["rounds"]["python_us"])
        ],
    }  # fmt: skip
    for probe in PROBES:
        fastest = min(_p10(row["rounds"][probe]) for row in rows)
        for factor in (1.10, 1.25, 1.40):
            rules[f"{probe} {factor:.2f}x the fastest"] = lambda row, probe=probe, limit=factor * fastest: [
                i for i, p in enumerate(row["rounds"][probe]) if p <= limit
            ]
    print("\nrule | processes kept | spread between processes: " + " ".join(calls))
    for name, kept in rules.items():
        count, medians = _medians(rows, calls, kept)
        print(f"{name} | {count}/{len(rows)} | " + " ".join(_spread(medians[call]) for call in calls))


if __name__ == "__main__":
    if sys.argv[1] == "analyze":
        analyze(Path(sys.argv[2]))
    elif sys.argv[1] == "sample":
        print(json.dumps(sample(Path(sys.argv[2]), float(sys.argv[3]))))
    else:
        main(Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]))
