"""TPC-H Q10, Returned Item Reporting: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT
    c_custkey,
    c_name,
    sum(l_extendedprice * (1 - l_discount)) AS revenue,
    c_acctbal,
    n_name,
    c_address,
    c_phone,
    c_comment
FROM customer, orders, lineitem, nation
WHERE c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND o_orderdate >= DATE '1993-10-01'
  AND o_orderdate < DATE '1993-10-01' + INTERVAL 3 MONTH
  AND l_returnflag = 'R'
  AND c_nationkey = n_nationkey
GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
ORDER BY revenue DESC
LIMIT 20
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import add_interval, parse_date

COLUMNS = {
    "lineitem": ("l_returnflag", "l_orderkey", "l_discount", "l_extendedprice"),
    "orders": ("o_orderdate", "o_orderkey", "o_custkey"),
    "customer": ("c_custkey", "c_nationkey", "c_acctbal"),
    "nation": ("n_nationkey", "n_name"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {
    "c_name": ("customer", "c_name"),
    "n_name": ("nation", "n_name"),
    "c_address": ("customer", "c_address"),
    "c_phone": ("customer", "c_phone"),
    "c_comment": ("customer", "c_comment"),
}


def _query_core(
    l_returnflag: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_discount: torch.Tensor,
    l_extendedprice: torch.Tensor,
    o_orderdate: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    c_custkey: torch.Tensor,
    c_nationkey: torch.Tensor,
    c_acctbal: torch.Tensor,
    n_nationkey: torch.Tensor,
    n_name: torch.Tensor,
    *,
    r: int,
    date_plus_3_month: int,
    date: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    lineitem_mask = l_returnflag == r
    orders_mask = (o_orderdate < date_plus_3_month) & (o_orderdate >= date)
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    lineitem_orders = ops.lookup(ops.key_index(o_orderkey), l_orderkey)
    orders_customer = ops.lookup(ops.key_index(c_custkey), o_custkey)
    customer_nation = ops.lookup(ops.key_index(n_nationkey), c_nationkey)
    customer_mask = customer_nation >= 0
    orders_mask &= (orders_customer >= 0) & customer_mask[orders_customer]
    lineitem_mask &= (lineitem_orders >= 0) & orders_mask[lineitem_orders]
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    orders_rows = lineitem_orders[lineitem_rows]
    customer_rows = orders_customer[orders_rows]
    nation_rows = customer_nation[customer_rows]
    l_discount = l_discount[lineitem_rows]
    l_extendedprice = l_extendedprice[lineitem_rows]
    c_custkey = c_custkey[customer_rows]
    # GROUP BY c_custkey: exact keys, group ids by sorting (customer_rows, c_acctbal, customer_rows,
    # n_name, customer_rows, customer_rows follow from it).
    _, ids = ops.group(c_custkey)
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    revenue = ops.group_sum(l_extendedprice * (1 - l_discount), ids, groups)
    # The result columns.
    c_custkey = c_custkey[first]
    c_name = customer_rows[first]
    c_acctbal = c_acctbal[customer_rows[first]]
    n_name = n_name[nation_rows[first]].long()
    c_address = customer_rows[first]
    c_phone = customer_rows[first]
    c_comment = customer_rows[first]
    order = ops.order([(revenue, True)], limit=20)
    c_custkey = c_custkey[order]
    c_name = c_name[order]
    revenue = revenue[order]
    c_acctbal = c_acctbal[order]
    n_name = n_name[order]
    c_address = c_address[order]
    c_phone = c_phone[order]
    c_comment = c_comment[order]
    return (c_custkey, c_name, revenue, c_acctbal, n_name, c_address, c_phone, c_comment)


def run_query(tables, date: str = "1993-10-01") -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    orders = tables["orders"]
    customer = tables["customer"]
    nation = tables["nation"]
    result = _query_core(
        l_returnflag=lineitem["l_returnflag"],
        l_orderkey=lineitem["l_orderkey"],
        l_discount=lineitem["l_discount"],
        l_extendedprice=lineitem["l_extendedprice"],
        o_orderdate=orders["o_orderdate"],
        o_orderkey=orders["o_orderkey"],
        o_custkey=orders["o_custkey"],
        c_custkey=customer["c_custkey"],
        c_nationkey=customer["c_nationkey"],
        c_acctbal=customer["c_acctbal"],
        n_nationkey=nation["n_nationkey"],
        n_name=nation["n_name"],
        r=ops.dictionary_code(lineitem.dictionary("l_returnflag"), "R"),
        date_plus_3_month=add_interval(parse_date(date), 3, "month"),
        date=parse_date(date),
    )
    return dict(
        zip(
            ("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment"),
            result,
            strict=True,
        )
    )
