"""TPC-H Q3, Shipping Priority: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT
    l_orderkey,
    sum(l_extendedprice * (1 - l_discount)) AS revenue,
    o_orderdate,
    o_shippriority
FROM customer, orders, lineitem
WHERE c_mktsegment = 'BUILDING'
  AND c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND o_orderdate < DATE '1995-03-15'
  AND l_shipdate > DATE '1995-03-15'
GROUP BY l_orderkey, o_orderdate, o_shippriority
ORDER BY revenue DESC, o_orderdate
LIMIT 10
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import parse_date

COLUMNS = {
    "lineitem": ("l_shipdate", "l_orderkey", "l_discount", "l_extendedprice"),
    "orders": ("o_orderdate", "o_orderkey", "o_custkey", "o_shippriority"),
    "customer": ("c_mktsegment", "c_custkey"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {}


def _query_core(
    l_shipdate: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_discount: torch.Tensor,
    l_extendedprice: torch.Tensor,
    o_orderdate: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    o_shippriority: torch.Tensor,
    c_mktsegment: torch.Tensor,
    c_custkey: torch.Tensor,
    *,
    date: int,
    segment: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    lineitem_mask = l_shipdate > date
    orders_mask = o_orderdate < date
    customer_mask = c_mktsegment == segment
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    lineitem_orders = ops.lookup(ops.key_index(o_orderkey), l_orderkey)
    orders_customer = ops.lookup(ops.key_index(c_custkey), o_custkey)
    orders_mask &= (orders_customer >= 0) & customer_mask[orders_customer]
    lineitem_mask &= (lineitem_orders >= 0) & orders_mask[lineitem_orders]
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    orders_rows = lineitem_orders[lineitem_rows]
    l_discount = l_discount[lineitem_rows]
    l_extendedprice = l_extendedprice[lineitem_rows]
    l_orderkey = l_orderkey[lineitem_rows]
    # GROUP BY l_orderkey: exact keys, group ids by sorting (o_orderdate, o_shippriority follow from
    # it).
    _, ids = ops.group(l_orderkey)
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    revenue = ops.group_sum(l_extendedprice * (1 - l_discount), ids, groups)
    # The result columns.
    l_orderkey = l_orderkey[first]
    o_orderdate = o_orderdate[orders_rows[first]]
    o_shippriority = o_shippriority[orders_rows[first]]
    order = ops.order([(revenue, True), (o_orderdate, False)], limit=10)
    l_orderkey = l_orderkey[order]
    revenue = revenue[order]
    o_orderdate = o_orderdate[order]
    o_shippriority = o_shippriority[order]
    return (l_orderkey, revenue, o_orderdate, o_shippriority)


def run_query(tables, segment: str = "BUILDING", date: str = "1995-03-15") -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    orders = tables["orders"]
    customer = tables["customer"]
    result = _query_core(
        l_shipdate=lineitem["l_shipdate"],
        l_orderkey=lineitem["l_orderkey"],
        l_discount=lineitem["l_discount"],
        l_extendedprice=lineitem["l_extendedprice"],
        o_orderdate=orders["o_orderdate"],
        o_orderkey=orders["o_orderkey"],
        o_custkey=orders["o_custkey"],
        o_shippriority=orders["o_shippriority"],
        c_mktsegment=customer["c_mktsegment"],
        c_custkey=customer["c_custkey"],
        date=parse_date(date),
        segment=ops.dictionary_code(customer.dictionary("c_mktsegment"), segment),
    )
    return dict(zip(("l_orderkey", "revenue", "o_orderdate", "o_shippriority"), result, strict=True))
