"""TPC-H Q7, Volume Shipping: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT supp_nation, cust_nation, l_year, sum(volume) AS revenue
FROM (
    SELECT
        n1.n_name AS supp_nation,
        n2.n_name AS cust_nation,
        extract(year FROM l_shipdate) AS l_year,
        l_extendedprice * (1 - l_discount) AS volume
    FROM supplier, lineitem, orders, customer, nation n1, nation n2
    WHERE s_suppkey = l_suppkey
      AND o_orderkey = l_orderkey
      AND c_custkey = o_custkey
      AND s_nationkey = n1.n_nationkey
      AND c_nationkey = n2.n_nationkey
      AND ((n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY')
        OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE'))
      AND l_shipdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31') AS shipping
GROUP BY supp_nation, cust_nation, l_year
ORDER BY supp_nation, cust_nation, l_year
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import parse_date

COLUMNS = {
    "lineitem": ("l_shipdate", "l_suppkey", "l_orderkey", "l_discount", "l_extendedprice"),
    "nation": ("n_name", "n_nationkey"),
    "supplier": ("s_suppkey", "s_nationkey"),
    "orders": ("o_orderkey", "o_custkey"),
    "customer": ("c_custkey", "c_nationkey"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {
    "supp_nation": ("nation", "n_name"),
    "cust_nation": ("nation", "n_name"),
}


def _query_core(
    l_shipdate: torch.Tensor,
    l_suppkey: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_discount: torch.Tensor,
    l_extendedprice: torch.Tensor,
    n1_n_name: torch.Tensor,
    n2_n_name: torch.Tensor,
    n1_n_nationkey: torch.Tensor,
    n2_n_nationkey: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    c_custkey: torch.Tensor,
    c_nationkey: torch.Tensor,
    *,
    v_1996_12_31: int,
    v_1995_01_01: int,
    nation1: int,
    nation2: int,
    n_name_size: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    lineitem_mask = (l_shipdate <= v_1996_12_31) & (l_shipdate >= v_1995_01_01)
    n1_mask = (n1_n_name == nation1) | (n1_n_name == nation2)
    n2_mask = (n2_n_name == nation1) | (n2_n_name == nation2)
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    lineitem_supplier = ops.lookup(ops.key_index(s_suppkey), l_suppkey)
    lineitem_orders = ops.lookup(ops.key_index(o_orderkey), l_orderkey)
    supplier_n1 = ops.lookup(ops.key_index(n1_n_nationkey), s_nationkey)
    orders_customer = ops.lookup(ops.key_index(c_custkey), o_custkey)
    customer_n2 = ops.lookup(ops.key_index(n2_n_nationkey), c_nationkey)
    customer_mask = (customer_n2 >= 0) & n2_mask[customer_n2]
    orders_mask = (orders_customer >= 0) & customer_mask[orders_customer]
    supplier_mask = (supplier_n1 >= 0) & n1_mask[supplier_n1]
    lineitem_mask &= (lineitem_orders >= 0) & orders_mask[lineitem_orders]
    lineitem_mask &= (lineitem_supplier >= 0) & supplier_mask[lineitem_supplier]
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    supplier_rows = lineitem_supplier[lineitem_rows]
    orders_rows = lineitem_orders[lineitem_rows]
    n1_rows = supplier_n1[supplier_rows]
    customer_rows = orders_customer[orders_rows]
    n2_rows = customer_n2[customer_rows]
    l_discount = l_discount[lineitem_rows]
    l_extendedprice = l_extendedprice[lineitem_rows]
    l_shipdate = l_shipdate[lineitem_rows]
    n1_n_name = n1_n_name[n1_rows]
    n2_n_name = n2_n_name[n2_rows]
    # Conditions across tables, on the joined rows.
    keep = torch.nonzero(
        ((n1_n_name == nation1) | (n2_n_name == nation1)) & ((n1_n_name == nation2) | (n2_n_name == nation2))
    ).squeeze(1)
    l_discount = l_discount[keep]
    l_extendedprice = l_extendedprice[keep]
    l_shipdate = l_shipdate[keep]
    n1_n_name = n1_n_name[keep]
    n2_n_name = n2_n_name[keep]
    customer_rows = customer_rows[keep]
    lineitem_rows = lineitem_rows[keep]
    n1_rows = n1_rows[keep]
    n2_rows = n2_rows[keep]
    orders_rows = orders_rows[keep]
    supplier_rows = supplier_rows[keep]
    key2 = ops.year(l_shipdate)
    key2 = key2 - key2.min()
    # GROUP BY n1_n_name, n2_n_name, ops.year(l_shipdate): exact keys, group ids by sorting.
    _, ids = ops.group(
        ops.pack([n1_n_name, n2_n_name, key2], [n_name_size, n_name_size, int(key2.max()) + 1])
    )
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    revenue = ops.group_sum(l_extendedprice * (1 - l_discount), ids, groups)
    # The result columns.
    supp_nation = n1_n_name[first].long()
    cust_nation = n2_n_name[first].long()
    l_year = ops.year(l_shipdate[first])
    order = ops.order([(supp_nation, False), (cust_nation, False), (l_year, False)])
    supp_nation = supp_nation[order]
    cust_nation = cust_nation[order]
    l_year = l_year[order]
    revenue = revenue[order]
    return (supp_nation, cust_nation, l_year, revenue)


def run_query(tables, nation1: str = "FRANCE", nation2: str = "GERMANY") -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    nation = tables["nation"]
    supplier = tables["supplier"]
    orders = tables["orders"]
    customer = tables["customer"]
    result = _query_core(
        l_shipdate=lineitem["l_shipdate"],
        l_suppkey=lineitem["l_suppkey"],
        l_orderkey=lineitem["l_orderkey"],
        l_discount=lineitem["l_discount"],
        l_extendedprice=lineitem["l_extendedprice"],
        n1_n_name=nation["n_name"],
        n2_n_name=nation["n_name"],
        n1_n_nationkey=nation["n_nationkey"],
        n2_n_nationkey=nation["n_nationkey"],
        s_suppkey=supplier["s_suppkey"],
        s_nationkey=supplier["s_nationkey"],
        o_orderkey=orders["o_orderkey"],
        o_custkey=orders["o_custkey"],
        c_custkey=customer["c_custkey"],
        c_nationkey=customer["c_nationkey"],
        v_1996_12_31=parse_date("1996-12-31"),
        v_1995_01_01=parse_date("1995-01-01"),
        nation1=ops.dictionary_code(nation.dictionary("n_name"), nation1),
        nation2=ops.dictionary_code(nation.dictionary("n_name"), nation2),
        n_name_size=len(nation.dictionary("n_name")),
    )
    return dict(zip(("supp_nation", "cust_nation", "l_year", "revenue"), result, strict=True))
