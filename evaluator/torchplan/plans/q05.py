"""TPC-H Q5, Local Supplier Volume: a TorchPlan.

SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM customer, orders, lineitem, supplier, nation, region
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey
  AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey
  AND r_name = ':region'
  AND o_orderdate >= DATE ':date' AND o_orderdate < DATE ':date' + INTERVAL '1' YEAR
GROUP BY n_name
ORDER BY revenue DESC

Every dimension collapses to a small direct-address table over its key: the supplier's nation when it
lies in the region, the customer's nation of each order in the year (int8, -1 for none). One pass over
lineitem gathers both and keeps the rows where they are equal; only those are compacted and summed per
nation.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import date_to_days

COLUMNS = {
    "region": ("r_regionkey", "r_name"),
    "nation": ("n_nationkey", "n_name", "n_regionkey"),
    "supplier": ("s_suppkey", "s_nationkey"),
    "customer": ("c_custkey", "c_nationkey"),
    "orders": ("o_orderkey", "o_custkey", "o_orderdate"),
    "lineitem": ("l_orderkey", "l_suppkey", "l_extendedprice", "l_discount"),
}


def _query_core(
    r_regionkey: torch.Tensor,
    r_name: torch.Tensor,
    n_nationkey: torch.Tensor,
    n_name: torch.Tensor,
    n_regionkey: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    c_custkey: torch.Tensor,
    c_nationkey: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    o_orderdate: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_suppkey: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_discount: torch.Tensor,
    region: int,
    date_lo: int,
    date_hi: int,
    region_keys: int,
    nation_keys: int,
    supplier_keys: int,
    customer_keys: int,
    order_keys: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(n_name code, revenue) per nation with revenue, by revenue descending.

    `*_keys` bound each table's key values (max key + 1); nation keys must fit in int8.
    """
    device = l_orderkey.device
    region_ok = torch.zeros(region_keys, dtype=torch.bool, device=device)
    region_ok[r_regionkey] = r_name == region
    nation_ok = torch.zeros(nation_keys, dtype=torch.bool, device=device)
    nation_ok[n_nationkey] = region_ok[n_regionkey]
    supplier_nation = torch.full((supplier_keys,), -1, dtype=torch.int8, device=device)
    supplier_nation[s_suppkey] = torch.where(nation_ok[s_nationkey], s_nationkey, -1).to(torch.int8)
    customer_nation = torch.full((customer_keys,), -1, dtype=torch.int8, device=device)
    customer_nation[c_custkey] = c_nationkey.to(torch.int8)
    in_year = (o_orderdate >= date_lo) & (o_orderdate < date_hi)
    order_nation = torch.full((order_keys,), -1, dtype=torch.int8, device=device)
    order_nation[o_orderkey] = torch.where(in_year, customer_nation[o_custkey], -1)
    line_nation = supplier_nation[l_suppkey]
    lines = torch.nonzero((line_nation >= 0) & (line_nation == order_nation[l_orderkey])).squeeze(1)
    nation = line_nation[lines].long()
    revenue = ops.group_sum(l_extendedprice[lines] * (1 - l_discount[lines]), nation, nation_keys)
    present = torch.nonzero(ops.group_count(nation, nation_keys)).squeeze(1)
    present = present[torch.sort(revenue[present], descending=True, stable=True).indices]
    return n_name[ops.key_index(n_nationkey, nation_keys)[present]], revenue[present]


def run_query(tables, region: str = "ASIA", date: str = "1994-01-01"):
    year, month, day = (int(part) for part in date.split("-"))
    name, revenue = _query_core(
        tables["region"]["r_regionkey"],
        tables["region"]["r_name"],
        tables["nation"]["n_nationkey"],
        tables["nation"]["n_name"],
        tables["nation"]["n_regionkey"],
        tables["supplier"]["s_suppkey"],
        tables["supplier"]["s_nationkey"],
        tables["customer"]["c_custkey"],
        tables["customer"]["c_nationkey"],
        tables["orders"]["o_orderkey"],
        tables["orders"]["o_custkey"],
        tables["orders"]["o_orderdate"],
        tables["lineitem"]["l_orderkey"],
        tables["lineitem"]["l_suppkey"],
        tables["lineitem"]["l_extendedprice"],
        tables["lineitem"]["l_discount"],
        region=ops.dictionary_code(tables["region"].dictionary("r_name"), region),
        date_lo=date_to_days(year, month, day),
        date_hi=date_to_days(year + 1, month, day),
        # TPC-H keys are dense (nation and region from 0, the others from 1), except orderkey: dbgen
        # uses 8 of every 32 values, so its max is at most 4 x rows.
        region_keys=tables["region"].rows,
        nation_keys=tables["nation"].rows,
        supplier_keys=tables["supplier"].rows + 1,
        customer_keys=tables["customer"].rows + 1,
        order_keys=4 * tables["orders"].rows + 1,
    )
    return {"n_name": name, "revenue": revenue}
