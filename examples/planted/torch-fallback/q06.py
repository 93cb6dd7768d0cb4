"""PLANTED FLAW (examples/planted/README.md): a correct Q6 whose work is done by PyTorch.

The filter and the products are PyTorch operations (five comparisons, a product, a select: each a
pass over the data); the one Triton kernel only adds up the column they produce. The harness's
attribution finds most of the device time outside the file's own kernels: "framework fallback".
"""

import datetime as dt

import torch
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def _sum_partials(values, partials, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(partials + tl.program_id(0), tl.sum(tl.load(values + offs, mask=offs < n, other=0.0), axis=0))


def _days(text: str, years: int = 0) -> int:
    day = dt.date.fromisoformat(text)
    return (day.replace(year=day.year + years) - dt.date(1970, 1, 1)).days


def run_query(tables, date="1994-01-01", discount=0.06, quantity=24):
    li = tables["lineitem"]
    shipdate, disc = li["l_shipdate"], li["l_discount"]
    keep = (
        (shipdate >= _days(date))
        & (shipdate < _days(date, 1))
        & (disc >= round(discount - 0.01, 2))
        & (disc <= round(discount + 0.01, 2))
        & (li["l_quantity"] < quantity)
    )
    contributions = torch.where(keep, li["l_extendedprice"] * disc, 0.0)
    n = contributions.numel()
    grid = triton.cdiv(n, BLOCK)
    partials = torch.empty(grid, dtype=torch.float64, device=contributions.device)
    _sum_partials[(grid,)](contributions, partials, n, BLOCK=BLOCK)
    return {"revenue": partials.sum().reshape(1)}
