"""What SQL's NULL costs Q6's TorchPlan: its `_query_core` three ways, each under torch.compile as the
harness compiles it, timed in turn by evaluator.timing's loop (call by call, the L2 flushed before each).

- plan: the plan today (0.6.17), `torch.where(revenue > 0, revenue, nan)`: every qualifying row's revenue
  is positive, so a zero sum means no row;
- any: harness 0.5.0-0.6.16's plan, `torch.where(mask.any(), revenue, nan)`: a second reduction, which
  made inductor write the mask out and read it back (the harness's profile, docs/benchmarks.md session 34);
- none: harness 0.4.1's plan, the revenue alone (0.0 over no rows, which SQL calls NULL).

Each is checked against DuckDB at the defaults and asked for a year with no rows (SQL: NULL), and its
device kernels are listed (torch.profiler, one call).

    python scripts/gpu/q06null.py SF_FOLDER [--device cpu]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from evaluator.attribution import device_activity  # noqa: E402
from evaluator.harness.compare import compare  # noqa: E402
from evaluator.queries import QUERIES  # noqa: E402
from evaluator.timing import TimingPolicy, time_interleaved  # noqa: E402
from evaluator.tools.validate import decode_result  # noqa: E402
from evaluator.tpch.load import load_tables  # noqa: E402
from evaluator.tpch.reference import reference_answer  # noqa: E402


def _mask(l_shipdate, l_discount, l_quantity, date_lo, date_hi, discount_lo, discount_hi, quantity):
    return (
        (l_shipdate >= date_lo)
        & (l_shipdate < date_hi)
        & (l_discount >= discount_lo)
        & (l_discount <= discount_hi)
        & (l_quantity < quantity)
    )


def none(
    l_shipdate, l_discount, l_quantity, l_extendedprice, date_lo, date_hi, discount_lo, discount_hi, quantity
):
    mask = _mask(l_shipdate, l_discount, l_quantity, date_lo, date_hi, discount_lo, discount_hi, quantity)
    return torch.where(mask, l_extendedprice * l_discount, 0.0).sum(dtype=torch.float64).reshape(1)


def any_row(
    l_shipdate, l_discount, l_quantity, l_extendedprice, date_lo, date_hi, discount_lo, discount_hi, quantity
):
    mask = _mask(l_shipdate, l_discount, l_quantity, date_lo, date_hi, discount_lo, discount_hi, quantity)
    revenue = torch.where(mask, l_extendedprice * l_discount, 0.0).sum(dtype=torch.float64)
    return torch.where(mask.any(), revenue, torch.nan).reshape(1)


def kernels(run, tables, params, device) -> str:
    """The device kernels of one call and their time, as the harness's attribution names them."""
    activities = [torch.profiler.ProfilerActivity.CUDA] if device.type == "cuda" else []
    if not activities:
        return "(no device)"
    try:  # a listing, not a figure: the timing below stands without it
        with torch.profiler.profile(activities=activities) as prof:
            run(tables, **params)
            torch.cuda.synchronize(device)
        rows = device_activity(prof.events())
        return ", ".join(f"{name[:60]} x{count} {us:.0f} us" for name, count, us in rows)
    except Exception as exc:
        return f"(profiler: {type(exc).__name__}: {exc})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sf_folder", type=Path)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--seconds", type=float, default=12.0, help="the timing's limit, all three together")
    args = parser.parse_args()
    device = torch.device(args.device)
    query = QUERIES[6]
    cores = {"plan": query.plan()._query_core, "any": any_row, "none": none}
    tables = load_tables(args.sf_folder, query.columns(), device)
    params = dict(query.defaults)
    expected = reference_answer(args.sf_folder, query, params)
    runs = {}
    for name, core in cores.items():
        run = query.with_core(torch.compile(core))
        started = time.perf_counter()
        answer = run(tables, **params)  # the first call compiles
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        compile_s = time.perf_counter() - started
        problem = compare(decode_result(query, answer, args.sf_folder), expected, query.order_by)
        empty = run(tables, **dict(params, date="1999-01-01"))["revenue"].item()
        checked = problem or "as DuckDB"
        print(f"{name}: compiled in {compile_s:.1f} s; defaults {checked}; 1999: {empty}", flush=True)
        print(f"  kernels: {kernels(run, tables, params, device)}", flush=True)
        runs[name] = run
    policy = TimingPolicy(max_time_s=args.seconds, target_stderr=0.0)
    stats = time_interleaved({name: (lambda run=run: run(tables, **params)) for name, run in runs.items()},
                             device=device, policy=policy)  # fmt: skip
    print("| core | median ms | min ms | samples (set aside) | against the plan |")
    print("|---|---|---|---|---|")
    for name, s in stats.items():
        against = s.median_ms / stats["plan"].median_ms - 1
        print(f"| {name} | {s.median_ms:.4f} | {s.min_ms:.4f} | {s.n} ({s.set_aside}) | {against:+.1%} |")


if __name__ == "__main__":
    main()
