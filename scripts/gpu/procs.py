"""Is a runner's speed a property of its process? Many runners of one candidate, timed in turns on one core.

Session 28 found the Triton Q3 kernel's calls at 1.52 ms in one evaluation and 1.90 in the next, minutes
apart on one machine, the same runner's warm-up calls (on other cores, before timing) as slow as its
samples, while harness 0.4.1, whose one process times both sides, kept its speedups within 1.6%. If each
runner process has a speed of its own, the kernel's and the baseline's are two draws, and no choice of
core evens them; in one process they cancel. Here runners of each candidate start side by side, as
the harness starts a query's (--procs of them on the harness's cores, "home"; as many on DuckDB's, as a
runner started ahead of its query, "away"; and, with --norand, as many with address-space
randomization off, `setarch -R`: if the layout is what differs, those agree with one another), then
take turns on the runners' core as an evaluation's sides do (armed with the harness's prime, a batch
timed by the runner's own clock, call by call), in a new order each round, while this process spins on
the harness's cores. Per process: the median call, its spread over rounds, the host time before each
synchronize ("issue"), and what the runner's process did meanwhile (page faults, context switches).
Processes that differ far more than one process does from round to round have speeds of their own
(session 29, on an H100: they did not, within 1%; docs/benchmarks.md).

    python scripts/gpu/procs.py SF_FOLDER [--candidate 3=examples/triton-core/q03.py] [--procs 3] [--norand]
    python scripts/gpu/procs.py SF_FOLDER --device cpu --procs 2 --rounds 2 --batches 1   # a dry run
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import statistics
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import channel  # noqa: E402
from switch import RUNNER, candidates  # noqa: E402

from evaluator.harness.cores import pinned, split  # noqa: E402
from evaluator.queries import QUERIES  # noqa: E402


def groups(norand: bool) -> dict[str, dict[str, Any]]:
    return {"home": {"norand": False, "away": False}, "away": {"norand": False, "away": True}} | (
        {"norand": {"norand": True, "away": False}} if norand else {}
    )


def measure(args: argparse.Namespace, number: int, kernel: str) -> list[dict[str, Any]]:
    params = QUERIES[number].parameter_sets(4, 20261202)
    calls = [[i, i % len(params)] for i in range(args.calls)]
    cores = split(args.device)
    runner_core = sorted(cores.runners) if cores else None
    spin = cores.harness if cores else None
    setarch = [shutil.which("setarch") or "setarch", platform.machine(), "-R"]
    rows: list[dict[str, Any]] = []
    with ExitStack() as stack:
        runners = []
        for group, how in groups(args.norand).items():
            for index in range(args.procs):
                # Started on DuckDB's cores ("away") or the harness's: the runner inherits this thread's.
                with pinned((cores.answers if how["away"] else cores.harness) if cores else None):
                    remote = stack.enter_context(
                        channel.self_timed_runner(
                            args.sf_folder, args.device, number, kernel, params, args.pool, code=RUNNER,
                            warm=True, prefix=setarch if how["norand"] else [],
                        )
                    )  # fmt: skip
                    where = remote.ask({"op": "where"}, 60)[0]
                runners.append((f"{group}{index}", remote, where))
                print(f"Q{number} {group}{index} started: {where}", file=sys.stderr, flush=True)
        order = list(range(len(runners)))
        with pinned(spin):
            for round_ in range(args.rounds):
                random.Random(round_).shuffle(order)
                for at in order:
                    name, remote, where = runners[at]
                    for _ in range(args.batches):
                        arm = {"op": "arm", "prime": args.device == "cuda"}
                        remote.ask(arm | ({"cpus": runner_core} if runner_core else {}), 300)
                        answer, _ = remote.ask({"op": "percall", "calls": calls}, 300)
                        rows.append({"query": number, "candidate": Path(kernel).name, "process": name,
                                     "round": round_, "where": where} | answer)  # fmt: skip
                print(f"Q{number} round {round_}: done", file=sys.stderr, flush=True)
    return rows


def summarize(rows: list[dict[str, Any]]) -> None:
    print("| query | candidate | process | call ms | rounds' spread | issue ms | faults a batch | "
          "switches a batch | heap address |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted({(r["query"], r["candidate"]) for r in rows}):
        mine = [r for r in rows if (r["query"], r["candidate"]) == key]
        spread_within, medians = [], []
        for name in sorted({r["process"] for r in mine}):
            kept = [r for r in mine if r["process"] == name]
            by_round = [
                statistics.median(1e3 * statistics.median(r["call_s"]) for r in kept if r["round"] == n)
                for n in sorted({r["round"] for r in kept})
            ]
            call = statistics.median(by_round)
            spread = (max(by_round) - min(by_round)) / call
            issue = statistics.median(1e3 * statistics.median(r["issue_s"]) for r in kept)
            faults = statistics.median(r["minflt"] for r in kept)
            switches = statistics.median(r["nvcsw"] + r["nivcsw"] for r in kept)
            spread_within.append(spread)
            medians.append(call)
            print(f"| Q{key[0]} | {key[1]} | {name} | {call:.4f} | {100 * spread:.1f}% | {issue:.4f} | "
                  f"{faults:g} | {switches:g} | {kept[0]['where']['heap']:#x} |")  # fmt: skip
        between = (max(medians) - min(medians)) / statistics.median(medians)
        print(f"\nQ{key[0]} {key[1]}: processes' medians {min(medians):.4f}-{max(medians):.4f} ms "
              f"({100 * between:.1f}% apart); a process's rounds, median spread "
              f"{100 * statistics.median(spread_within):.1f}%\n")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sf_folder", type=Path)
    parser.add_argument("--candidate", action="append", help="N (compiled TorchPlan) or N=KERNEL_FILE")
    parser.add_argument("--procs", type=int, default=3, help="runners per group")
    parser.add_argument("--norand", action="store_true", help="and a group with randomization off")
    parser.add_argument("--calls", type=int, default=10)
    # Two clones of the tables a runner: SF10's Q3 holds about 1.7 GB a clone, and all of a candidate's
    # runners hold theirs at once.
    parser.add_argument("--pool", type=int, default=2)
    parser.add_argument("--batches", type=int, default=2, help="batches per process and round")
    parser.add_argument("--rounds", type=int, default=30)
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
