"""TPC-H Q18, Large Volume Customer: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT
    c_name,
    c_custkey,
    o_orderkey,
    o_orderdate,
    o_totalprice,
    sum(l_quantity)
FROM customer, orders, lineitem
WHERE o_orderkey IN (
        SELECT l_orderkey
        FROM lineitem
        GROUP BY l_orderkey
        HAVING sum(l_quantity) > 300)
  AND c_custkey = o_custkey
  AND o_orderkey = l_orderkey
GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
ORDER BY o_totalprice DESC, o_orderdate
LIMIT 100
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "lineitem": ("l_orderkey", "l_quantity"),
    "orders": ("o_orderkey", "o_custkey", "o_orderdate", "o_totalprice"),
    "customer": ("c_custkey",),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {"c_name": ("customer", "c_name")}


def _query_core(
    sub0_lineitem_l_orderkey: torch.Tensor,
    sub0_lineitem_l_quantity: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_quantity: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    o_orderdate: torch.Tensor,
    o_totalprice: torch.Tensor,
    c_custkey: torch.Tensor,
    *,
    quantity: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Subquery sub0: lineitem grouped by l_orderkey, one row per key (a grouped subquery or view).
    sub0_l_orderkey, sub0_l_orderkey_ids = ops.group(sub0_lineitem_l_orderkey)
    sub0_groups = sub0_l_orderkey.numel()
    sub0_agg0 = ops.group_sum(sub0_lineitem_l_quantity, sub0_l_orderkey_ids, sub0_groups)  # SUM per key
    # Filters, each on its own table's rows.
    sub0_mask = quantity < sub0_agg0
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    lineitem_orders = ops.lookup(ops.key_index(o_orderkey), l_orderkey)
    orders_customer = ops.lookup(ops.key_index(c_custkey), o_custkey)
    orders_sub0 = ops.lookup(ops.key_index(sub0_l_orderkey), o_orderkey)
    orders_mask = (orders_sub0 >= 0) & sub0_mask[orders_sub0]
    orders_mask &= orders_customer >= 0
    lineitem_mask = (lineitem_orders >= 0) & orders_mask[lineitem_orders]
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    orders_rows = lineitem_orders[lineitem_rows]
    customer_rows = orders_customer[orders_rows]
    l_quantity = l_quantity[lineitem_rows]
    o_orderkey = o_orderkey[orders_rows]
    # GROUP BY o_orderkey: exact keys, group ids by sorting (customer_rows, c_custkey, o_orderdate,
    # o_totalprice follow from it).
    _, ids = ops.group(o_orderkey)
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    sum_l_quantity = ops.group_sum(l_quantity, ids, groups)
    # The result columns.
    c_name = customer_rows[first]
    c_custkey = c_custkey[customer_rows[first]]
    o_orderkey = o_orderkey[first]
    o_orderdate = o_orderdate[orders_rows[first]]
    o_totalprice = o_totalprice[orders_rows[first]]
    order = ops.order([(o_totalprice, True), (o_orderdate, False)], limit=100)
    c_name = c_name[order]
    c_custkey = c_custkey[order]
    o_orderkey = o_orderkey[order]
    o_orderdate = o_orderdate[order]
    o_totalprice = o_totalprice[order]
    sum_l_quantity = sum_l_quantity[order]
    return (c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum_l_quantity)


def run_query(tables, quantity: int = 300) -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    orders = tables["orders"]
    customer = tables["customer"]
    result = _query_core(
        sub0_lineitem_l_orderkey=lineitem["l_orderkey"],
        sub0_lineitem_l_quantity=lineitem["l_quantity"],
        l_orderkey=lineitem["l_orderkey"],
        l_quantity=lineitem["l_quantity"],
        o_orderkey=orders["o_orderkey"],
        o_custkey=orders["o_custkey"],
        o_orderdate=orders["o_orderdate"],
        o_totalprice=orders["o_totalprice"],
        c_custkey=customer["c_custkey"],
        quantity=quantity,
    )
    return dict(
        zip(
            ("c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice", "sum(l_quantity)"),
            result,
            strict=True,
        )
    )
