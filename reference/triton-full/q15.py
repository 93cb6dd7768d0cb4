"""TPC-H Q15 in Triton (scope: full): exact revenue per supplier key in one lineitem pass, then its max.

WITH revenue AS (SELECT l_suppkey AS supplier_no, sum(l_extendedprice * (1 - l_discount)) AS total_revenue
                 FROM lineitem WHERE l_shipdate >= :date AND l_shipdate < :date + 3 months GROUP BY 1)
SELECT s_suppkey, s_name, s_address, s_phone, total_revenue FROM supplier, revenue
WHERE s_suppkey = supplier_no AND total_revenue = (SELECT max(total_revenue) FROM revenue) ORDER BY s_suppkey

`total_revenue = max(...)` is an equality of DECIMAL sums: float64 sums in another order than DuckDB's
could split a tie, so (as in the TorchPlan) revenues are summed exactly in int64 units of 1/10000:
price cents times hundredths of (1 - discount). Supplier keys are dense 1..S, so the group-by is an
int64 array indexed by key.

1. A memset zeroes the revenue slots (by key) and the answer's row count (800 KB at SF10).
2. `_q15_lines`: one pass over lineitem (whole columns read); a row in the quarter adds its revenue to
   its supplier's slot (int64 atomics, ~4% of the rows over 100K slots at SF10: little contention).
3. `_q15_max`: per tile of supplier rows, the largest revenue of their keys.
4. `_q15_select`: every tile reads all tile maxima (~100 at SF10), so each knows the global max, and
   appends its rows whose revenue equals it (one atomic per tile reserves the places). Results give
   s_name, s_address and s_phone as supplier row numbers; rows may come in any order.
The host reads the count (the one synchronization: it sizes the result) and sorts the few matches by
key only when there is more than one.
"""

import torch
import triton
import triton.language as tl

from evaluator.tpch.encoding import add_months, parse_date

BLOCK = 1024
PROGRAMS = 1 << 20  # programs of the lineitem pass (each strides over TILES blocks): one block each at SF10
KEY_BLOCK = 1024  # supplier keys per tile in _q15_max and _q15_select


@triton.jit(do_not_specialize=["date_lo", "date_hi"])  # parameters: no compile per value
def _q15_lines(
    l_suppkey,
    l_extendedprice,
    l_discount,
    l_shipdate,
    revenue,
    n,
    date_lo,
    date_hi,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    # A constant trip count (one compile per table size): Triton's interpreter cannot loop to a
    # run-time bound.
    for tile in range(0, TILES):
        offs = (pid + tile * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        # Whole columns are read (mask `inside`): the harness's bandwidth floor counts all their bytes.
        d = tl.load(l_shipdate + offs, mask=inside, other=0)
        key = tl.load(l_suppkey + offs, mask=inside, other=0)
        price = tl.load(l_extendedprice + offs, mask=inside, other=0.0)
        disc = tl.load(l_discount + offs, mask=inside, other=0.0)
        keep = inside & (d >= date_lo) & (d < date_hi)
        # The float64 columns hold the decimals' nearest doubles: scaling and rounding recovers them.
        cents = (price * 100 + 0.5).to(tl.int64)
        keep_hundredths = 100 - (disc * 100 + 0.5).to(tl.int64)
        tl.atomic_add(revenue + key, cents * keep_hundredths, mask=keep, sem="relaxed")


@triton.jit
def _q15_max(s_suppkey, revenue, maxima, suppliers, KEY_BLOCK: tl.constexpr):
    offs = tl.program_id(0) * KEY_BLOCK + tl.arange(0, KEY_BLOCK)
    inside = offs < suppliers
    key = tl.load(s_suppkey + offs, mask=inside, other=0)
    # Revenues are >= 0, so -1 pads.
    value = tl.load(revenue + key, mask=inside, other=-1)
    tl.store(maxima + tl.program_id(0), tl.max(value, axis=0))


@triton.jit
def _q15_select(
    s_suppkey,
    revenue,
    maxima,
    count,
    out_key,
    out_row,
    out_revenue,
    suppliers,
    tiles,
    KEY_BLOCK: tl.constexpr,
    TILE_BLOCK: tl.constexpr,
):
    t = tl.arange(0, TILE_BLOCK)
    best = tl.max(tl.load(maxima + t, mask=t < tiles, other=-1), axis=0)
    offs = tl.program_id(0) * KEY_BLOCK + tl.arange(0, KEY_BLOCK)
    inside = offs < suppliers
    key = tl.load(s_suppkey + offs, mask=inside, other=0)
    value = tl.load(revenue + key, mask=inside, other=-1)
    # Every revenue row is positive: a max of 0 means no row in the quarter, hence no group.
    match = inside & (value == best) & (best > 0)
    flag = match.to(tl.int64)
    place = tl.cumsum(flag, axis=0) - flag
    at = tl.atomic_add(count, tl.sum(flag, axis=0)) + place
    tl.store(out_key + at, key, mask=match)
    tl.store(out_row + at, offs.to(tl.int64), mask=match)
    tl.store(out_revenue + at, value.to(tl.float64) / 10000, mask=match)


def run_query(tables, date="1996-01-01"):
    lineitem, supplier = tables["lineitem"], tables["supplier"]
    device = lineitem["l_suppkey"].device
    suppliers = supplier["s_suppkey"].numel()
    # Slots 0..suppliers by key (keys are 1..suppliers), then the answer's row count: one memset
    # zeroes both before the pass (a buffer of 800 KB at SF10).
    revenue = torch.zeros(suppliers + 2, dtype=torch.int64, device=device)
    count = revenue[suppliers + 1 :]
    n = lineitem["l_suppkey"].numel()
    programs = max(1, min(PROGRAMS, triton.cdiv(n, BLOCK)))
    _q15_lines[(programs,)](
        lineitem["l_suppkey"],
        lineitem["l_extendedprice"],
        lineitem["l_discount"],
        lineitem["l_shipdate"],
        revenue,
        n,
        parse_date(date),
        add_months(date, 3),
        TILES=triton.cdiv(triton.cdiv(n, BLOCK), programs),
        BLOCK=BLOCK,
    )
    tiles = triton.cdiv(suppliers, KEY_BLOCK)
    maxima = torch.empty(tiles, dtype=torch.int64, device=device)
    _q15_max[(tiles,)](supplier["s_suppkey"], revenue, maxima, suppliers, KEY_BLOCK=KEY_BLOCK)
    out_key = torch.empty(suppliers, dtype=torch.int64, device=device)
    out_row = torch.empty(suppliers, dtype=torch.int64, device=device)
    out_revenue = torch.empty(suppliers, dtype=torch.float64, device=device)
    _q15_select[(tiles,)](
        supplier["s_suppkey"],
        revenue,
        maxima,
        count,
        out_key,
        out_row,
        out_revenue,
        suppliers,
        tiles,
        KEY_BLOCK=KEY_BLOCK,
        TILE_BLOCK=triton.next_power_of_2(tiles),
    )
    found = int(count.item())  # the one synchronization: the result's size
    out_key, out_row, out_revenue = out_key[:found], out_row[:found], out_revenue[:found]
    if found > 1:  # a tie for the max (rare): tiles appended in any order, ORDER BY s_suppkey
        out_key, order = torch.sort(out_key)
        out_row, out_revenue = out_row[order], out_revenue[order]
    return {
        "s_suppkey": out_key,
        "s_name": out_row,
        "s_address": out_row,
        "s_phone": out_row,
        "total_revenue": out_revenue,
    }
