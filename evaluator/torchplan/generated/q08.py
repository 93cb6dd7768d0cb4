"""TPC-H Q8, National Market Share: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT
    o_year,
    sum(CASE WHEN nation = 'BRAZIL' THEN volume ELSE 0 END) / sum(volume) AS mkt_share
FROM (
    SELECT
        extract(year FROM o_orderdate) AS o_year,
        l_extendedprice * (1 - l_discount) AS volume,
        n2.n_name AS nation
    FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region
    WHERE p_partkey = l_partkey
      AND s_suppkey = l_suppkey
      AND l_orderkey = o_orderkey
      AND o_custkey = c_custkey
      AND c_nationkey = n1.n_nationkey
      AND n1.n_regionkey = r_regionkey
      AND r_name = 'AMERICA'
      AND s_nationkey = n2.n_nationkey
      AND o_orderdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31'
      AND p_type = 'ECONOMY ANODIZED STEEL') AS all_nations
GROUP BY o_year
ORDER BY o_year
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import parse_date

COLUMNS = {
    "part": ("p_type", "p_partkey"),
    "orders": ("o_orderdate", "o_orderkey", "o_custkey"),
    "region": ("r_name", "r_regionkey"),
    "lineitem": ("l_partkey", "l_orderkey", "l_suppkey", "l_discount", "l_extendedprice"),
    "supplier": ("s_suppkey", "s_nationkey"),
    "customer": ("c_custkey", "c_nationkey"),
    "nation": ("n_nationkey", "n_regionkey", "n_name"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {}


def _query_core(
    p_type: torch.Tensor,
    p_partkey: torch.Tensor,
    o_orderdate: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    r_name: torch.Tensor,
    r_regionkey: torch.Tensor,
    l_partkey: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_suppkey: torch.Tensor,
    l_discount: torch.Tensor,
    l_extendedprice: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    c_custkey: torch.Tensor,
    c_nationkey: torch.Tensor,
    n2_n_nationkey: torch.Tensor,
    n1_n_nationkey: torch.Tensor,
    n1_n_regionkey: torch.Tensor,
    n2_n_name: torch.Tensor,
    *,
    type: int,
    v_1996_12_31: int,
    v_1995_01_01: int,
    region: int,
    nation: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    part_mask = p_type == type
    orders_mask = (o_orderdate <= v_1996_12_31) & (o_orderdate >= v_1995_01_01)
    region_mask = r_name == region
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    lineitem_part = ops.lookup(ops.key_index(p_partkey), l_partkey)
    lineitem_orders = ops.lookup(ops.key_index(o_orderkey), l_orderkey)
    lineitem_supplier = ops.lookup(ops.key_index(s_suppkey), l_suppkey)
    orders_customer = ops.lookup(ops.key_index(c_custkey), o_custkey)
    supplier_n2 = ops.lookup(ops.key_index(n2_n_nationkey), s_nationkey)
    customer_n1 = ops.lookup(ops.key_index(n1_n_nationkey), c_nationkey)
    n1_region = ops.lookup(ops.key_index(r_regionkey), n1_n_regionkey)
    n1_mask = (n1_region >= 0) & region_mask[n1_region]
    customer_mask = (customer_n1 >= 0) & n1_mask[customer_n1]
    supplier_mask = supplier_n2 >= 0
    orders_mask &= (orders_customer >= 0) & customer_mask[orders_customer]
    lineitem_mask = (lineitem_supplier >= 0) & supplier_mask[lineitem_supplier]
    lineitem_mask &= (lineitem_orders >= 0) & orders_mask[lineitem_orders]
    lineitem_mask &= (lineitem_part >= 0) & part_mask[lineitem_part]
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    orders_rows = lineitem_orders[lineitem_rows]
    supplier_rows = lineitem_supplier[lineitem_rows]
    n2_rows = supplier_n2[supplier_rows]
    l_discount = l_discount[lineitem_rows]
    l_extendedprice = l_extendedprice[lineitem_rows]
    n2_n_name = n2_n_name[n2_rows]
    o_orderdate = o_orderdate[orders_rows]
    # GROUP BY ops.year(o_orderdate): exact keys, group ids by sorting.
    _, ids = ops.group(ops.year(o_orderdate))
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    agg0 = ops.group_sum(
        torch.where(n2_n_name == nation, l_extendedprice * (1 - l_discount), 0.0), ids, groups
    )
    agg1 = ops.group_sum(l_extendedprice * (1 - l_discount), ids, groups)
    # The result columns.
    o_year = ops.year(o_orderdate[first])
    mkt_share = agg0 / agg1
    order = ops.order([(o_year, False)])
    o_year = o_year[order]
    mkt_share = mkt_share[order]
    return (o_year, mkt_share)


def run_query(
    tables, nation: str = "BRAZIL", region: str = "AMERICA", type: str = "ECONOMY ANODIZED STEEL"
) -> dict[str, torch.Tensor]:
    part = tables["part"]
    orders = tables["orders"]
    region_table = tables["region"]
    lineitem = tables["lineitem"]
    supplier = tables["supplier"]
    customer = tables["customer"]
    nation_table = tables["nation"]
    result = _query_core(
        p_type=part["p_type"],
        p_partkey=part["p_partkey"],
        o_orderdate=orders["o_orderdate"],
        o_orderkey=orders["o_orderkey"],
        o_custkey=orders["o_custkey"],
        r_name=region_table["r_name"],
        r_regionkey=region_table["r_regionkey"],
        l_partkey=lineitem["l_partkey"],
        l_orderkey=lineitem["l_orderkey"],
        l_suppkey=lineitem["l_suppkey"],
        l_discount=lineitem["l_discount"],
        l_extendedprice=lineitem["l_extendedprice"],
        s_suppkey=supplier["s_suppkey"],
        s_nationkey=supplier["s_nationkey"],
        c_custkey=customer["c_custkey"],
        c_nationkey=customer["c_nationkey"],
        n2_n_nationkey=nation_table["n_nationkey"],
        n1_n_nationkey=nation_table["n_nationkey"],
        n1_n_regionkey=nation_table["n_regionkey"],
        n2_n_name=nation_table["n_name"],
        type=ops.dictionary_code(part.dictionary("p_type"), type),
        v_1996_12_31=parse_date("1996-12-31"),
        v_1995_01_01=parse_date("1995-01-01"),
        region=ops.dictionary_code(region_table.dictionary("r_name"), region),
        nation=ops.dictionary_code(nation_table.dictionary("n_name"), nation),
    )
    return dict(zip(("o_year", "mkt_share"), result, strict=True))
