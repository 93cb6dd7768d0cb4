"""TPC-H Q6 as one fused Triton kernel (scope: full)."""

import datetime as dt

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _q06_partials(
    shipdate, discount, quantity, price, bounds, partials, n, date_lo, date_hi, BLOCK: tl.constexpr
):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    # Float bounds come in a float64 tensor: a Python float argument would arrive as float32, and
    # 0.05 as float32 is above the float64 0.05, silently dropping every row with discount 0.05.
    disc_lo = tl.load(bounds)
    disc_hi = tl.load(bounds + 1)
    qty_hi = tl.load(bounds + 2)
    d = tl.load(shipdate + offs, mask=inside, other=0)
    disc = tl.load(discount + offs, mask=inside, other=0.0)
    qty = tl.load(quantity + offs, mask=inside, other=0.0)
    p = tl.load(price + offs, mask=inside, other=0.0)
    keep = inside & (d >= date_lo) & (d < date_hi) & (disc >= disc_lo) & (disc <= disc_hi) & (qty < qty_hi)
    tl.store(partials + pid, tl.sum(tl.where(keep, p * disc, 0.0), axis=0))


def _days(year: int, month: int, day: int) -> int:
    return (dt.date(year, month, day) - dt.date(1970, 1, 1)).days


def run_query(tables, date="1994-01-01", discount=0.06, quantity=24):
    li = tables["lineitem"]
    shipdate = li["l_shipdate"]
    n = shipdate.numel()
    year, month, day = (int(x) for x in date.split("-"))
    bounds = torch.tensor(
        [round(discount - 0.01, 2), round(discount + 0.01, 2), float(quantity)],
        dtype=torch.float64,
        device=shipdate.device,
    )
    grid = triton.cdiv(n, BLOCK)
    partials = torch.empty(grid, dtype=torch.float64, device=shipdate.device)
    _q06_partials[(grid,)](
        shipdate,
        li["l_discount"],
        li["l_quantity"],
        li["l_extendedprice"],
        bounds,
        partials,
        n,
        _days(year, month, day),
        _days(year + 1, month, day),
        BLOCK=BLOCK,
    )
    return {"revenue": partials.sum().reshape(1)}
