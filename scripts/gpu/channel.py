"""What timing from outside the runner costs, on the GPU: one query's TorchPlan timed three ways,
interleaved, at 1, 2, 5, 10 and 20 calls a sample:

- in this process, each call by itself (sync -> call -> sync on this clock), as runners timed
  themselves until harness 0.4.1;
- through a real runner (evaluator/runner/commands.py, the landed channel: `arm`, then a `batch` timed
  here from sending it to holding every result), as the harness times both sides;
- by that same runner's own clock around the same batch's calls (each result's `take` among them: it
  runs while the device computes the call), and around the gathering of their results (a diagnostic
  wrapper of `batch`, in this script only: the harness never reads a runner's clock).

The channel's cost is the second against the third, in one process on the same batches: what the
pipe, the wake-ups and the gathering of results add to the calls ("channel"). The third against the
first is the host speed of two processes, which no channel removes ("process"; docs/benchmarks.md,
session 13), and the second against the first both together ("total"). "take" is the time the batch's
`take`s held the host, inside the calls: hidden where the device was still busy with the call. "left"
is the channel's cost once the harness (0.6.10) takes its measured channel off each sample: the median
so far of the runner's echoes of batches as long (`echo`, between `arm` and the batch: the layout and
bytes of its last batch, sent back with no call made), `RoundTrip.minus`; "ping-left" what 0.6.6-0.6.9
left, taking off only an empty command's round trip (`ping`). "left" is what the harness's timings carry.

    python scripts/gpu/channel.py SF_FOLDER [--query 6] [--mode compiled] [--rounds 3] [--out F.json]

Prints a table and writes the rows as JSON with --out. The target: under 1% at the batch size the
harness picks for a 0.5 ms call (TimingPolicy.calls_per_sample: 5 ms of calls a sample, 10 calls).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402

from evaluator.harness.launch import Launch, Launcher  # noqa: E402
from evaluator.harness.remote import Remote  # noqa: E402
from evaluator.harness.session import SPIN_S  # noqa: E402
from evaluator.harness.timed import RoundTrip  # noqa: E402
from evaluator.queries import QUERIES  # noqa: E402
from evaluator.results import unpack  # noqa: E402
from evaluator.timing import TimingPolicy, time_rotated, time_rounds  # noqa: E402
from evaluator.tpch.load import load_tables  # noqa: E402

BATCHES = (1, 2, 5, 10, 20)

# The runner, with `batch` wrapped to read its own clock: before the calls, around each result's `take`
# (inside the calls: it runs while the device computes), before `gather`, after.
SELF_TIMED = """
import os, time
from evaluator import results
from evaluator.runner import commands

def batch(state, command, real=commands.batch, take=results.take, gather=results.gather):
    clock = {"take": 0.0}
    def timed_take(*args):
        started = time.perf_counter()
        try:
            return take(*args)
        finally:
            clock["take"] += time.perf_counter() - started
    def timed_gather(views):
        clock["gather"] = time.perf_counter()
        return gather(views)
    results.take, results.gather = timed_take, timed_gather
    started = time.perf_counter()
    try:
        answer, data = real(state, command)
    finally:
        results.take, results.gather = take, gather
    answer["calls_s"] = clock["gather"] - started
    answer["take_s"] = clock["take"]
    answer["pack_s"] = time.perf_counter() - clock["gather"]
    return answer, data

commands.COMMANDS["batch"] = batch
commands.main()
os._exit(0)
"""


@contextmanager
def self_timed_runner(
    folder: Path,
    device: str,
    query: int,
    mode: str,
    params: list[dict[str, Any]],
    pool: int,
    code: str = SELF_TIMED,
    warm: bool = False,
    prefix: list[str] | None = None,
    profiler: bool = False,
    launcher: Launcher | None = None,
) -> Iterator[Remote]:
    """A runner (`code`: this script's, or another's with commands of its own) of the query's TorchPlan in
    `mode` ("compiled" or "eager"), or of a kernel file (core scope), its tables loaded and its pool made,
    ready to time; with `warm`, started and pooled as the harness starts a baseline's (its compile's
    imports in `start`, its first calls in `pool`); `prefix`: a command that runs the runner (setarch);
    `profiler`: its start sets the profiler up, as a runner the harness starts ahead of its query;
    `launcher`: how it starts (the trusted side's plain `Launcher` unless told: a kernel's runner starts
    through its sandbox's, `sandbox.launcher`)."""
    with tempfile.TemporaryDirectory(prefix="dkb-channel-") as scratch:
        launch = Launch(
            argv=[*(prefix or []), sys.executable, "-c", code], readable=[folder],
            writable=[Path(scratch)], hidden=[],
            env={"OMP_WAIT_POLICY": "PASSIVE"}, timeout_s=3600, channel=True,  # as the harness's runners
        )  # fmt: skip
        started = (launcher or Launcher()).start(launch)
        remote = Remote(started, "baseline", spin_s=SPIN_S if device == "cuda" else 0.0)
        try:
            for command, timeout_s in set_up(folder, device, query, mode, params, pool, warm, profiler):
                remote.ask(command, timeout_s)
            yield remote
        finally:
            remote.stop()


def set_up(
    folder: Path,
    device: str,
    query: int,
    mode: str,
    params: list[dict[str, Any]],
    pool: int,
    warm: bool = False,
    profiler: bool = False,
) -> list[tuple[dict[str, Any], float]]:
    """The commands, each with its timeout in seconds, that make a runner of `mode` ready to time
    (`self_timed_runner`'s arguments of the same names)."""
    compiled = {"compile": True} if warm and mode == "compiled" else {}
    compiled |= {"profiler": True} if profiler else {}
    load = {"baseline": mode} if mode in ("compiled", "eager") else {"kernel_path": mode, "scope": "core"}
    return [
        ({"op": "start", "device": device, "query": query} | compiled, 300),
        ({"op": "load"} | load, 600),
        ({"op": "tables", "folder": str(folder)}, 300),
        ({"op": "pool", "size": pool, "params": params} | ({"warm": True} if warm else {}), 600),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sf_folder", type=Path)
    parser.add_argument("--query", type=int, default=6)
    parser.add_argument("--mode", choices=("compiled", "eager"), default="compiled")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-time", type=float, default=2.0)
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the script")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    query, device = QUERIES[args.query], torch.device(args.device)
    params = query.parameter_sets(4, 20261202)
    policy = replace(TimingPolicy.for_device(device.type, args.max_time), batch_ms=0.0)
    tables = load_tables(args.sf_folder, query.columns(), device)
    plan = query.plan()
    fn = query.with_core(torch.compile(plan._query_core)) if args.mode == "compiled" else plan.run_query
    pool = [tables.clone() for _ in range(policy.pool)]

    def local(rep: int) -> object:
        return fn(pool[rep % len(pool)], **params[rep % len(params)])

    rows = []
    runner = self_timed_runner(args.sf_folder, args.device, query.number, args.mode, params, policy.pool)
    with runner as remote:
        inside: list[dict[str, float]] = []
        trip = RoundTrip()

        def through(rep: int, calls: int) -> float:
            # As the harness times a batch (timed.timed_batch), the raw seconds kept too.
            remote.ask({"op": "arm"}, 300)
            trip.echo(remote, 300)  # the runner echoes its own last batch, as the baseline's does (0.6.10)
            trip.add("baseline", remote.timed({"op": "ping"}, 300)[0])
            batch = [[rep + i, (rep + i) % len(params)] for i in range(calls)]
            seconds, answer, payload = remote.timed({"op": "batch", "calls": batch}, 300)
            unpack(answer["layout"], payload, calls)  # as the harness does, after its clock stops
            trip.keep("baseline", answer["layout"], batch)
            left_s = trip.minus(seconds, "baseline", calls)
            inside.append({"calls": calls, "outside_s": seconds, "left_s": left_s,
                           "ping_left_s": seconds - min(trip.median_s(), seconds / 2),
                           "calls_s": answer["calls_s"], "take_s": answer["take_s"],
                           "pack_s": answer["pack_s"]})  # fmt: skip
            return seconds * 1e3 / calls

        for round_ in range(args.rounds):
            in_process = time_rotated({"local": local}, device=device, policy=policy, strata=len(params))
            row: dict[str, Any] = {"round": round_, "in_process_ms": in_process["local"].median_ms}
            for calls in BATCHES:
                inside.clear()
                trip = RoundTrip()
                time_rounds({"remote": lambda rep, _calls, calls=calls: through(rep, calls)}, policy=policy)
                samples = [s for s in inside if s["calls"] == calls][len(inside) // 10 :]  # warm-up's out
                calls_ms = statistics.median(1e3 * s["calls_s"] / calls for s in samples)
                outside_ms = statistics.median(1e3 * s["outside_s"] / calls for s in samples)
                row[f"calls_{calls}"] = {
                    "samples": len(samples),
                    "outside_ms": outside_ms,
                    "inside_ms": calls_ms,
                    "take_us": statistics.median(1e6 * s["take_s"] for s in samples),
                    "pack_us": statistics.median(1e6 * s["pack_s"] for s in samples),
                    "pipe_us": statistics.median(
                        1e6 * (s["outside_s"] - s["calls_s"] - s["pack_s"]) for s in samples
                    ),
                    # the channel's cost: the harness's clock against the runner's own, batch by batch
                    "channel_pct": statistics.median(
                        100 * (s["outside_s"] / s["calls_s"] - 1) for s in samples
                    ),
                    # what is left once the harness takes its measured channel off each sample: the echo
                    # of the batch (0.6.10), or the round trip alone (0.6.6-0.6.9)
                    "left_pct": statistics.median(100 * (s["left_s"] / s["calls_s"] - 1) for s in samples),
                    "ping_left_pct": statistics.median(
                        100 * (s["ping_left_s"] / s["calls_s"] - 1) for s in samples
                    ),
                    "ping_us": trip.median_s() * 1e6,
                    "process_pct": 100 * (calls_ms / row["in_process_ms"] - 1),
                    # both together: the harness's clock against the calls timed in this process
                    "total_pct": 100 * (outside_ms / row["in_process_ms"] - 1),
                }
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(
        f"Q{query.number:02d} {args.mode}, {args.sf_folder.name}: the channel's cost (the harness's clock "
        f"against the runner's own) and the runner's calls against this process's, per batch size"
    )
    print(f"{'calls':>5} {'outside ms':>10} {'inside ms':>9} {'take us':>8} {'pack us':>8} {'pipe us':>8} "
          f"{'channel':>8} {'left':>8} {'ping-left':>9} {'process':>8} {'total':>8}")  # fmt: skip
    for calls in BATCHES:
        cell = {k: statistics.median(r[f"calls_{calls}"][k] for r in rows) for k in rows[0][f"calls_{calls}"]}
        shown = ("channel_pct", "left_pct", "ping_left_pct", "process_pct", "total_pct")
        pcts = " ".join(f"{cell[k]:>+7.2f}%" for k in shown)
        print(f"{calls:>5} {cell['outside_ms']:>10.4f} {cell['inside_ms']:>9.4f} {cell['take_us']:>8.1f} "
              f"{cell['pack_us']:>8.1f} {cell['pipe_us']:>8.1f} {pcts}")  # fmt: skip
    pings = [r[f"calls_{calls}"]["ping_us"] for r in rows for calls in BATCHES]
    print("in-process medians: " + ", ".join(f"{r['in_process_ms']:.4f}" for r in rows) + " ms; the round "
          f"trip taken off: {min(pings):.1f}-{max(pings):.1f} us")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps({"query": query.number, "mode": args.mode, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
