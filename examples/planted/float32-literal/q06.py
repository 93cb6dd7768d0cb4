"""PLANTED BUG (examples/planted/README.md): Q6's core with its float bounds passed as Python floats.

Triton types a Python float argument as float32: discount_lo = 0.05 arrives as 0.0500000007, and
`disc >= disc_lo` (disc a float64 0.05) is false, so every row at the bound is dropped.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _q06_partials(
    shipdate, discount, quantity, price, partials, n, date_lo, date_hi, disc_lo, disc_hi, qty_hi,
    BLOCK: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    d = tl.load(shipdate + offs, mask=inside, other=0)
    disc = tl.load(discount + offs, mask=inside, other=0.0)
    qty = tl.load(quantity + offs, mask=inside, other=0.0)
    p = tl.load(price + offs, mask=inside, other=0.0)
    keep = inside & (d >= date_lo) & (d < date_hi) & (disc >= disc_lo) & (disc <= disc_hi) & (qty < qty_hi)
    tl.store(partials + pid, tl.sum(tl.where(keep, p * disc, 0.0), axis=0))


def _query_core(
    l_shipdate, l_discount, l_quantity, l_extendedprice, date_lo, date_hi, discount_lo, discount_hi, quantity
):
    n = l_shipdate.numel()
    grid = triton.cdiv(n, BLOCK)
    partials = torch.empty(grid, dtype=torch.float64, device=l_shipdate.device)
    _q06_partials[(grid,)](
        l_shipdate, l_discount, l_quantity, l_extendedprice, partials, n, date_lo, date_hi,
        discount_lo, discount_hi, quantity, BLOCK=BLOCK,
    )  # fmt: skip
    return partials.sum().reshape(1)
