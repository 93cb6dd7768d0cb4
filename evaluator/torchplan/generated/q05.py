"""TPC-H Q5, Local Supplier Volume: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM customer, orders, lineitem, supplier, nation, region
WHERE c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND l_suppkey = s_suppkey
  AND c_nationkey = s_nationkey
  AND s_nationkey = n_nationkey
  AND n_regionkey = r_regionkey
  AND r_name = 'ASIA'
  AND o_orderdate >= DATE '1994-01-01'
  AND o_orderdate < DATE '1994-01-01' + INTERVAL 1 YEAR
GROUP BY n_name
ORDER BY revenue DESC
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import add_interval, parse_date

COLUMNS = {
    "orders": ("o_orderdate", "o_orderkey", "o_custkey"),
    "region": ("r_name", "r_regionkey"),
    "lineitem": ("l_orderkey", "l_suppkey", "l_discount", "l_extendedprice"),
    "supplier": ("s_suppkey", "s_nationkey"),
    "customer": ("c_custkey", "c_nationkey"),
    "nation": ("n_nationkey", "n_regionkey", "n_name"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {"n_name": ("nation", "n_name")}


def _query_core(
    o_orderdate: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    r_name: torch.Tensor,
    r_regionkey: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_suppkey: torch.Tensor,
    l_discount: torch.Tensor,
    l_extendedprice: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    c_custkey: torch.Tensor,
    c_nationkey: torch.Tensor,
    n_nationkey: torch.Tensor,
    n_regionkey: torch.Tensor,
    n_name: torch.Tensor,
    *,
    date_plus_1_year: int,
    date: int,
    region: int,
    n_name_size: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    orders_mask = (o_orderdate < date_plus_1_year) & (o_orderdate >= date)
    region_mask = r_name == region
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    lineitem_orders = ops.lookup(ops.key_index(o_orderkey), l_orderkey)
    lineitem_supplier = ops.lookup(ops.key_index(s_suppkey), l_suppkey)
    orders_customer = ops.lookup(ops.key_index(c_custkey), o_custkey)
    supplier_nation = ops.lookup(ops.key_index(n_nationkey), s_nationkey)
    nation_region = ops.lookup(ops.key_index(r_regionkey), n_regionkey)
    nation_mask = (nation_region >= 0) & region_mask[nation_region]
    supplier_mask = (supplier_nation >= 0) & nation_mask[supplier_nation]
    orders_mask &= orders_customer >= 0
    lineitem_mask = (lineitem_supplier >= 0) & supplier_mask[lineitem_supplier]
    lineitem_mask &= (lineitem_orders >= 0) & orders_mask[lineitem_orders]
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    orders_rows = lineitem_orders[lineitem_rows]
    supplier_rows = lineitem_supplier[lineitem_rows]
    customer_rows = orders_customer[orders_rows]
    nation_rows = supplier_nation[supplier_rows]
    l_discount = l_discount[lineitem_rows]
    l_extendedprice = l_extendedprice[lineitem_rows]
    c_nationkey = c_nationkey[customer_rows]
    n_name = n_name[nation_rows]
    s_nationkey = s_nationkey[supplier_rows]
    # Conditions across tables, on the joined rows.
    keep = torch.nonzero(c_nationkey == s_nationkey).squeeze(1)
    c_nationkey = c_nationkey[keep]
    l_discount = l_discount[keep]
    l_extendedprice = l_extendedprice[keep]
    n_name = n_name[keep]
    s_nationkey = s_nationkey[keep]
    customer_rows = customer_rows[keep]
    lineitem_rows = lineitem_rows[keep]
    nation_rows = nation_rows[keep]
    orders_rows = orders_rows[keep]
    supplier_rows = supplier_rows[keep]
    # GROUP BY n_name: dense codes over the sorted dictionaries, a slot per combination.
    ids = ops.pack([n_name], [n_name_size])
    groups = n_name_size
    count = ops.group_count(ids, groups)
    revenue = ops.group_sum(l_extendedprice * (1 - l_discount), ids, groups)
    present = torch.nonzero(count > 0).squeeze(1)  # combinations that occur
    n_name = present
    count = count[present]
    revenue = revenue[present]
    # The result columns.
    n_name = n_name.long()
    order = ops.order([(revenue, True)])
    n_name = n_name[order]
    revenue = revenue[order]
    return (n_name, revenue)


def run_query(tables, region: str = "ASIA", date: str = "1994-01-01") -> dict[str, torch.Tensor]:
    orders = tables["orders"]
    region_table = tables["region"]
    lineitem = tables["lineitem"]
    supplier = tables["supplier"]
    customer = tables["customer"]
    nation = tables["nation"]
    result = _query_core(
        o_orderdate=orders["o_orderdate"],
        o_orderkey=orders["o_orderkey"],
        o_custkey=orders["o_custkey"],
        r_name=region_table["r_name"],
        r_regionkey=region_table["r_regionkey"],
        l_orderkey=lineitem["l_orderkey"],
        l_suppkey=lineitem["l_suppkey"],
        l_discount=lineitem["l_discount"],
        l_extendedprice=lineitem["l_extendedprice"],
        s_suppkey=supplier["s_suppkey"],
        s_nationkey=supplier["s_nationkey"],
        c_custkey=customer["c_custkey"],
        c_nationkey=customer["c_nationkey"],
        n_nationkey=nation["n_nationkey"],
        n_regionkey=nation["n_regionkey"],
        n_name=nation["n_name"],
        date_plus_1_year=add_interval(parse_date(date), 1, "year"),
        date=parse_date(date),
        region=ops.dictionary_code(region_table.dictionary("r_name"), region),
        n_name_size=len(nation.dictionary("n_name")),
    )
    return dict(zip(("n_name", "revenue"), result, strict=True))
