"""TPC-H Q21, Suppliers Who Kept Orders Waiting: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT s_name, count(*) AS numwait
FROM supplier, lineitem l1, orders, nation
WHERE s_suppkey = l1.l_suppkey
  AND o_orderkey = l1.l_orderkey
  AND o_orderstatus = 'F'
  AND l1.l_receiptdate > l1.l_commitdate
  AND EXISTS (
      SELECT * FROM lineitem l2
      WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)
  AND NOT EXISTS (
      SELECT * FROM lineitem l3
      WHERE l3.l_orderkey = l1.l_orderkey
        AND l3.l_suppkey <> l1.l_suppkey
        AND l3.l_receiptdate > l3.l_commitdate)
  AND s_nationkey = n_nationkey
  AND n_name = 'SAUDI ARABIA'
GROUP BY s_name
ORDER BY numwait DESC, s_name
LIMIT 100
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "lineitem": ("l_orderkey", "l_suppkey", "l_receiptdate", "l_commitdate"),
    "orders": ("o_orderstatus", "o_orderkey"),
    "nation": ("n_name", "n_nationkey"),
    "supplier": ("s_suppkey", "s_nationkey", "s_name"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {"s_name": ("supplier", "s_name")}


def _query_core(
    l2_l_orderkey: torch.Tensor,
    l2_l_suppkey: torch.Tensor,
    l3_l_receiptdate: torch.Tensor,
    l3_l_commitdate: torch.Tensor,
    l3_l_orderkey: torch.Tensor,
    l3_l_suppkey: torch.Tensor,
    l1_l_commitdate: torch.Tensor,
    l1_l_receiptdate: torch.Tensor,
    l1_l_orderkey: torch.Tensor,
    l1_l_suppkey: torch.Tensor,
    o_orderstatus: torch.Tensor,
    o_orderkey: torch.Tensor,
    n_name: torch.Tensor,
    n_nationkey: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    s_name: torch.Tensor,
    *,
    f: int,
    nation: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # EXISTS another l_suppkey of the same l_orderkey: the
    # least and greatest l_suppkey per l_orderkey.
    l2_range = ops.key_range(l2_l_orderkey, l2_l_suppkey)
    # EXISTS another l_suppkey of the same l_orderkey: the
    # least and greatest l_suppkey per l_orderkey.
    l3_mask = l3_l_receiptdate > l3_l_commitdate
    l3_range = ops.key_range(l3_l_orderkey[l3_mask], l3_l_suppkey[l3_mask])
    # Filters, each on its own table's rows.
    l1_mask = (
        (l1_l_commitdate < l1_l_receiptdate)
        & ops.exists_other(l1_l_orderkey, l1_l_suppkey, *l2_range)
        & ~ops.exists_other(l1_l_orderkey, l1_l_suppkey, *l3_range)
    )
    orders_mask = o_orderstatus == f
    nation_mask = n_name == nation
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    l1_supplier = ops.lookup(ops.key_index(s_suppkey), l1_l_suppkey)
    l1_orders = ops.lookup(ops.key_index(o_orderkey), l1_l_orderkey)
    supplier_nation = ops.lookup(ops.key_index(n_nationkey), s_nationkey)
    supplier_mask = (supplier_nation >= 0) & nation_mask[supplier_nation]
    l1_mask &= (l1_orders >= 0) & orders_mask[l1_orders]
    l1_mask &= (l1_supplier >= 0) & supplier_mask[l1_supplier]
    # Late materialization: the surviving rows, then only the columns still needed.
    l1_rows = torch.nonzero(l1_mask).squeeze(1)
    supplier_rows = l1_supplier[l1_rows]
    key0 = ops.text_codes(s_name[supplier_rows])  # exact codes of the strings
    # GROUP BY s_name: exact keys, group ids by sorting.
    _, ids = ops.group(ops.pack([key0], [int(key0.max()) + 1]))
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    numwait = ops.group_count(ids, groups)
    sort_text1 = s_name[supplier_rows[first]]  # ORDER BY text
    # The result columns.
    s_name = supplier_rows[first]
    order = ops.order([(numwait, True), *ops.text_order_keys(sort_text1, descending=False)], limit=100)
    s_name = s_name[order]
    numwait = numwait[order]
    return (s_name, numwait)


def run_query(tables, nation: str = "SAUDI ARABIA") -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    orders = tables["orders"]
    nation_table = tables["nation"]
    supplier = tables["supplier"]
    result = _query_core(
        l2_l_orderkey=lineitem["l_orderkey"],
        l2_l_suppkey=lineitem["l_suppkey"],
        l3_l_receiptdate=lineitem["l_receiptdate"],
        l3_l_commitdate=lineitem["l_commitdate"],
        l3_l_orderkey=lineitem["l_orderkey"],
        l3_l_suppkey=lineitem["l_suppkey"],
        l1_l_commitdate=lineitem["l_commitdate"],
        l1_l_receiptdate=lineitem["l_receiptdate"],
        l1_l_orderkey=lineitem["l_orderkey"],
        l1_l_suppkey=lineitem["l_suppkey"],
        o_orderstatus=orders["o_orderstatus"],
        o_orderkey=orders["o_orderkey"],
        n_name=nation_table["n_name"],
        n_nationkey=nation_table["n_nationkey"],
        s_suppkey=supplier["s_suppkey"],
        s_nationkey=supplier["s_nationkey"],
        s_name=supplier["s_name"],
        f=ops.dictionary_code(orders.dictionary("o_orderstatus"), "F"),
        nation=ops.dictionary_code(nation_table.dictionary("n_name"), nation),
    )
    return dict(zip(("s_name", "numwait"), result, strict=True))
