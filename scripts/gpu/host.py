"""Where a runner's time goes beside what the harness runs: one query's compiled TorchPlan timed by a real
runner (its own clock around a batch's calls, as in scripts/gpu/channel.py) under the conditions an
evaluation puts it in, one at a time:

- free: the runner's thread where Linux puts it, nothing else running;
- pinned: on the last core, as the harness arms both runners (evaluator/harness/cores.py);
- pinned+spin: and a process spinning on the harness's cores, as the harness polls for answers;
- pinned+duckdb: and DuckDB answering queries on the first half of the cores, as the judge does;
- pinned+runner: and a second runner of the same plan timed in turn on the same core, as the kernel's is;
- free+runner: that second runner, both unpinned;
- pinned+all: spin, DuckDB and the second runner together, as in an evaluation.

Harness 0.6.4 measured the example sets' calls 5-104% slower than harness 0.4.1 (in-process, unpinned)
on the same machine, not both sides alike (docs/results/2026-12-04-h200-s15); this says which condition
costs what.

    python scripts/gpu/host.py SF_FOLDER [--queries 6,14] [--rounds 2] [--out F.json]
    python scripts/gpu/host.py SF_FOLDER --device cpu --split 0:1:0 --rounds 1   # a dry run, 2 cores
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from channel import self_timed_runner  # noqa: E402

from evaluator.harness.cores import Split, split  # noqa: E402
from evaluator.harness.remote import Remote  # noqa: E402
from evaluator.queries import QUERIES, Query  # noqa: E402
from evaluator.results import unpack  # noqa: E402
from evaluator.timing import TimingPolicy, time_rounds  # noqa: E402

SPIN = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"
DUCKDB = """
import os, sys
os.sched_setaffinity(0, {int(c) for c in sys.argv[2].split(",")})
import duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
con.execute(f"SET threads = {len(sys.argv[2].split(','))}")
while True:
    con.execute("SELECT l_returnflag, l_linestatus, sum(l_extendedprice * (1 - l_discount)), count(*) "
                "FROM lineitem GROUP BY ALL").fetchall()
    con.execute("SELECT o_orderpriority, count(*) FROM orders JOIN lineitem ON l_orderkey = o_orderkey "
                "WHERE l_commitdate < l_receiptdate GROUP BY ALL").fetchall()
"""


@contextmanager
def load(argvs: list[list[str]]) -> Iterator[None]:
    procs = [subprocess.Popen(argv) for argv in argvs]
    if procs:
        time.sleep(1.0)  # DuckDB's connection and first query under way
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def time_query(
    query: Query,
    args: argparse.Namespace,
    runner_core: list[int],
    conditions: list[str],
    loads: dict[str, list[list[str]]],
    policy: TimingPolicy,
) -> list[dict[str, Any]]:
    params = query.parameter_sets(4, 20261202)
    rows = []
    with ExitStack() as stack:
        runner = partial(self_timed_runner, args.sf_folder, args.device, query.number, "compiled", params)
        remotes = [stack.enter_context(runner(policy.pool)) for _ in range(2)]

        def through(remote: Remote, pin: bool, inside: list[float], rep: int, calls: int = 10) -> float:
            remote.ask({"op": "arm"} | ({"cpus": runner_core} if pin else {}), 300)
            batch = [[rep + i, (rep + i) % len(params)] for i in range(calls)]
            seconds, answer, payload = remote.timed({"op": "batch", "calls": batch}, 300)
            unpack(answer["layout"], payload, calls)
            inside.append(answer["calls_s"] * 1e3 / calls)
            return seconds * 1e3 / calls

        for round_ in range(args.rounds):
            for condition in conditions:
                pin = condition.startswith("pinned")
                cpus = runner_core if pin else sorted(os.sched_getaffinity(0))
                for remote in remotes:  # back where Linux puts it, or on the runners' core
                    remote.ask({"op": "arm", "cpus": cpus}, 300)
                extra = condition.split("+")[1] if "+" in condition else ""
                extras = {"spin", "duckdb", "runner"} if extra == "all" else {extra}
                inside: list[float] = []
                candidates = {"a": partial(through, remotes[0], pin, inside)}
                if "runner" in extras:
                    candidates["b"] = partial(through, remotes[1], pin, [])
                with load([argv for name in sorted(extras) for argv in loads.get(name, [])]):
                    stats = time_rounds(candidates, policy=policy)
                row = {
                    "query": query.number, "round": round_, "condition": condition,
                    "outside_ms": stats["a"].median_ms,
                    "inside_ms": statistics.median(inside[len(inside) // 10 :]),  # the warm-up's out
                }  # fmt: skip
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sf_folder", type=Path)
    parser.add_argument("--queries", default="6,14")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-time", type=float, default=3.0)
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the script")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--split", help="harness:runners:answers cores, e.g. 0:1:0 (a dry run, few cores)")
    args = parser.parse_args()
    if args.split:
        cores = Split(*(frozenset(map(int, part.split(","))) for part in args.split.split(":")))
    else:
        cores = split("cuda")
    assert cores is not None, "needs a GPU host with at least four cores (or --split)"
    runner_core = sorted(cores.runners)
    py = sys.executable
    database, answer_cores = str(args.sf_folder / "tpch.duckdb"), ",".join(map(str, sorted(cores.answers)))
    loads = {
        "spin": [[py, "-c", SPIN, str(min(cores.harness or cores.runners))]],
        "duckdb": [[py, "-c", DUCKDB, database, answer_cores]],
    }
    conditions = ["free", "pinned", "pinned+spin", "pinned+duckdb", "pinned+runner", "free+runner"]
    conditions.append("pinned+all")
    policy = replace(TimingPolicy.for_device(args.device, args.max_time), batch_ms=0.0)
    rows = []
    for number in map(int, args.queries.split(",")):
        rows += time_query(QUERIES[number], args, runner_core, conditions, loads, policy)
    print(f"{'query':>5} {'condition':<14} {'inside ms':>9} {'vs free':>8} {'outside ms':>10}")
    for number in map(int, args.queries.split(",")):
        mine = [r for r in rows if r["query"] == number]
        free = statistics.median(r["inside_ms"] for r in mine if r["condition"] == "free")
        for condition in conditions:
            inside = statistics.median(r["inside_ms"] for r in mine if r["condition"] == condition)
            outside = statistics.median(r["outside_ms"] for r in mine if r["condition"] == condition)
            print(f"  Q{number:02d} {condition:<14} {inside:>9.4f} {100 * (inside / free - 1):>+7.1f}% "
                  f"{outside:>10.4f}")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps({"cores": cores.describe(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
