"""TPC-H Q12, Shipping Modes and Order Priority: a TorchPlan.

SELECT l_shipmode,
       sum(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH' THEN 1 ELSE 0 END)
           AS high_line_count,
       sum(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH' THEN 1 ELSE 0 END)
           AS low_line_count
FROM orders, lineitem
WHERE o_orderkey = l_orderkey
  AND l_shipmode IN (':shipmode1', ':shipmode2')
  AND l_commitdate < l_receiptdate
  AND l_shipdate < l_commitdate
  AND l_receiptdate >= DATE ':date'
  AND l_receiptdate < DATE ':date' + INTERVAL '1' YEAR
GROUP BY l_shipmode
ORDER BY l_shipmode

The join only carries one bit per order (high priority or not): a bitmap addressed by o_orderkey, read
at l_orderkey, so each lineitem row costs a byte gather and the four counts fuse into one pass.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import parse_date

COLUMNS = {
    "orders": ("o_orderkey", "o_orderpriority"),
    "lineitem": ("l_orderkey", "l_shipmode", "l_shipdate", "l_commitdate", "l_receiptdate"),
}


def _query_core(
    o_orderkey: torch.Tensor,
    o_orderpriority: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_shipmode: torch.Tensor,
    l_shipdate: torch.Tensor,
    l_commitdate: torch.Tensor,
    l_receiptdate: torch.Tensor,
    mode1: int,
    mode2: int,
    urgent: int,
    high: int,
    date_lo: int,
    date_hi: int,
    order_key_space: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(ship-mode codes, high counts, low counts) of the modes with rows, by code; -1: no such code."""
    device = l_orderkey.device
    order_high = torch.zeros(order_key_space, dtype=torch.bool, device=device)
    order_high[o_orderkey] = (o_orderpriority == urgent) | (o_orderpriority == high)

    line = (
        (l_commitdate < l_receiptdate)
        & (l_shipdate < l_commitdate)
        & (l_receiptdate >= date_lo)
        & (l_receiptdate < date_hi)
    )
    line_high = order_high[l_orderkey]
    modes = sorted({mode1, mode2} - {-1})
    counts_high, counts_all = [], []
    for code in modes:
        in_mode = line & (l_shipmode == code)
        counts_high.append((in_mode & line_high).sum())
        counts_all.append(in_mode.sum())
    if not modes:
        empty = torch.zeros(0, dtype=torch.int64, device=device)
        return empty, empty, empty
    codes = torch.tensor(modes, dtype=torch.int64, device=device)
    high_count, all_count = torch.stack(counts_high), torch.stack(counts_all)
    # A group exists only when some row reached it: the one data-dependent output size.
    present = all_count > 0
    return codes[present], high_count[present], (all_count - high_count)[present]


def run_query(tables, shipmode1: str = "MAIL", shipmode2: str = "SHIP", date: str = "1994-01-01"):
    orders, lineitem = tables["orders"], tables["lineitem"]
    shipmodes = lineitem.dictionary("l_shipmode")
    priorities = orders.dictionary("o_orderpriority")
    year, month, day = (int(part) for part in date.split("-"))
    codes, high_count, low_count = _query_core(
        orders["o_orderkey"],
        orders["o_orderpriority"],
        lineitem["l_orderkey"],
        lineitem["l_shipmode"],
        lineitem["l_shipdate"],
        lineitem["l_commitdate"],
        lineitem["l_receiptdate"],
        mode1=ops.dictionary_code(shipmodes, shipmode1),
        mode2=ops.dictionary_code(shipmodes, shipmode2),
        urgent=ops.dictionary_code(priorities, "1-URGENT"),
        high=ops.dictionary_code(priorities, "2-HIGH"),
        date_lo=parse_date(date),
        date_hi=parse_date(f"{year + 1}-{month:02d}-{day:02d}"),
        # dbgen's sparse order keys (mk_sparse) never exceed 4 x the order count.
        order_key_space=4 * orders.rows + 1,
    )
    return {"l_shipmode": codes, "high_line_count": high_count, "low_line_count": low_count}
