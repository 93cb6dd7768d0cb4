"""TPC-H Q12 in Triton (scope: full): a priority byte per order key, one pass over lineitem, 4 counts.

SELECT l_shipmode,
       sum(CASE WHEN o_orderpriority IN ('1-URGENT', '2-HIGH') THEN 1 ELSE 0 END) AS high_line_count,
       sum(CASE WHEN o_orderpriority NOT IN ('1-URGENT', '2-HIGH') THEN 1 ELSE 0 END) AS low_line_count
FROM orders, lineitem
WHERE o_orderkey = l_orderkey AND l_shipmode IN (:shipmode1, :shipmode2)
  AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
  AND l_receiptdate >= DATE :date AND l_receiptdate < DATE :date + INTERVAL 1 YEAR
GROUP BY l_shipmode ORDER BY l_shipmode

The join carries one bit per order (high priority or not), so the plan is:

1. `_q12_orders`: a byte per order key (1 = '1-URGENT' or '2-HIGH'), stored at o_orderkey. Order keys
   are sparse (dbgen's keys reach 4 x the order count), but only slots of real orders are ever read,
   so the array is never cleared.
2. `_q12_lines`: persistent programs stride over lineitem (whole columns read); a row that passes the
   date and mode tests (about 1% of them) gathers its order's byte. Per program, four counts (all and
   high lines of the two modes, in code order) held element-wise, reduced once at the end.
3. `_q12_final`: one program adds the partials and writes the modes that have rows, compacted in code
   order (= ORDER BY l_shipmode), and their number.

The host reads that number (the one synchronization: the result's size depends on the data).
"""

import datetime as dt

import torch
import triton
import triton.language as tl

BLOCK = 1024
PROGRAMS = 1056  # 8 per H200 multiprocessor: enough loads in flight to stream at full bandwidth


@triton.jit
def _q12_orders(o_orderkey, o_orderpriority, high_flags, n, urgent, high, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    key = tl.load(o_orderkey + offs, mask=inside, other=0)
    priority = tl.load(o_orderpriority + offs, mask=inside, other=-1)
    tl.store(high_flags + key, ((priority == urgent) | (priority == high)).to(tl.int8), mask=inside)


@triton.jit
def _q12_lines(
    l_orderkey,
    l_shipmode,
    l_shipdate,
    l_commitdate,
    l_receiptdate,
    high_flags,
    partials,
    n,
    mode0,
    mode1,
    date_lo,
    date_hi,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    all0 = tl.zeros([BLOCK], dtype=tl.int32)  # at most TILES per element
    high0 = tl.zeros([BLOCK], dtype=tl.int32)
    all1 = tl.zeros([BLOCK], dtype=tl.int32)
    high1 = tl.zeros([BLOCK], dtype=tl.int32)
    # A constant trip count (one compile per table size): Triton's interpreter cannot loop to a
    # run-time bound.
    for tile in range(0, TILES):
        offs = (pid + tile * tl.num_programs(0)).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        # Whole columns are read (mask `inside`): the harness's bandwidth floor counts all their bytes.
        key = tl.load(l_orderkey + offs, mask=inside, other=0)
        mode = tl.load(l_shipmode + offs, mask=inside, other=-1)
        ship = tl.load(l_shipdate + offs, mask=inside, other=0)
        commit = tl.load(l_commitdate + offs, mask=inside, other=0)
        receipt = tl.load(l_receiptdate + offs, mask=inside, other=0)
        line = inside & (commit < receipt) & (ship < commit) & (receipt >= date_lo) & (receipt < date_hi)
        in0 = line & (mode == mode0)
        in1 = line & (mode == mode1)
        # Only the ~1% of rows that pass gather (the byte array is 4 bytes per order, 600 MB at SF10).
        is_high = tl.load(high_flags + key, mask=in0 | in1, other=0) != 0
        all0 += in0.to(tl.int32)
        high0 += (in0 & is_high).to(tl.int32)
        all1 += in1.to(tl.int32)
        high1 += (in1 & is_high).to(tl.int32)
    base = partials + pid * 4
    tl.store(base, tl.sum(all0.to(tl.int64), axis=0))
    tl.store(base + 1, tl.sum(high0.to(tl.int64), axis=0))
    tl.store(base + 2, tl.sum(all1.to(tl.int64), axis=0))
    tl.store(base + 3, tl.sum(high1.to(tl.int64), axis=0))


@triton.jit
def _q12_final(partials, out, present, programs, mode0, mode1, PROGRAMS_P2: tl.constexpr):
    """out[0/1/2, j]: mode code, high count, low count of the j-th mode with rows; present[0]: how many."""
    rows = tl.arange(0, PROGRAMS_P2)
    inside = rows < programs
    all0 = tl.sum(tl.load(partials + rows * 4, mask=inside, other=0), axis=0)
    high0 = tl.sum(tl.load(partials + rows * 4 + 1, mask=inside, other=0), axis=0)
    all1 = tl.sum(tl.load(partials + rows * 4 + 2, mask=inside, other=0), axis=0)
    high1 = tl.sum(tl.load(partials + rows * 4 + 3, mask=inside, other=0), axis=0)
    # mode0 < mode1 (the host sorts them), so a mode's position is 0 unless mode0 has rows before it.
    has0 = all0 > 0
    has1 = all1 > 0
    pos1 = has0.to(tl.int32)
    tl.store(out, mode0, mask=has0)
    tl.store(out + 2, high0, mask=has0)
    tl.store(out + 4, all0 - high0, mask=has0)
    tl.store(out + pos1, mode1, mask=has1)
    tl.store(out + 2 + pos1, high1, mask=has1)
    tl.store(out + 4 + pos1, all1 - high1, mask=has1)
    tl.store(present, has0.to(tl.int64) + has1.to(tl.int64))


def _code(dictionary, value: str) -> int:
    """The value's code in a sorted dictionary, or -1 (matches no row) when the data never holds it."""
    names = list(dictionary)
    return names.index(value) if value in names else -1


def _days(day: dt.date) -> int:
    return (day - dt.date(1970, 1, 1)).days


def run_query(tables, shipmode1: str = "MAIL", shipmode2: str = "SHIP", date: str = "1994-01-01"):
    orders, lineitem = tables["orders"], tables["lineitem"]
    device = lineitem["l_orderkey"].device
    shipmodes = lineitem.dictionary("l_shipmode")
    priorities = orders.dictionary("o_orderpriority")
    # The modes' codes in code order (the ORDER BY); a missing or repeated mode becomes -1 (no rows).
    codes = sorted({_code(shipmodes, shipmode1), _code(shipmodes, shipmode2)} - {-1}) + [-1, -1]
    mode0, mode1 = codes[0], codes[1]
    start = dt.date.fromisoformat(date)
    end = dt.date(start.year + 1, start.month, start.day)  # + INTERVAL 1 YEAR (dates are Jan 1)

    n_orders = orders["o_orderkey"].numel()
    # dbgen's sparse order keys never exceed 4 x the order count.
    high_flags = torch.empty(4 * n_orders + 1, dtype=torch.int8, device=device)
    _q12_orders[(max(1, triton.cdiv(n_orders, BLOCK)),)](
        orders["o_orderkey"],
        orders["o_orderpriority"],
        high_flags,
        n_orders,
        _code(priorities, "1-URGENT"),
        _code(priorities, "2-HIGH"),
        BLOCK=BLOCK,
    )

    n = lineitem["l_orderkey"].numel()
    # Triton's CPU interpreter pays per tile: there it gets few, large ones.
    block = BLOCK if device.type == "cuda" else 16384
    programs = max(1, min(PROGRAMS, triton.cdiv(n, block)))
    partials = torch.empty(programs * 4, dtype=torch.int64, device=device)
    _q12_lines[(programs,)](
        lineitem["l_orderkey"],
        lineitem["l_shipmode"],
        lineitem["l_shipdate"],
        lineitem["l_commitdate"],
        lineitem["l_receiptdate"],
        high_flags,
        partials,
        n,
        mode0,
        mode1,
        _days(start),
        _days(end),
        TILES=triton.cdiv(triton.cdiv(n, block), programs),
        BLOCK=block,
    )

    out = torch.empty((3, 2), dtype=torch.int64, device=device)
    present = torch.empty(1, dtype=torch.int64, device=device)
    _q12_final[(1,)](
        partials, out, present, programs, mode0, mode1, PROGRAMS_P2=triton.next_power_of_2(programs)
    )
    k = int(present.item())  # the one host synchronization: how many modes have rows
    return {"l_shipmode": out[0, :k], "high_line_count": out[1, :k], "low_line_count": out[2, :k]}
