"""TPC-H Q12, Shipping Modes and Order Priority: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT
    l_shipmode,
    sum(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH' THEN 1 ELSE 0 END)
        AS high_line_count,
    sum(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH' THEN 1 ELSE 0 END)
        AS low_line_count
FROM orders, lineitem
WHERE o_orderkey = l_orderkey
  AND l_shipmode IN ('MAIL', 'SHIP')
  AND l_commitdate < l_receiptdate
  AND l_shipdate < l_commitdate
  AND l_receiptdate >= DATE '1994-01-01'
  AND l_receiptdate < DATE '1994-01-01' + INTERVAL 1 YEAR
GROUP BY l_shipmode
ORDER BY l_shipmode
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import add_interval, parse_date

COLUMNS = {
    "lineitem": ("l_commitdate", "l_receiptdate", "l_shipdate", "l_shipmode", "l_orderkey"),
    "orders": ("o_orderkey", "o_orderpriority"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {"l_shipmode": ("lineitem", "l_shipmode")}


def _query_core(
    l_commitdate: torch.Tensor,
    l_receiptdate: torch.Tensor,
    l_shipdate: torch.Tensor,
    l_shipmode: torch.Tensor,
    l_orderkey: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_orderpriority: torch.Tensor,
    *,
    date_plus_1_year: int,
    date: int,
    l_shipmode_in_list: torch.Tensor,
    l_shipmode_size: int,
    v_1_urgent: int,
    v_2_high: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    lineitem_mask = (
        (l_commitdate < l_receiptdate)
        & (l_commitdate > l_shipdate)
        & (l_receiptdate < date_plus_1_year)
        & (l_receiptdate >= date)
        & l_shipmode_in_list[l_shipmode]
    )
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    lineitem_orders = ops.lookup(ops.key_index(o_orderkey), l_orderkey)
    lineitem_mask &= lineitem_orders >= 0
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    orders_rows = lineitem_orders[lineitem_rows]
    l_shipmode = l_shipmode[lineitem_rows]
    o_orderpriority = o_orderpriority[orders_rows]
    # GROUP BY l_shipmode: dense codes over the sorted dictionaries, a slot per combination.
    ids = ops.pack([l_shipmode], [l_shipmode_size])
    groups = l_shipmode_size
    count = ops.group_count(ids, groups)
    high_line_count = ops.group_sum(
        torch.where((o_orderpriority == v_1_urgent) | (o_orderpriority == v_2_high), 1, 0), ids, groups
    )
    low_line_count = ops.group_sum(
        torch.where((o_orderpriority != v_1_urgent) & (o_orderpriority != v_2_high), 1, 0), ids, groups
    )
    present = torch.nonzero(count > 0).squeeze(1)  # combinations that occur
    l_shipmode = present
    count = count[present]
    high_line_count = high_line_count[present]
    low_line_count = low_line_count[present]
    # The result columns.
    l_shipmode = l_shipmode.long()
    order = ops.order([(l_shipmode, False)])
    l_shipmode = l_shipmode[order]
    high_line_count = high_line_count[order]
    low_line_count = low_line_count[order]
    return (l_shipmode, high_line_count, low_line_count)


def run_query(
    tables, shipmode1: str = "MAIL", shipmode2: str = "SHIP", date: str = "1994-01-01"
) -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    orders = tables["orders"]
    result = _query_core(
        l_commitdate=lineitem["l_commitdate"],
        l_receiptdate=lineitem["l_receiptdate"],
        l_shipdate=lineitem["l_shipdate"],
        l_shipmode=lineitem["l_shipmode"],
        l_orderkey=lineitem["l_orderkey"],
        o_orderkey=orders["o_orderkey"],
        o_orderpriority=orders["o_orderpriority"],
        date_plus_1_year=add_interval(parse_date(date), 1, "year"),
        date=parse_date(date),
        l_shipmode_in_list=ops.dictionary_mask(
            lineitem.dictionary("l_shipmode"),
            lambda s: s in (shipmode1, shipmode2),
            lineitem["l_shipmode"].device,
        ),
        l_shipmode_size=len(lineitem.dictionary("l_shipmode")),
        v_1_urgent=ops.dictionary_code(orders.dictionary("o_orderpriority"), "1-URGENT"),
        v_2_high=ops.dictionary_code(orders.dictionary("o_orderpriority"), "2-HIGH"),
    )
    return dict(zip(("l_shipmode", "high_line_count", "low_line_count"), result, strict=True))
