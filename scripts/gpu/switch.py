"""Where a runner's calls lose time, call by call, under each condition an evaluation puts it in.

The example sets' calls run 13-20% slower in the runners than in harness 0.4.1's one process (sessions
20-27 on H100s), the kernels more than their baselines, and the baseline timed alone, the kernel's runner
gone, no faster (session 27). Session 17's host.py blamed a second runner's turns on the device (+9-10%
on the H200), with the harness's spin on one fixed core. This measures each suspect by itself. Runner A
(the candidate) times batches of calls by its own clock, each call from its start to its return ("issue":
the host's work of launching it) and until the device is done ("call"); runner B (the query's eager
TorchPlan) holds its context and tables throughout. Conditions, each against "free":

- free: A's thread where Linux puts it; this process sleeps on A's answer (as 0.4.1: nothing spins);
- pinned: A on the runners' core (evaluator/harness/cores.py), this process sleeping;
- pinned+spin: and this process polls for A's answer on the harness's cores, as the harness does;
- spin@N: this process polls from core N alone (every other core in turn: a hidden SMT sibling of the
  runners' core would show as one N far dearer than the rest);
- turns: as pinned+spin, and B runs a batch on A's core between two of A's, as in an evaluation;
- turns+warm: and A makes one call, untimed, before each batch's L2 flush (the harness's `prime`, 0.6.15);
- apart: as turns, B on another core;
- cpu: as pinned+spin, and B keeps A's core busy (8 MB of memory) as long as its batch took, no GPU work;
- free+flush, pinned+spin+flush, turns+warm+flush: as each, the L2 cache flushed before every call (off
  A's clock), as harness 0.4.1 and the protocol flush it, not only before each batch as 0.6.x does;
- free+profiled, turns+warm+profiled: as each, timing a second runner of the candidate whose start set
  the profiler up, as the harness's runners started ahead of their query do (`start`'s "profiler"; a
  profiled process can slow every launch after, where CUPTI is not torn down);
- free+sandboxed, turns+warm+sandboxed: as each, timing a second runner of the candidate started through
  the `process` sandbox's launcher, as the harness starts a kernel's runner under `--sandbox process`
  (its environment cleared, its rlimits, and where it may, a memory and pids cgroup); A, like the
  baseline's runner, starts through the plain launcher, its environment this process's.
- inline, inline+flush: as free, the candidate called in this process itself, no runner, as harness 0.4.1
  timed both sides in its one process (which flushed the L2 cache before every call: inline+flush);
- pair: 0.4.1's loop itself, a kernel file's candidate and the compiled plan both in this process,
  sharing tables and clones, in turn call by call, each call flushed first (rows for both).

With `--profile`, after each condition's batches in each round, the candidate (under `pair`, both) makes
one more call under torch.profiler, the harness's own `profile` command on the first clone and parameter
set: its device time, all kernels, per condition. The harness's reports put the Triton Q14 kernel at
519-522 us of device time in 0.6.x's runner against 492-495 in 0.4.1's one process, the same file,
parameters and H200 (docs/benchmarks.md, session 35); `free` against `inline` and `pair` says whether a
runner of its own is where that comes from (runner B's context is alive under every condition).

A's batches are armed as the harness arms them (L2 flushed, device idle). The table gives the first call
of a batch and the rest: a cost in the first call only is a switch that one untimed call would absorb; a
cost in every call is not. The last table gives, for each condition both the compiled plan and a kernel
file ran under, the speedup a harness timing that way would report (the plan over the kernel, round by
round). Only `pair` times the two in the same moments: the candidates are measured one after the other,
so under any other condition a round's ratio joins moments minutes apart, the host's drift in it.

    python scripts/gpu/switch.py SF_FOLDER [--candidate 6] [--candidate 3=examples/triton-core/q03.py]
    python scripts/gpu/switch.py SF_FOLDER --device cpu --batches 2 --rounds 1   # a dry run, 2 cores
    python scripts/gpu/switch.py --read OUT.json                                 # a run's tables again
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from channel import self_timed_runner, set_up  # noqa: E402

from evaluator.harness.cores import pinned, split  # noqa: E402
from evaluator.harness.session import SPIN_S  # noqa: E402
from evaluator.queries import QUERIES  # noqa: E402
from sandbox import launcher  # noqa: E402

# The runner, with three more commands: `percall` (a batch timed call by call by its own clock, no results
# gathered; with the core it last ran on and its page faults and context switches meanwhile), `burn` (host
# work) and `where` (addresses of the heap, a code object and the stack, which differ between processes
# only through address-space randomization: scripts/gpu/procs.py). The commands alone (`COMMANDS`) also
# serve the `inline` conditions, in this process.
COMMANDS = """
import os, resource, sys, time
import numpy as np
from evaluator.runner import commands

def _usage():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return {"minflt": u.ru_minflt, "nvcsw": u.ru_nvcsw, "nivcsw": u.ru_nivcsw}

def timed_call(state, clone, index, flush):
    if flush:
        state.flush.fill_(0)
        state.sync()
    started = time.perf_counter()
    state.call(state.pool[clone % len(state.pool)], state.params[index])
    issued = time.perf_counter()
    state.sync()
    return issued - started, time.perf_counter() - started

def percall(state, command):
    issue, call = [], []
    flush = command.get("flush") and state.flush is not None
    before = _usage()
    for clone, index in command["calls"]:
        issued, called = timed_call(state, clone, index, flush)
        issue.append(issued)
        call.append(called)
    after = _usage()
    with open("/proc/thread-self/stat") as stat:
        core = int(stat.read().rsplit(")", 1)[1].split()[36])
    return {"issue_s": issue, "call_s": call, "core": core} | {k: after[k] - before[k] for k in before}, b""

def where(state, command):
    return {"heap": id(object()), "code": id(commands.main.__code__), "stack": id(sys._getframe())}, b""

MEMORY = np.ones(1 << 20)  # 8 MB

def burn(state, command):
    if command.get("cpus"):
        os.sched_setaffinity(0, command["cpus"])
    until = time.perf_counter() + command["seconds"]
    while time.perf_counter() < until:
        MEMORY.sum()
    return {}, b""
"""
SERVE = """
commands.COMMANDS.update(percall=percall, burn=burn, where=where)
commands.main()
os._exit(0)
"""
RUNNER = COMMANDS + SERVE


class Inline:
    """The candidate in this process, no runner: what harness 0.4.1 timed (its one process, tables, pool
    and candidate its own). `ask` answers a runner's commands, `percall` and `arm` included, by calling
    them here; set up as `self_timed_runner` sets a runner up."""

    def __init__(
        self,
        folder: Path,
        device: str,
        number: int,
        mode: str,
        params: list[Any],
        pool: int,
        share: Inline | None = None,
    ):
        from evaluator.runner import commands

        namespace: dict[str, Any] = {}
        exec(COMMANDS, namespace)  # noqa: S102 - this script's own runner code, run here instead
        self.handlers = commands.COMMANDS | {"percall": namespace["percall"]}
        self.timed_call = namespace["timed_call"]
        self.state = commands.State()
        self.spin_s = 0.0
        for command, _ in set_up(folder, device, number, mode, params, pool, warm=True):
            if command["op"] == "tables" and share is not None:
                self.state.tables = share.state.tables  # as 0.4.1's two candidates shared their tables
            else:
                self.ask(command)
        if share is not None:
            self.state.pool = share.state.pool  # and their clones

    def ask(self, command: dict[str, Any], timeout_s: float = 0.0) -> Any:
        return self.handlers[command["op"]](self.state, command)


def paired(first: Inline, then: Inline, calls: list[list[int]]) -> list[dict[str, Any]]:
    """Harness 0.4.1's loop: two candidates in one process, in turn call by call, the L2 cache flushed
    and the device idle before each call; per candidate its calls' times as `percall` answers them."""
    times: list[dict[str, Any]] = [{"issue_s": [], "call_s": []}, {"issue_s": [], "call_s": []}]
    for clone, index in calls:
        for one, kept in zip((first, then), times, strict=True):
            issued, called = one.timed_call(one.state, clone, index, one.state.flush is not None)
            kept["issue_s"].append(issued)
            kept["call_s"].append(called)
    return times


def candidates(given: list[str] | None, default: str) -> list[tuple[int, str]]:
    """`--candidate` values, N (the compiled TorchPlan) or N=KERNEL_FILE, as (query, "compiled" or file)."""
    found = []
    for candidate in given or [default]:
        number, _, kernel = candidate.partition("=")
        found.append((int(number), str(Path(kernel).resolve()) if kernel else "compiled"))
    return found


def conditions(device: str) -> dict[str, dict[str, Any]]:
    """Per condition: A pinned or not, where this process polls (None: it sleeps), B's turn."""
    cores = split(device)
    everything = sorted(os.sched_getaffinity(0))
    core = sorted(cores.runners) if cores else everything[-1:]
    harness = sorted(cores.harness) if cores else everything
    found: dict[str, dict[str, Any]] = {
        "free": {"a": everything, "spin": None},
        "pinned": {"a": core, "spin": None},
        "pinned+spin": {"a": core, "spin": harness},
    }
    for other in everything:
        if other not in core:
            found[f"spin@{other}"] = {"a": core, "spin": [other]}
    found["turns"] = {"a": core, "spin": harness, "b": core}
    found["turns+warm"] = {"a": core, "spin": harness, "b": core, "warm": True}
    found["apart"] = {"a": core, "spin": harness, "b": [c for c in harness if c not in core][-1:] or core}
    found["cpu"] = {"a": core, "spin": harness, "burn": core}
    for name in ("free", "pinned+spin", "turns+warm"):
        found[f"{name}+flush"] = found[name] | {"flush": True}
    for name in ("free", "turns+warm"):
        found[f"{name}+profiled"] = found[name] | {"profiled": True}
        found[f"{name}+sandboxed"] = found[name] | {"sandboxed": True}
    found["inline"] = found["free"] | {"inline": True}
    found["inline+flush"] = found["inline"] | {"flush": True}
    found["pair"] = found["inline"] | {"pair": True}
    return found


def measure(
    args: argparse.Namespace, number: int, kernel: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The batches' rows, and with `--profile` the profiled calls' (`device_times`)."""
    params = QUERIES[number].parameter_sets(4, 20261202)
    calls = [[i, i % len(params)] for i in range(args.calls)]
    spin_s = SPIN_S if args.device == "cuda" else 0.0
    rows = []
    profiles = []
    # "free" always: the others are read against it.
    wanted = set(args.conditions or conditions(args.device)) | {"free"}
    found = {n: c for n, c in conditions(args.device).items() if n in wanted}
    with ExitStack() as stack:

        def runner(mode: str, variant: str | None = None) -> Any:
            options: dict[str, Any] = {"code": RUNNER, "warm": True, "profiler": variant == "profiled"}
            if variant == "sandboxed":  # as the harness starts a kernel's runner
                options["launcher"] = launcher(
                    "process", device=args.device, deadline=time.monotonic() + 3600
                )
            started = self_timed_runner(args.sf_folder, args.device, number, mode, params, 4, **options)
            return stack.enter_context(started)

        plain, b = runner(kernel), runner("eager")
        # A second runner of the candidate for each variant the conditions ask for ("inline": this process).
        variants = {
            v: runner(kernel, v) for v in ("profiled", "sandboxed") if any(c.get(v) for c in found.values())
        }
        if any(c.get("inline") for c in found.values()):
            variants["inline"] = Inline(args.sf_folder, args.device, number, kernel, params, 4)
        if kernel == "compiled":  # "pair" times a kernel file beside the compiled plan
            found.pop("pair", None)
        elif "pair" in found:
            plan = Inline(
                args.sf_folder, args.device, number, "compiled", params, 4, share=variants["inline"]
            )
        b_s = 0.01
        for round_ in range(args.rounds):
            for name, condition in found.items():
                spin = condition["spin"]
                a = next((variants[v] for v in variants if condition.get(v)), plain)
                a.spin_s = b.spin_s = spin_s if spin else 0.0
                with pinned(frozenset(spin) if spin else None):
                    for rep in range(args.batches + 1):  # the first batch of each: a warm-up, not kept
                        if condition.get("pair"):  # the compiled plan first, as 0.4.1's "baseline"
                            both = paired(plan, a, calls)
                            if rep:
                                rows += [{"query": number, "candidate": who, "round": round_,
                                          "condition": name, "at": time.time()} | answer
                                         for who, answer in zip(("compiled", Path(kernel).name), both,
                                                                strict=True)]  # fmt: skip
                            continue
                        if "b" in condition:
                            b.ask({"op": "arm", "cpus": condition["b"]}, 300)
                            b_s = sum(b.ask({"op": "percall", "calls": calls}, 300)[0]["call_s"])
                        if "burn" in condition:
                            b.ask({"op": "burn", "cpus": condition["burn"], "seconds": b_s}, 300)
                        # "warm": the harness's own `prime` (0.6.15), one untimed call as the runner is armed
                        a.ask(
                            {"op": "arm", "cpus": condition["a"], "prime": condition.get("warm", False)}, 300
                        )
                        flush = condition.get("flush", False)
                        answer, _ = a.ask({"op": "percall", "calls": calls, "flush": flush}, 300)
                        if rep:
                            row = {"query": number, "candidate": Path(kernel).name, "round": round_,
                                   "condition": name, "at": time.time()} | answer  # fmt: skip
                            rows.append(row)
                    if args.profile:
                        kept = [(Path(kernel).name, a)] + (
                            [("compiled", plan)] if condition.get("pair") else []
                        )
                        for who, one in kept:
                            answer, _ = one.ask({"op": "profile", "params": params[0]}, 300)
                            profiles.append({"query": number, "candidate": who, "round": round_,
                                             "condition": name, "activity": answer["activity"],
                                             "at": time.time()})  # fmt: skip
                print(f"Q{number} {name} round {round_}: done", file=sys.stderr, flush=True)
    return rows, profiles


def others_ms(row: dict[str, Any], key: str = "call_s") -> float:
    """A batch's calls after its first: the mean of their `key` ("call_s", or "issue_s"), ms."""
    return 1e3 * statistics.mean(row[key][1:])


def figures(rows: list[dict[str, Any]]) -> tuple[float, float, float, float]:
    """Milliseconds, medians over batches: the first call, the mean of the others, and each's issue."""
    first = statistics.median(1e3 * r["call_s"][0] for r in rows)
    others = statistics.median(others_ms(r) for r in rows)
    issue_first = statistics.median(1e3 * r["issue_s"][0] for r in rows)
    issue_others = statistics.median(others_ms(r, "issue_s") for r in rows)
    return first, others, issue_first, issue_others


def summarize(rows: list[dict[str, Any]]) -> None:
    print("| query | candidate | condition | first call ms | vs free | other calls ms | vs free | "
          "issue, first ms | issue, others ms |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted({(r["query"], r["candidate"]) for r in rows}):
        mine = [r for r in rows if (r["query"], r["candidate"]) == key]
        by = {
            name: [r for r in mine if r["condition"] == name]
            for name in dict.fromkeys(r["condition"] for r in mine)
        }
        # The compiled plan has "pair" rows without "free" ones where only a kernel file was a candidate.
        free = figures(by["free"]) if "free" in by else None
        for name, kept in by.items():
            first, others, issue_first, issue_others = figures(kept)
            print(f"| Q{key[0]} | {key[1]} | {name} | {first:.4f} | {versus(first, free, 0)} | "
                  f"{others:.4f} | {versus(others, free, 1)} | {issue_first:.4f} | "
                  f"{issue_others:.4f} |")  # fmt: skip


def versus(mine: float, free: tuple[float, ...] | None, column: int) -> str:
    return f"{100 * (mine / free[column] - 1):+.1f}%" if free else ""


def batches(rows: list[dict[str, Any]], name: str, round_: int | None = None) -> list[float]:
    """A condition's batches (in one round, or all), each its calls after the first, ms, fastest first."""
    kept = (r for r in rows if r["condition"] == name and round_ in (None, r["round"]))
    return sorted(others_ms(r) for r in kept)


VARIANTS = ("+flush", "+profiled", "+sandboxed")  # conditions read against their twin without the suffix


def fast_state(rows: list[dict[str, Any]], nth: int = 4) -> None:
    """For a host with slow spells of seconds (session 30's: 10-20%, no steal): per candidate, each
    condition's `nth`-fastest batch, the host's fast state; and each variant (`VARIANTS`) against its
    twin, there and round by round (the median of the rounds' ratios)."""
    median = statistics.median
    columns = "".join(f" {v} there | {v}, rounds |" for v in VARIANTS)
    print(f"| query | candidate | condition | {nth}th-fastest batch, ms |{columns}")
    print("|---|---|---|---|" + "---|---|" * len(VARIANTS))
    for key in sorted({(r["query"], r["candidate"]) for r in rows}):
        mine = [r for r in rows if (r["query"], r["candidate"]) == key]
        names = list(dict.fromkeys(r["condition"] for r in mine))
        for name in (n for n in names if not n.endswith(VARIANTS)):
            plain = batches(mine, name)
            fast = plain[min(nth, len(plain)) - 1]
            cells = []
            for variant in (name + v for v in VARIANTS):
                if variant not in names:
                    cells += ["", ""]
                    continue
                other = batches(mine, variant)
                ratios = [
                    median(batches(mine, variant, k)) / median(batches(mine, name, k))
                    for k in sorted({r["round"] for r in mine})
                ]
                cells += [f"{100 * (other[min(nth, len(other)) - 1] / fast - 1):+.1f}%",
                          f"{100 * (median(ratios) - 1):+.1f}%"]  # fmt: skip
            print(f"| Q{key[0]} | {key[1]} | {name} | {fast:.4f} | " + " | ".join(cells) + " |")


def speedups(rows: list[dict[str, Any]]) -> None:
    """Per query and condition both the compiled plan and a kernel file ran under, the speedup a harness
    timing that way would report: round by round, the plan's median batch over the kernel's, and the
    median over rounds. Only under `pair` did a round's two sides run in the same moments."""
    median = statistics.median
    print("| query | kernel | condition | speedup, round by round | median |")
    print("|---|---|---|---|---|")
    for number in sorted({r["query"] for r in rows}):
        mine = [r for r in rows if r["query"] == number]
        plan = [r for r in mine if r["candidate"] == "compiled"]
        for kernel in sorted({r["candidate"] for r in mine} - {"compiled"}):
            theirs = [r for r in mine if r["candidate"] == kernel]
            for name in dict.fromkeys(r["condition"] for r in theirs):
                rounds = sorted({r["round"] for r in theirs if r["condition"] == name})
                paired = [(batches(plan, name, k), batches(theirs, name, k)) for k in rounds]
                ratios = [median(ours) / median(kernels) for ours, kernels in paired if ours]
                if ratios:
                    listed = ", ".join(f"{x:.3f}" for x in ratios)
                    print(f"| Q{number} | {kernel} | {name} | {listed} | {median(ratios):.3f} |")


def device_times(profiles: list[dict[str, Any]]) -> None:
    """Per candidate and condition, the profiled call's device time (every kernel), round by round, and
    the median against `free`'s."""
    median = statistics.median
    print("| query | candidate | condition | device us, round by round | median | vs free |")
    print("|---|---|---|---|---|---|")
    for key in sorted({(p["query"], p["candidate"]) for p in profiles}):
        by: dict[str, list[float]] = {}
        for p in profiles:
            if (p["query"], p["candidate"]) == key and p["activity"] is not None:  # None: the profiler failed
                by.setdefault(p["condition"], []).append(sum(us for _, _, us in p["activity"]))
        free = median(by["free"]) if by.get("free") else None
        for name, totals in by.items():
            against = f"{100 * (median(totals) / free - 1):+.1f}%" if free else ""
            listed = ", ".join(f"{us:.0f}" for us in totals)
            print(f"| Q{key[0]} | {key[1]} | {name} | {listed} | {median(totals):.0f} | {against} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sf_folder", type=Path, nargs="?")
    parser.add_argument("--candidate", action="append", help="N (compiled TorchPlan) or N=KERNEL_FILE")
    parser.add_argument("--calls", type=int, default=10, help="calls a batch (the harness: 10 at 0.5 ms)")
    # Short blocks, many rounds: this host's speed drifts by up to 10% over minutes (session 28), and the
    # conditions run one block after another.
    parser.add_argument("--batches", type=int, default=5, help="batches per condition and round")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--conditions", type=lambda v: v.split(","), help="only these, comma-separated")
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the script")
    parser.add_argument("--profile", action="store_true", help="each condition's device time a call, too")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--read", type=Path, help="no measuring: the tables of an --out file")
    args = parser.parse_args()
    if args.read:
        saved = json.loads(args.read.read_text())
        summarize(saved["rows"])
        fast_state(saved["rows"])
        speedups(saved["rows"])
        device_times(saved.get("profiles", []))
        return
    if args.sf_folder is None:
        parser.error("SF_FOLDER is needed to measure (or --read a saved run)")
    siblings = {}  # per core, the SMT siblings Linux shows (none on a VM that hides them)
    for cpu in sorted(os.sched_getaffinity(0)):
        listed = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
        siblings[cpu] = listed.read_text().strip() if listed.exists() else ""
    print(f"cores {split(args.device)}; SMT siblings {siblings}", flush=True)
    given = candidates(args.candidate, "6")
    rows, profiles = [], []
    for number, kernel in given:
        measured, profiled = measure(args, number, kernel)
        rows += measured
        profiles += profiled
    summarize(rows)
    fast_state(rows)
    speedups(rows)
    device_times(profiles)
    if args.out:
        args.out.write_text(json.dumps({"siblings": siblings, "rows": rows, "profiles": profiles}, indent=1))


if __name__ == "__main__":
    main()
