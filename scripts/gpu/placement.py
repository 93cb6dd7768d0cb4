"""Does a kernel's device time follow where its own buffers land, or what ran just before it?

scripts/gpu/switch.py `--profile` on an H100 (session 36) put the Triton Q14 kernel's `_q14_partials`
at 607-617 us a call in a runner of its own or alone in a process, and at 582-584 us in harness 0.4.1's
loop, which calls the compiled TorchPlan and the kernel in turn in one process, on the same clones, one
caching allocator for both. Here, in this process, each kernel file's calls are profiled under:

- alone: the kernel's calls on the clones in turn, as in a runner of its own (twice a round);
- one clone: every call on the same clone;
- pad: a 6 MiB buffer held meanwhile, so that the caching allocator lays its blocks out otherwise (the
  first run of this script, in one fixed order, saw the kernel slower with one held);
- plan before: the compiled TorchPlan called on the same clone just before each call, as in 0.4.1's
  loop; "other clone": on the next clone instead;
- twice: each clone given to the kernel twice in a row, the first call and the second read apart.

Every call is armed as the harness arms one: the L2 cache flushed, the device idle. Per condition and
round: the kernel file's pass over lineitem, call by call (torch.profiler), and the addresses of the
buffers the kernel's own `torch.empty` made in each call (its module's `torch` swapped for a recorder).
Each round runs the conditions in its own shuffled order; with `--fixed N`, N rounds first in the first
run's fixed order (alone, pads of 2, 4, 6, 24 and 100 MiB, plan before, alone after one plan call).

    python scripts/gpu/placement.py SF_FOLDER [--kernel examples/triton-core/q14.py] [--out OUT.json]
    TRITON_INTERPRET=1 python scripts/gpu/placement.py SF_FOLDER --device cpu --rounds 1   # a dry run
"""

from __future__ import annotations

import argparse
import json
import random
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

POOL = 3  # the harness's clones
PAD_MIB = 6
# Each round runs these in its own shuffled order, "alone" twice: session 36's first run, in one fixed
# order, could not tell a pad from what ran a few conditions before.
CONDITIONS = ("alone", "alone", "one clone", "pad", "plan before", "plan before, other clone", "twice")
# The first run's fixed order, for the first rounds (`--fixed`): pads of these MiB, then the plan.
FIXED = ("alone", "pad 2", "pad 4", "pad", "pad 24", "pad 100", "plan before", "alone, after plan")


class Recorder:
    """The kernel module's `torch`, which notes the address of every `torch.empty` it makes."""

    def __init__(self) -> None:
        self.made: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)

    def empty(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        made = torch.empty(*args, **kwargs)
        self.made.append(made.data_ptr())
        return made


def measure(args: argparse.Namespace, kernel_file: Path) -> list[dict[str, Any]]:
    device = torch.device(args.device)
    query = QUERIES[args.query]
    params = query.parameter_sets(4, 20261202)[0]
    tables = load_tables(args.sf_folder, query.columns(), device)
    pool = [tables.clone() for _ in range(POOL)]
    kernel = load_kernel(query, kernel_file, "core")
    recorder = Recorder()
    kernel.__globals__["_query_core"].__globals__["torch"] = recorder  # the kernel module's globals
    plan = query.with_core(torch.compile(query.plan()._query_core))
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device)
    cuda = device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda *a: None)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:  # compiles, builds and warms both
        for clone in pool:
            kernel(clone, **params)
            plan(clone, **params)
        sync()
    # The kernel file's pass over lineitem (both Q14 examples call it *partials).
    largest = next((k[0] for k in device_activity(prof.events()) if "partials" in k[0]), "")

    def timed(clone: Any, addresses: list[list[int]]) -> None:
        flush.fill_(0)
        sync()
        recorder.made.clear()
        kernel(clone, **params)
        sync()
        addresses.append(list(recorder.made))  # the kernel's own buffers

    rows = []
    for round_ in range(args.rounds + args.fixed):
        order = list(FIXED if round_ < args.fixed else CONDITIONS)
        if round_ >= args.fixed:
            random.Random(round_).shuffle(order)
        for name in order:
            if name == "alone, after plan":  # the plan once, then the kernel alone
                plan(pool[0], **params)
            pad_mib = int(name.split()[1]) if name.startswith("pad ") else PAD_MIB if name == "pad" else 0
            pad = torch.empty(pad_mib << 20, dtype=torch.uint8, device=device)
            addresses: list[list[int]] = []
            with profile(activities=activities) as prof:
                for call in range(args.calls):
                    clone = pool[0 if name == "one clone" else call % POOL]
                    if name.startswith("plan before"):
                        flush.fill_(0)
                        sync()
                        plan(pool[(call + name.endswith("other clone")) % POOL], **params)
                    if name == "twice":
                        timed(clone, addresses)
                    timed(clone, addresses)
                sync()
            mine = sorted((e for e in prof.events() if e.name == largest), key=lambda e: e.time_range.start)
            each = [e.time_range.elapsed_us() for e in mine]
            rows.append({"kernel": str(kernel_file), "largest": largest, "condition": name, "round": round_,
                         "fixed": round_ < args.fixed, "us": each, "addresses": addresses})  # fmt: skip
            del pad
        print(f"{kernel_file} round {round_}: done", file=sys.stderr, flush=True)
    return rows


def summarize(rows: list[dict[str, Any]]) -> None:
    """Per kernel file and condition: its pass over lineitem's time a call (the median of its calls),
    round by round, and the median against `alone`; `twice` as its first and second call on a clone."""
    median = statistics.median
    print("| kernel | condition | pass over lineitem, us a call, round by round | median | vs alone | "
          "flag table at |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name in dict.fromkeys(r["kernel"] for r in rows):
        by: dict[str, list[tuple[float, dict[str, Any]]]] = {}
        for r in (r for r in rows if r["kernel"] == name and r["us"]):
            if r["condition"] == "twice":
                by.setdefault("twice, first", []).append((median(r["us"][0::2]), r))
                by.setdefault("twice, second", []).append((median(r["us"][1::2]), r))
            else:
                by.setdefault(("fixed: " if r.get("fixed") else "") + r["condition"], []).append(
                    (median(r["us"]), r)
                )
        alone = median(us for us, _ in by["alone"]) if by.get("alone") else None
        for condition in sorted(by, key=lambda c: (c != "alone", c)):
            each = [us for us, _ in by[condition]]
            against = f"{100 * (median(each) / alone - 1):+.1f}%" if alone else ""
            places = sorted({hex(call[0]) for _, r in by[condition] for call in r["addresses"] if call})
            print(f"| {Path(name).parent.name}/{Path(name).name} | {condition} | "
                  f"{', '.join(f'{x:.1f}' for x in each)} | {median(each):.1f} | {against} | "
                  f"{', '.join(map(str, places[:4]))} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sf_folder", type=Path, nargs="?")
    parser.add_argument("--query", type=int, default=14)
    parser.add_argument("--kernel", type=Path, action="append", help="kernel files (core scope) of --query")
    parser.add_argument("--calls", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--fixed", type=int, default=0, help="rounds in the first run's order first")
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
