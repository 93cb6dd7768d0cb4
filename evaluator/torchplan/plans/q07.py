"""TPC-H Q7, Volume Shipping: a TorchPlan.

SELECT supp_nation, cust_nation, l_year, sum(volume) AS revenue
FROM (SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation,
             extract(year FROM l_shipdate) AS l_year, l_extendedprice * (1 - l_discount) AS volume
      FROM supplier, lineitem, orders, customer, nation n1, nation n2
      WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey
        AND s_nationkey = n1.n_nationkey AND c_nationkey = n2.n_nationkey
        AND ((n1.n_name = ':nation1' AND n2.n_name = ':nation2')
          OR (n1.n_name = ':nation2' AND n2.n_name = ':nation1'))
        AND l_shipdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31') AS shipping
GROUP BY supp_nation, cust_nation, l_year
ORDER BY supp_nation, cust_nation, l_year

Each nation gets a side: 0 for :nation1, 1 for :nation2, -1 for the others; suppliers, customers and
orders carry their side in int8 direct-address tables over their keys. A lineitem row qualifies when its
supplier's and its order's sides are both set and differ, so the group is (supplier side, year): four
dense groups, reduced after compacting the few qualifying rows.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import date_to_days

COLUMNS = {
    "nation": ("n_nationkey", "n_name"),
    "supplier": ("s_suppkey", "s_nationkey"),
    "customer": ("c_custkey", "c_nationkey"),
    "orders": ("o_orderkey", "o_custkey"),
    "lineitem": ("l_orderkey", "l_suppkey", "l_extendedprice", "l_discount", "l_shipdate"),
}

FIRST_YEAR = 1995  # the BETWEEN spans 1995 and 1996


def _query_core(
    n_nationkey: torch.Tensor,
    n_name: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    c_custkey: torch.Tensor,
    c_nationkey: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_suppkey: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_discount: torch.Tensor,
    l_shipdate: torch.Tensor,
    nation1: int,
    nation2: int,
    date_lo: int,
    date_hi: int,
    second_year: int,
    nation_keys: int,
    supplier_keys: int,
    customer_keys: int,
    order_keys: int,
) -> tuple[torch.Tensor, ...]:
    """supp_nation code, cust_nation code, l_year, revenue per group with rows, in ORDER BY order.

    `second_year` is the first day of 1996; `*_keys` bound each table's key values (max key + 1).
    """
    device = l_orderkey.device
    side = torch.full((nation_keys,), -1, dtype=torch.int8, device=device)
    side[n_nationkey] = torch.where(n_name == nation1, 0, torch.where(n_name == nation2, 1, -1)).to(
        torch.int8
    )
    supplier_side = torch.full((supplier_keys,), -1, dtype=torch.int8, device=device)
    supplier_side[s_suppkey] = side[s_nationkey]
    customer_side = torch.full((customer_keys,), -1, dtype=torch.int8, device=device)
    customer_side[c_custkey] = side[c_nationkey]
    order_side = torch.full((order_keys,), -1, dtype=torch.int8, device=device)
    order_side[o_orderkey] = customer_side[o_custkey]
    line_side = supplier_side[l_suppkey]
    other_side = order_side[l_orderkey]
    qualifies = (
        (line_side >= 0)
        & (other_side >= 0)
        & (line_side != other_side)
        & (l_shipdate >= date_lo)
        & (l_shipdate <= date_hi)
    )
    lines = torch.nonzero(qualifies).squeeze(1)
    ids = line_side[lines].long() * 2 + (l_shipdate[lines] >= second_year).long()
    revenue = ops.group_sum(l_extendedprice[lines] * (1 - l_discount[lines]), ids, 4)
    present = torch.nonzero(ops.group_count(ids, 4)).squeeze(1)
    names = torch.tensor([nation1, nation2], dtype=torch.int64, device=device)
    supp_nation = names[present // 2]
    cust_nation = names[1 - present // 2]
    year = FIRST_YEAR + present % 2
    ordered = ops.order([(supp_nation, False), (cust_nation, False), (year, False)])
    return supp_nation[ordered], cust_nation[ordered], year[ordered], revenue[present][ordered]


def run_query(tables, nation1: str = "FRANCE", nation2: str = "GERMANY"):
    names = tables["nation"].dictionary("n_name")
    result = _query_core(
        tables["nation"]["n_nationkey"],
        tables["nation"]["n_name"],
        tables["supplier"]["s_suppkey"],
        tables["supplier"]["s_nationkey"],
        tables["customer"]["c_custkey"],
        tables["customer"]["c_nationkey"],
        tables["orders"]["o_orderkey"],
        tables["orders"]["o_custkey"],
        tables["lineitem"]["l_orderkey"],
        tables["lineitem"]["l_suppkey"],
        tables["lineitem"]["l_extendedprice"],
        tables["lineitem"]["l_discount"],
        tables["lineitem"]["l_shipdate"],
        nation1=ops.dictionary_code(names, nation1),
        nation2=ops.dictionary_code(names, nation2),
        date_lo=date_to_days(FIRST_YEAR, 1, 1),
        date_hi=date_to_days(FIRST_YEAR + 1, 12, 31),
        second_year=date_to_days(FIRST_YEAR + 1, 1, 1),
        # TPC-H keys are dense (nation from 0, the others from 1), except orderkey: dbgen uses 8 of
        # every 32 values, so its max is at most 4 x rows.
        nation_keys=tables["nation"].rows,
        supplier_keys=tables["supplier"].rows + 1,
        customer_keys=tables["customer"].rows + 1,
        order_keys=4 * tables["orders"].rows + 1,
    )
    return dict(zip(("supp_nation", "cust_nation", "l_year", "revenue"), result, strict=True))
