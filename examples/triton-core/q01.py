"""TPC-H Q1's _query_core in Triton (scope: core): one pass over lineitem, every group's sums at once.

The group key is dense (flag code * statuses + status code: 6 groups in TPC-H), so each program keeps
a [GROUPS] vector per aggregate and adds a masked one-hot reduction of each tile: no atomics, which
would pile onto six addresses. `_q01_final` adds the programs' partials and writes the averages.
Sums stay float64, counts int64.
"""

import torch
import triton
import triton.language as tl

PROGRAMS = 264  # 2 per H200 multiprocessor; each program strides over TILES blocks of rows
SUMS = 5  # sum_qty, sum_base_price, sum_disc_price, sum_charge, sum_disc


@triton.jit
def _q01_partials(
    flag, status, quantity, price, discount, tax, shipdate, sums, counts, n, date_hi,
    STATUSES: tl.constexpr, GROUPS: tl.constexpr, TILES: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    groups = tl.arange(0, GROUPS)
    qty_sum = tl.zeros([GROUPS], dtype=tl.float64)
    price_sum = tl.zeros([GROUPS], dtype=tl.float64)
    disc_price_sum = tl.zeros([GROUPS], dtype=tl.float64)
    charge_sum = tl.zeros([GROUPS], dtype=tl.float64)
    disc_sum = tl.zeros([GROUPS], dtype=tl.float64)
    count = tl.zeros([GROUPS], dtype=tl.int64)
    for tile in range(0, TILES):
        offs = (pid + tile * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        d = tl.load(shipdate + offs, mask=inside, other=0)
        keep = inside & (d <= date_hi)
        ids = tl.load(flag + offs, mask=keep, other=0) * STATUSES + tl.load(status + offs, mask=keep, other=0)
        hit = keep[:, None] & (ids[:, None] == groups[None, :])  # [BLOCK, GROUPS] one-hot
        qty = tl.load(quantity + offs, mask=keep, other=0.0)
        p = tl.load(price + offs, mask=keep, other=0.0)
        disc = tl.load(discount + offs, mask=keep, other=0.0)
        tx = tl.load(tax + offs, mask=keep, other=0.0)
        disc_price = p * (1 - disc)
        charge = disc_price * (1 + tx)
        qty_sum += tl.sum(tl.where(hit, qty[:, None], 0.0), axis=0)
        price_sum += tl.sum(tl.where(hit, p[:, None], 0.0), axis=0)
        disc_price_sum += tl.sum(tl.where(hit, disc_price[:, None], 0.0), axis=0)
        charge_sum += tl.sum(tl.where(hit, charge[:, None], 0.0), axis=0)
        disc_sum += tl.sum(tl.where(hit, disc[:, None], 0.0), axis=0)
        count += tl.sum(hit.to(tl.int64), axis=0)
    base = sums + pid * 5 * GROUPS + groups
    tl.store(base, qty_sum)
    tl.store(base + GROUPS, price_sum)
    tl.store(base + 2 * GROUPS, disc_price_sum)
    tl.store(base + 3 * GROUPS, charge_sum)
    tl.store(base + 4 * GROUPS, disc_sum)
    tl.store(counts + pid * GROUPS + groups, count)


@triton.jit
def _q01_final(sums, counts, out, out_counts, programs, GROUPS: tl.constexpr, PROGRAMS_P2: tl.constexpr):
    """One program per group: the programs' partials added; out[k, g] for the 5 sums and 3 averages."""
    g = tl.program_id(0)
    rows = tl.arange(0, PROGRAMS_P2)
    inside = rows < programs
    count = tl.sum(tl.load(counts + rows * GROUPS + g, mask=inside, other=0), axis=0)
    qty = tl.sum(tl.load(sums + (rows * 5) * GROUPS + g, mask=inside, other=0.0), axis=0)
    price = tl.sum(tl.load(sums + (rows * 5 + 1) * GROUPS + g, mask=inside, other=0.0), axis=0)
    disc_price = tl.sum(tl.load(sums + (rows * 5 + 2) * GROUPS + g, mask=inside, other=0.0), axis=0)
    charge = tl.sum(tl.load(sums + (rows * 5 + 3) * GROUPS + g, mask=inside, other=0.0), axis=0)
    disc = tl.sum(tl.load(sums + (rows * 5 + 4) * GROUPS + g, mask=inside, other=0.0), axis=0)
    # A group without rows is not returned: its division by 1 instead of 0 is never read.
    rows_in_group = tl.maximum(count, 1).to(tl.float64)
    tl.store(out_counts + g, count)
    tl.store(out + g, qty)
    tl.store(out + GROUPS + g, price)
    tl.store(out + 2 * GROUPS + g, disc_price)
    tl.store(out + 3 * GROUPS + g, charge)
    tl.store(out + 4 * GROUPS + g, disc)
    tl.store(out + 5 * GROUPS + g, qty / rows_in_group)
    tl.store(out + 6 * GROUPS + g, price / rows_in_group)
    tl.store(out + 7 * GROUPS + g, disc / rows_in_group)


def _query_core(
    l_returnflag,
    l_linestatus,
    l_quantity,
    l_extendedprice,
    l_discount,
    l_tax,
    l_shipdate,
    date_hi,
    flags,
    statuses,
):
    device = l_shipdate.device
    n = l_shipdate.numel()
    # [BLOCK, GROUPS] one-hot tiles: 512 rows keep a GPU program's registers in bounds; Triton's CPU
    # interpreter pays per program, so it gets fewer, larger tiles.
    block = 512 if device.type == "cuda" else 4096
    groups = flags * statuses
    width = triton.next_power_of_2(max(groups, 2))
    programs = max(1, min(PROGRAMS, triton.cdiv(n, block)))
    sums = torch.empty(programs * SUMS * width, dtype=torch.float64, device=device)
    counts = torch.empty(programs * width, dtype=torch.int64, device=device)
    _q01_partials[(programs,)](
        l_returnflag, l_linestatus, l_quantity, l_extendedprice, l_discount, l_tax, l_shipdate, sums, counts,
        n, date_hi, STATUSES=statuses, GROUPS=width, TILES=triton.cdiv(triton.cdiv(n, block), programs),
        BLOCK=block,
    )  # fmt: skip
    out = torch.empty((8, width), dtype=torch.float64, device=device)
    out_counts = torch.empty(width, dtype=torch.int64, device=device)
    _q01_final[(width,)](
        sums, counts, out, out_counts, programs, GROUPS=width, PROGRAMS_P2=triton.next_power_of_2(programs)
    )
    # The groups holding rows, in code order (= ORDER BY l_returnflag, l_linestatus): one host sync,
    # as the result's size depends on the data.
    present = torch.nonzero(out_counts[:groups]).squeeze(1)
    picked = out[:, present]
    return (
        present // statuses,
        present % statuses,
        picked[0],
        picked[1],
        picked[2],
        picked[3],
        picked[5],
        picked[6],
        picked[7],
        out_counts[present],
    )
