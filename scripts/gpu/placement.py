"""Does a kernel's device time follow where its own buffers land, or what ran just before it?

The harness's reports put the Triton Q14 kernel's `_q14_partials` at 609-616 us a call in a runner of
its own and 582-584 us in harness 0.4.1's loop (scripts/gpu/switch.py `--profile` on an H100, session
36): 0.4.1 called the compiled TorchPlan and the kernel in turn in one process, on the same clones, one
caching allocator for both. Here, in this process, each kernel file's calls are profiled under:

- pad N: a buffer of N MiB held while the kernel runs, so that the caching allocator puts the kernel's
  own buffers (Q14's 2 MB flag table) elsewhere; `pad 0` is the kernel alone, as in a runner;
- after plan: the compiled TorchPlan called on the same clone just before each call, as in 0.4.1's loop;
- after plan, pad 0: the plan run once before the round, not before each call (its allocations made and
  freed, the order of device work the kernel's alone).

Every call is armed as the harness arms one: the L2 cache flushed, the device idle. The clones rotate
as the harness's pool does. Per condition and round: each device kernel's mean time a call
(torch.profiler), and the address of a block the size of the flag table taken and freed just before each
call (where the kernel's own `torch.empty` of that size lands). Conditions are interleaved round by round.

    python scripts/gpu/placement.py SF_FOLDER [--kernel examples/triton-core/q14.py] [--out OUT.json]
    TRITON_INTERPRET=1 python scripts/gpu/placement.py SF_FOLDER --device cpu --rounds 1   # a dry run
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from evaluator.attribution import device_activity  # noqa: E402
from evaluator.queries import QUERIES  # noqa: E402
from evaluator.runner.kernel_loader import load_kernel  # noqa: E402
from evaluator.timing import L2_FLUSH_BYTES  # noqa: E402
from evaluator.tpch.load import load_tables  # noqa: E402

PADS_MIB = (0, 2, 4, 6, 24, 100)
POOL = 3  # the harness's clones


def measure(args: argparse.Namespace, kernel_file: Path) -> list[dict[str, Any]]:
    device = torch.device(args.device)
    query = QUERIES[args.query]
    params = query.parameter_sets(4, 20261202)[0]
    tables = load_tables(args.sf_folder, query.columns(), device)
    pool = [tables.clone() for _ in range(POOL)]
    kernel = load_kernel(query, kernel_file, "core")
    plan = query.with_core(torch.compile(query.plan()._query_core))
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device)
    probe_bytes = tables["part"].rows + 1 if "part" in tables else 1 << 21
    for clone in pool:  # compiles, builds and warms both
        kernel(clone, **params)
        plan(clone, **params)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda *a: None)
    sync()
    conditions = [f"pad {n}" for n in PADS_MIB] + ["after plan", "after plan, pad 0"]
    rows = []
    for round_ in range(args.rounds):
        for name in conditions:
            pad_mib = int(name.split()[-1]) if "pad" in name else 0
            pad = torch.empty(pad_mib << 20, dtype=torch.uint8, device=device)
            if name == "after plan, pad 0":
                plan(pool[0], **params)
            addresses = []
            activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
            with profile(activities=activities) as prof:
                for call in range(args.calls):
                    clone = pool[call % POOL]
                    if name == "after plan":
                        flush.fill_(0)
                        sync()
                        plan(clone, **params)
                    flush.fill_(0)
                    probe = torch.empty(probe_bytes, dtype=torch.int8, device=device)
                    addresses.append(probe.data_ptr())
                    del probe
                    sync()
                    kernel(clone, **params)
                    sync()
            kernels = device_activity(prof.events())
            # The kernel file's own and torch's for it: not the plan's (inductor's triton_*), not the flush.
            mine = [
                [n, c, us] for n, c, us in kernels if not n.startswith("triton_") and "FillFunctor" not in n
            ]
            rows.append({"kernel": kernel_file.name, "condition": name, "round": round_, "calls": args.calls,
                         "activity": mine, "addresses": sorted(set(addresses))})  # fmt: skip
            del pad
        print(f"{kernel_file.name} round {round_}: done", file=sys.stderr, flush=True)
    return rows


def summarize(rows: list[dict[str, Any]]) -> None:
    """Per kernel file and condition: its largest device kernel's time a call, round by round, and the
    median against `pad 0`; the whole call's device time; where the flag-sized block landed."""
    median = statistics.median
    print("| kernel | condition | largest kernel, us a call, round by round | median | vs pad 0 | "
          "all its kernels, us a call | flag-sized block at, address >> 20 |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name in dict.fromkeys(r["kernel"] for r in rows):
        mine = [r for r in rows if r["kernel"] == name]
        by: dict[str, list[dict[str, Any]]] = {}
        for r in mine:
            by.setdefault(r["condition"], []).append(r)

        def largest(r: dict[str, Any]) -> float:
            return max((us / r["calls"] for _, _, us in r["activity"]), default=0.0)

        alone = median(largest(r) for r in by["pad 0"])
        for condition, kept in by.items():
            each = [largest(r) for r in kept]
            total = median(sum(us for _, _, us in r["activity"]) / r["calls"] for r in kept)
            against = f"{100 * (median(each) / alone - 1):+.1f}%" if alone else ""
            places = sorted({a >> 20 for r in kept for a in r["addresses"]})
            print(f"| {name} | {condition} | {', '.join(f'{x:.1f}' for x in each)} | {median(each):.1f} | "
                  f"{against} | {total:.1f} | {', '.join(map(str, places[:6]))} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sf_folder", type=Path, nargs="?")
    parser.add_argument("--query", type=int, default=14)
    parser.add_argument("--kernel", type=Path, action="append", help="kernel files (core scope) of --query")
    parser.add_argument("--calls", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the script")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--read", type=Path, help="no measuring: the table of an --out file")
    args = parser.parse_args()
    if args.read:
        summarize(json.loads(args.read.read_text()))
        return
    if args.sf_folder is None:
        parser.error("SF_FOLDER is needed to measure (or --read a saved run)")
    rows = []
    for kernel_file in args.kernel or [Path("examples/triton-core/q14.py")]:
        rows += measure(args, kernel_file)
    summarize(rows)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
