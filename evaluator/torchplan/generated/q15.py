"""TPC-H Q15, Top Supplier: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

WITH revenue AS (
    SELECT
        l_suppkey AS supplier_no,
        sum(l_extendedprice * (1 - l_discount)) AS total_revenue
    FROM lineitem
    WHERE l_shipdate >= DATE '1996-01-01'
      AND l_shipdate < DATE '1996-01-01' + INTERVAL 3 MONTH
    GROUP BY supplier_no
)
SELECT s_suppkey, s_name, s_address, s_phone, total_revenue
FROM supplier, revenue
WHERE s_suppkey = supplier_no
  AND total_revenue = (SELECT max(total_revenue) FROM revenue)
ORDER BY s_suppkey
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import add_interval, parse_date

COLUMNS = {
    "lineitem": ("l_shipdate", "l_suppkey", "l_extendedprice", "l_discount"),
    "supplier": ("s_suppkey",),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {
    "s_name": ("supplier", "s_name"),
    "s_address": ("supplier", "s_address"),
    "s_phone": ("supplier", "s_phone"),
}


def _scalar0(
    sub0_agg0: torch.Tensor,
) -> tuple[torch.Tensor, ...]:
    """An uncorrelated scalar subquery: its one value, a 1-element tensor."""
    # Aggregates over the qualifying rows, without gathering them.
    col_0 = (sub0_agg0).amax().reshape(1)
    # The result columns.
    return (col_0,)


def _query_core(
    sub0_lineitem_l_shipdate: torch.Tensor,
    sub0_lineitem_l_suppkey: torch.Tensor,
    sub0_lineitem_l_extendedprice: torch.Tensor,
    sub0_lineitem_l_discount: torch.Tensor,
    s_suppkey: torch.Tensor,
    *,
    date_plus_3_month: int,
    date: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Subquery sub0: lineitem grouped by l_suppkey, one row per key (a grouped subquery or view).
    sub0_lineitem_mask = (sub0_lineitem_l_shipdate < date_plus_3_month) & (sub0_lineitem_l_shipdate >= date)
    sub0_l_suppkey, sub0_l_suppkey_ids = ops.group(sub0_lineitem_l_suppkey[sub0_lineitem_mask])
    sub0_groups = sub0_l_suppkey.numel()
    sub0_agg0 = ops.group_sum(
        sub0_lineitem_l_extendedprice[sub0_lineitem_mask]
        * (1 - sub0_lineitem_l_discount[sub0_lineitem_mask]),
        sub0_l_suppkey_ids,
        sub0_groups,
    )  # SUM per key
    (scalar0,) = _scalar0(sub0_agg0)
    # Filters, each on its own table's rows.
    sub0_mask = scalar0 == sub0_agg0
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    supplier_sub0 = ops.lookup(ops.key_index(sub0_l_suppkey), s_suppkey)
    supplier_mask = (supplier_sub0 >= 0) & sub0_mask[supplier_sub0]
    # Late materialization: the surviving rows, then only the columns still needed.
    supplier_rows = torch.nonzero(supplier_mask).squeeze(1)
    sub0_rows = supplier_sub0[supplier_rows]
    s_suppkey = s_suppkey[supplier_rows]
    sub0_agg0 = sub0_agg0[sub0_rows]
    # The result columns.
    s_name = supplier_rows
    s_address = supplier_rows
    s_phone = supplier_rows
    total_revenue = sub0_agg0
    order = ops.order([(s_suppkey, False)])
    s_suppkey = s_suppkey[order]
    s_name = s_name[order]
    s_address = s_address[order]
    s_phone = s_phone[order]
    total_revenue = total_revenue[order]
    return (s_suppkey, s_name, s_address, s_phone, total_revenue)


def run_query(tables, date: str = "1996-01-01") -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    supplier = tables["supplier"]
    result = _query_core(
        sub0_lineitem_l_shipdate=lineitem["l_shipdate"],
        sub0_lineitem_l_suppkey=lineitem["l_suppkey"],
        sub0_lineitem_l_extendedprice=lineitem["l_extendedprice"],
        sub0_lineitem_l_discount=lineitem["l_discount"],
        s_suppkey=supplier["s_suppkey"],
        date_plus_3_month=add_interval(parse_date(date), 3, "month"),
        date=parse_date(date),
    )
    return dict(zip(("s_suppkey", "s_name", "s_address", "s_phone", "total_revenue"), result, strict=True))
