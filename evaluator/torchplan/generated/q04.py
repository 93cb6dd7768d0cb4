"""TPC-H Q4, Order Priority Checking: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT o_orderpriority, count(*) AS order_count
FROM orders
WHERE o_orderdate >= DATE '1993-07-01'
  AND o_orderdate < DATE '1993-07-01' + INTERVAL 3 MONTH
  AND EXISTS (
      SELECT * FROM lineitem
      WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)
GROUP BY o_orderpriority
ORDER BY o_orderpriority
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import add_interval, parse_date

COLUMNS = {
    "orders": ("o_orderdate", "o_orderkey", "o_orderpriority"),
    "lineitem": ("l_commitdate", "l_receiptdate", "l_orderkey"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {"o_orderpriority": ("orders", "o_orderpriority")}


def _query_core(
    o_orderdate: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_orderpriority: torch.Tensor,
    u_0_lineitem_l_commitdate: torch.Tensor,
    u_0_lineitem_l_receiptdate: torch.Tensor,
    u_0_lineitem_l_orderkey: torch.Tensor,
    *,
    date_plus_3_month: int,
    date: int,
    o_orderpriority_size: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    orders_mask = (o_orderdate < date_plus_3_month) & (o_orderdate >= date)
    # EXISTS / IN: membership of o_orderkey among the subquery's l_orderkey.
    u_0_lineitem_mask = u_0_lineitem_l_commitdate < u_0_lineitem_l_receiptdate
    orders_mask &= ops.member(o_orderkey, of=u_0_lineitem_l_orderkey[u_0_lineitem_mask])
    # Late materialization: the surviving rows, then only the columns still needed.
    orders_rows = torch.nonzero(orders_mask).squeeze(1)
    o_orderpriority = o_orderpriority[orders_rows]
    # GROUP BY o_orderpriority: dense codes over the sorted dictionaries, a slot per combination.
    ids = ops.pack([o_orderpriority], [o_orderpriority_size])
    groups = o_orderpriority_size
    order_count = ops.group_count(ids, groups)
    present = torch.nonzero(order_count > 0).squeeze(1)  # combinations that occur
    o_orderpriority = present
    order_count = order_count[present]
    # The result columns.
    o_orderpriority = o_orderpriority.long()
    order = ops.order([(o_orderpriority, False)])
    o_orderpriority = o_orderpriority[order]
    order_count = order_count[order]
    return (o_orderpriority, order_count)


def run_query(tables, date: str = "1993-07-01") -> dict[str, torch.Tensor]:
    orders = tables["orders"]
    lineitem = tables["lineitem"]
    result = _query_core(
        o_orderdate=orders["o_orderdate"],
        o_orderkey=orders["o_orderkey"],
        o_orderpriority=orders["o_orderpriority"],
        u_0_lineitem_l_commitdate=lineitem["l_commitdate"],
        u_0_lineitem_l_receiptdate=lineitem["l_receiptdate"],
        u_0_lineitem_l_orderkey=lineitem["l_orderkey"],
        date_plus_3_month=add_interval(parse_date(date), 3, "month"),
        date=parse_date(date),
        o_orderpriority_size=len(orders.dictionary("o_orderpriority")),
    )
    return dict(zip(("o_orderpriority", "order_count"), result, strict=True))
