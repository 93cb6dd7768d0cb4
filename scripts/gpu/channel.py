"""What timing from outside the runner costs (harness 0.5.0), on the GPU: one query's TorchPlan timed in
this process, as runners timed themselves until 0.4.1, against the same plan timed by this process
through a real runner (evaluator/harness/session.py) at 1, 2, 5, 10 and 20 calls a sample, interleaved.

    python scripts/gpu/channel.py SF_FOLDER [--query 6] [--mode compiled] [--rounds 3] [--out F.json]

Prints a table of medians and the overhead of each against the in-process median; writes the rows as
JSON with --out. The target: under 1% at the batch size the harness picks for a 0.5 ms call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402

from evaluator.harness.launch import Launcher  # noqa: E402
from evaluator.harness.session import Sides, Timed, _batch, _runner  # noqa: E402
from evaluator.queries import QUERIES  # noqa: E402
from evaluator.timing import TimingPolicy, time_rotated, time_rounds  # noqa: E402
from evaluator.tpch.load import load_tables  # noqa: E402

BATCHES = (1, 2, 5, 10, 20)


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

    sides = Sides(query=query, folders=[args.sf_folder], device=args.device, params=params, timing=policy,
                  baseline_mode=args.mode, query_timeout_s=300, compile_limit_s=120,
                  verify={"seed": 1, "share": 0.0})  # fmt: skip
    rows = []
    with ExitStack() as stack:
        remote = stack.enter_context(_runner(Launcher(), sides, None))
        remote.ask({"op": "start", "device": args.device, "query": query.number}, 300)
        remote.ask({"op": "load", "baseline": args.mode}, 300)
        remote.ask({"op": "tables", "folder": str(args.sf_folder)}, 300)
        remote.ask({"op": "pool", "size": policy.pool}, 300)
        for round_ in range(args.rounds):
            inside = time_rotated({"local": local}, device=device, policy=policy, strata=len(params))["local"]
            row = {"round": round_, "in_process_ms": inside.median_ms}
            for calls in BATCHES:
                run = _batch(remote, "baseline", sides, {"baseline": Timed(sides.verify)}, {})

                def fixed(rep: int, _calls: int, run=run, calls=calls) -> float:
                    return run(rep, calls)

                started = time.perf_counter()
                stats = time_rounds({"remote": fixed}, policy=policy, strata=1)["remote"]
                row[f"calls_{calls}_ms"] = stats.median_ms
                row[f"calls_{calls}_overhead_pct"] = 100 * (stats.median_ms / inside.median_ms - 1)
                row[f"calls_{calls}_s"] = round(time.perf_counter() - started, 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(
        f"Q{query.number:02d} {args.mode}, {args.sf_folder.name}: in-process median, overhead per batch size"
    )
    print(f"{'round':>5} {'in-proc ms':>10} " + " ".join(f"{c:>7}x" for c in BATCHES))
    for row in rows:
        cells = " ".join(f"{row[f'calls_{c}_overhead_pct']:>+7.2f}%" for c in BATCHES)
        print(f"{row['round']:>5} {row['in_process_ms']:>10.4f} {cells}")
    medians = {c: statistics.median(r[f"calls_{c}_overhead_pct"] for r in rows) for c in BATCHES}
    print("median overhead: " + ", ".join(f"{c} calls {v:+.2f}%" for c, v in medians.items()))
    if args.out:
        args.out.write_text(json.dumps({"query": query.number, "mode": args.mode, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
