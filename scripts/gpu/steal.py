"""Where to time the runners: one core fixed, the core the hypervisor took least from, or any.

Session 29's procs.py found no runner with a speed of its own: on one core, runners started side by side
ran within 1% of one another, round after round. But the same pair, probed between evaluations on one
machine, ran 1.61-1.87 ms a call minutes apart (Triton Q3), and the evaluations with it, while harness
0.4.1's one unpinned process ran 1.57-1.63 ms in five runs over two sessions. A vCPU on a lent host runs
slower while the host gives its time to something else (Linux counts it as steal, /proc/stat), and the
harness times both runners on one fixed core (evaluator/harness/cores.py): this tries the other choices
on the product's pair, the query's compiled TorchPlan (B) and a kernel (A), timed in turns as the
harness times them (armed with prime, batches of calls, this process spinning on the harness's cores):

- fixed: both on the runners' core, as harness 0.6.x;
- least: both on whichever of the harness's and the runners' cores had the least steal over the last
  round, this process spinning on the others;
- free: both anywhere on those cores, where Linux puts them (with paravirtual steal accounting, it counts
  steal against a core's capacity), this process spinning on them too, as 0.4.1's one process ran.

The modes take turns, in a new order each round, for --seconds, so that all see the host's drift alike.
Per mode: each side's median call, the speedup (B over A) and its range over 30 s windows, and the steal
each core saw (session 29, on a quiet H100 host: the three alike within 0.02%; docs/benchmarks.md).

    python scripts/gpu/steal.py SF_FOLDER [--candidate 3=examples/triton-core/q03.py] [--seconds 240]
    python scripts/gpu/steal.py SF_FOLDER --device cpu --seconds 5 --candidate 6   # a dry run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from channel import self_timed_runner  # noqa: E402
from switch import RUNNER, candidates  # noqa: E402

from evaluator.harness.cores import pinned, split  # noqa: E402
from evaluator.harness.remote import Remote  # noqa: E402
from evaluator.queries import QUERIES  # noqa: E402

MODES = ("fixed", "least", "free")


def steal() -> dict[int, int]:
    """Per core, the ticks the hypervisor has taken from it so far (/proc/stat's eighth field)."""
    found = {}
    for line in Path("/proc/stat").read_text().splitlines():
        name, *fields = line.split()
        if name.startswith("cpu") and name != "cpu":
            found[int(name[3:])] = int(fields[7])
    return found


def placement(mode: str, pool: list[int], fixed: int, stolen: dict[int, int]) -> tuple[list[int], list[int]]:
    """The runners' cores and this process's, for one mode."""
    if mode == "fixed":
        return [fixed], [c for c in pool if c != fixed]
    if mode == "least":
        core = min(pool, key=lambda c: (stolen.get(c, 0), c != fixed))
        return [core], [c for c in pool if c != core]
    return pool, pool


def timed(remote: Remote, cpus: list[int], calls: list[list[int]], device: str) -> dict[str, Any]:
    remote.ask({"op": "arm", "cpus": cpus, "prime": device == "cuda"}, 300)
    return remote.ask({"op": "percall", "calls": calls}, 300)[0]


def measure(args: argparse.Namespace, number: int, kernel: str) -> list[dict[str, Any]]:
    params = QUERIES[number].parameter_sets(4, 20261202)
    calls = [[i, i % len(params)] for i in range(args.calls)]
    cores = split(args.device)
    everything = sorted(os.sched_getaffinity(0))
    pool = sorted(cores.harness | cores.runners) if cores else everything
    fixed = min(cores.runners) if cores else everything[-1]
    rows: list[dict[str, Any]] = []
    with ExitStack() as stack, pinned(frozenset(pool)):
        a, b = (
            stack.enter_context(
                self_timed_runner(
                    args.sf_folder, args.device, number, mode, params, 2, code=RUNNER, warm=True
                )
            )
            for mode in (kernel, "compiled")
        )
        started = time.monotonic()
        stolen: dict[int, int] = {}  # per core, over the last round's blocks
        round_ = 0
        while time.monotonic() - started < args.seconds:
            order = list(MODES)
            random.Random(round_).shuffle(order)
            for mode in order:
                runners, spin = placement(mode, pool, fixed, stolen)
                before = steal()
                with pinned(frozenset(spin)):
                    for _ in range(args.batches):
                        base = timed(b, runners, calls, args.device)
                        cand = timed(a, runners, calls, args.device)
                        rows.append({
                            "query": number, "candidate": Path(kernel).name, "round": round_, "mode": mode,
                            "at_s": time.monotonic() - started, "runners": runners,
                            "baseline_ms": 1e3 * statistics.median(base["call_s"]),
                            "kernel_ms": 1e3 * statistics.median(cand["call_s"]),
                            "baseline_core": base["core"], "kernel_core": cand["core"],
                        })  # fmt: skip
                after = steal()
                rows[-1]["steal"] = {c: after[c] - before[c] for c in pool}
            blocks = [r["steal"] for r in rows[-len(MODES) * args.batches :] if "steal" in r]
            stolen = {c: sum(block[c] for block in blocks) for c in pool}
            round_ += 1
        print(f"Q{number}: {round_} rounds", file=sys.stderr, flush=True)
    return rows


def summarize(rows: list[dict[str, Any]], window_s: float = 30.0) -> None:
    print("| query | candidate | mode | baseline ms | kernel ms | speedup | speedup per 30 s: min-max | "
          "steal ticks on the runners' cores | cores the kernel ran on |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted({(r["query"], r["candidate"]) for r in rows}):
        for mode in MODES:
            mine = [r for r in rows if (r["query"], r["candidate"], r["mode"]) == (*key, mode)]
            if not mine:
                continue
            base = statistics.median(r["baseline_ms"] for r in mine)
            kern = statistics.median(r["kernel_ms"] for r in mine)
            windows: dict[int, list[dict[str, Any]]] = {}
            for r in mine:
                windows.setdefault(int(r["at_s"] // window_s), []).append(r)
            per_window = [
                statistics.median(r["baseline_ms"] for r in w) / statistics.median(r["kernel_ms"] for r in w)
                for w in windows.values()
            ]
            stolen = sum(
                sum(ticks for core, ticks in r["steal"].items() if int(core) in r["runners"])
                / len(r["runners"])
                for r in mine
                if "steal" in r
            )
            cores = sorted({r["kernel_core"] for r in mine})
            print(f"| Q{key[0]} | {key[1]} | {mode} | {base:.4f} | {kern:.4f} | {base / kern:.3f} | "
                  f"{min(per_window):.3f}-{max(per_window):.3f} | {stolen:g} | {cores} |")  # fmt: skip
    total: dict[str, int] = {}
    for r in rows:
        for core, ticks in r.get("steal", {}).items():
            total[str(core)] = total.get(str(core), 0) + ticks
    print(f"\nsteal ticks per core while the modes ran: {total}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sf_folder", type=Path)
    parser.add_argument("--candidate", action="append", help="N=KERNEL_FILE (B: the compiled TorchPlan)")
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--batches", type=int, default=3, help="batches per side, mode and round")
    parser.add_argument("--seconds", type=float, default=240.0, help="per candidate")
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the script")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    print(f"cores {split(args.device)}", flush=True)
    given = candidates(args.candidate, "3=examples/triton-core/q03.py")
    rows = [row for number, kernel in given for row in measure(args, number, kernel)]
    summarize(rows)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
