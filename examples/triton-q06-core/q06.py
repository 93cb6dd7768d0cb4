"""TPC-H Q6's _query_core as a Triton kernel (scope: core): the TorchPlan computes the bounds."""

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
    # float64 bounds from a tensor: Triton would pass Python floats as float32.
    disc_lo = tl.load(bounds)
    disc_hi = tl.load(bounds + 1)
    qty_hi = tl.load(bounds + 2)
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
    bounds = torch.tensor([discount_lo, discount_hi, quantity], dtype=torch.float64, device=l_shipdate.device)
    grid = triton.cdiv(n, BLOCK)
    partials = torch.empty(grid, dtype=torch.float64, device=l_shipdate.device)
    _q06_partials[(grid,)](
        l_shipdate,
        l_discount,
        l_quantity,
        l_extendedprice,
        bounds,
        partials,
        n,
        date_lo,
        date_hi,
        BLOCK=BLOCK,
    )
    return partials.sum().reshape(1)
