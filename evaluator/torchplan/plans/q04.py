"""TPC-H Q4, Order Priority Checking: a TorchPlan.

SELECT o_orderpriority, count(*) AS order_count
FROM orders
WHERE o_orderdate >= DATE ':date'
  AND o_orderdate < DATE ':date' + INTERVAL '3' MONTH
  AND EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)
GROUP BY o_orderpriority
ORDER BY o_orderpriority

The orders in the quarter become a bitmap over order keys; the EXISTS is a second bitmap, set only from
the late lineitem rows of those orders (compacted first, so no two writes race on a key with different
values), then a count per priority code.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import parse_date

COLUMNS = {
    "orders": ("o_orderkey", "o_orderdate", "o_orderpriority"),
    "lineitem": ("l_orderkey", "l_commitdate", "l_receiptdate"),
}


def _query_core(
    o_orderkey: torch.Tensor,
    o_orderdate: torch.Tensor,
    o_orderpriority: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_commitdate: torch.Tensor,
    l_receiptdate: torch.Tensor,
    date_lo: int,
    date_hi: int,
    priorities: int,
    orderkeys: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(priority code, order count) per priority with orders, in code order. `orderkeys`: max key + 1."""
    device = o_orderkey.device
    in_quarter = (o_orderdate >= date_lo) & (o_orderdate < date_hi)
    quarter = torch.zeros(orderkeys, dtype=torch.bool, device=device)
    quarter[o_orderkey] = in_quarter
    late_lines = torch.nonzero(quarter[l_orderkey] & (l_commitdate < l_receiptdate)).squeeze(1)
    late = torch.zeros(orderkeys, dtype=torch.bool, device=device)
    late[l_orderkey[late_lines]] = True
    ids = torch.where(in_quarter & late[o_orderkey], o_orderpriority, priorities)
    count = ops.group_count(ids, priorities + 1)[:priorities]
    present = torch.nonzero(count).squeeze(1)
    return present, count[present]


def run_query(tables, date: str = "1993-07-01"):
    orders, lineitem = tables["orders"], tables["lineitem"]
    year, month, day = (int(part) for part in date.split("-"))
    month += 3
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    priority, count = _query_core(
        orders["o_orderkey"],
        orders["o_orderdate"],
        orders["o_orderpriority"],
        lineitem["l_orderkey"],
        lineitem["l_commitdate"],
        lineitem["l_receiptdate"],
        date_lo=parse_date(date),
        date_hi=parse_date(f"{year}-{month:02d}-{day:02d}"),
        priorities=len(orders.dictionary("o_orderpriority")),
        orderkeys=4 * orders.rows + 1,  # dbgen's sparse orderkeys: 8 of every 32, at most 4 x rows
    )
    return {"o_orderpriority": priority, "order_count": count}
