"""TPC-H Q9, Product Type Profit Measure: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT nation, o_year, sum(amount) AS sum_profit
FROM (
    SELECT
        n_name AS nation,
        extract(year FROM o_orderdate) AS o_year,
        l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity AS amount
    FROM part, supplier, lineitem, partsupp, orders, nation
    WHERE s_suppkey = l_suppkey
      AND ps_suppkey = l_suppkey
      AND ps_partkey = l_partkey
      AND p_partkey = l_partkey
      AND o_orderkey = l_orderkey
      AND s_nationkey = n_nationkey
      AND p_name LIKE '%green%') AS profit
GROUP BY nation, o_year
ORDER BY nation, o_year DESC
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "part": ("p_name", "p_partkey"),
    "lineitem": ("l_partkey", "l_orderkey", "l_suppkey", "l_discount", "l_extendedprice", "l_quantity"),
    "orders": ("o_orderkey", "o_orderdate"),
    "supplier": ("s_suppkey", "s_nationkey"),
    "partsupp": ("ps_partkey", "ps_suppkey", "ps_supplycost"),
    "nation": ("n_nationkey", "n_name"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {"nation": ("nation", "n_name")}


def _query_core(
    p_name: torch.Tensor,
    p_partkey: torch.Tensor,
    l_partkey: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_suppkey: torch.Tensor,
    l_discount: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_quantity: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_orderdate: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    ps_partkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    ps_supplycost: torch.Tensor,
    n_nationkey: torch.Tensor,
    n_name: torch.Tensor,
    *,
    template0_0: str,
    n_name_size: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    part_mask = ops.text_contains(p_name, template0_0)
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    lineitem_part = ops.lookup(ops.key_index(p_partkey), l_partkey)
    lineitem_orders = ops.lookup(ops.key_index(o_orderkey), l_orderkey)
    lineitem_supplier = ops.lookup(ops.key_index(s_suppkey), l_suppkey)
    lineitem_partsupp = ops.lookup_composite([ps_partkey, ps_suppkey], [l_partkey, l_suppkey])
    supplier_nation = ops.lookup(ops.key_index(n_nationkey), s_nationkey)
    supplier_mask = supplier_nation >= 0
    lineitem_mask = lineitem_partsupp >= 0
    lineitem_mask &= (lineitem_supplier >= 0) & supplier_mask[lineitem_supplier]
    lineitem_mask &= lineitem_orders >= 0
    lineitem_mask &= (lineitem_part >= 0) & part_mask[lineitem_part]
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    orders_rows = lineitem_orders[lineitem_rows]
    supplier_rows = lineitem_supplier[lineitem_rows]
    partsupp_rows = lineitem_partsupp[lineitem_rows]
    nation_rows = supplier_nation[supplier_rows]
    l_discount = l_discount[lineitem_rows]
    l_extendedprice = l_extendedprice[lineitem_rows]
    l_quantity = l_quantity[lineitem_rows]
    n_name = n_name[nation_rows]
    o_orderdate = o_orderdate[orders_rows]
    ps_supplycost = ps_supplycost[partsupp_rows]
    key1 = ops.year(o_orderdate)
    key1 = key1 - key1.min()
    # GROUP BY n_name, ops.year(o_orderdate): exact keys, group ids by sorting.
    _, ids = ops.group(ops.pack([n_name, key1], [n_name_size, int(key1.max()) + 1]))
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    sum_profit = ops.group_sum(l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity, ids, groups)
    # The result columns.
    nation = n_name[first].long()
    o_year = ops.year(o_orderdate[first])
    order = ops.order([(nation, False), (o_year, True)])
    nation = nation[order]
    o_year = o_year[order]
    sum_profit = sum_profit[order]
    return (nation, o_year, sum_profit)


def run_query(tables, color: str = "green") -> dict[str, torch.Tensor]:
    part = tables["part"]
    lineitem = tables["lineitem"]
    orders = tables["orders"]
    supplier = tables["supplier"]
    partsupp = tables["partsupp"]
    nation = tables["nation"]
    result = _query_core(
        p_name=part["p_name"],
        p_partkey=part["p_partkey"],
        l_partkey=lineitem["l_partkey"],
        l_orderkey=lineitem["l_orderkey"],
        l_suppkey=lineitem["l_suppkey"],
        l_discount=lineitem["l_discount"],
        l_extendedprice=lineitem["l_extendedprice"],
        l_quantity=lineitem["l_quantity"],
        o_orderkey=orders["o_orderkey"],
        o_orderdate=orders["o_orderdate"],
        s_suppkey=supplier["s_suppkey"],
        s_nationkey=supplier["s_nationkey"],
        ps_partkey=partsupp["ps_partkey"],
        ps_suppkey=partsupp["ps_suppkey"],
        ps_supplycost=partsupp["ps_supplycost"],
        n_nationkey=nation["n_nationkey"],
        n_name=nation["n_name"],
        template0_0=f"%{color}%".split("%")[1],
        n_name_size=len(nation.dictionary("n_name")),
    )
    return dict(zip(("nation", "o_year", "sum_profit"), result, strict=True))
