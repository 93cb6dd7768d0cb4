"""TPC-H Q8, National Market Share: a TorchPlan.

SELECT o_year,
       sum(CASE WHEN nation = ':nation' THEN volume ELSE 0 END) / sum(volume) AS mkt_share
FROM (SELECT extract(year FROM o_orderdate) AS o_year,
             l_extendedprice * (1 - l_discount) AS volume,
             n2.n_name AS nation
      FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region
      WHERE p_partkey = l_partkey
        AND s_suppkey = l_suppkey
        AND l_orderkey = o_orderkey
        AND o_custkey = c_custkey
        AND c_nationkey = n1.n_nationkey
        AND n1.n_regionkey = r_regionkey
        AND r_name = ':region'
        AND s_nationkey = n2.n_nationkey
        AND o_orderdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31'
        AND p_type = ':type') AS all_nations
GROUP BY o_year
ORDER BY o_year

Every dimension collapses to a small per-key table before lineitem is read: a part bitmap (p_type), a
supplier bitmap (its nation is :nation), and per order key the year slot (0: filtered out, 1: 1995,
2: 1996) of orders in range whose customer is in :region. Lineitem rows of matching parts are compacted
first; the four sums (two years x all / :nation) come from those few rows.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import date_to_days

COLUMNS = {
    "part": ("p_partkey", "p_type"),
    "supplier": ("s_suppkey", "s_nationkey"),
    "lineitem": ("l_partkey", "l_suppkey", "l_orderkey", "l_extendedprice", "l_discount"),
    "orders": ("o_orderkey", "o_custkey", "o_orderdate"),
    "customer": ("c_custkey", "c_nationkey"),
    "nation": ("n_nationkey", "n_name", "n_regionkey"),
    "region": ("r_regionkey", "r_name"),
}

YEARS = (1995, 1996)


def _table(keys: torch.Tensor, values: torch.Tensor, space: int) -> torch.Tensor:
    """Direct-address table of a per-row value by key; 0 (False) for keys no row has."""
    table = torch.zeros(space, dtype=values.dtype, device=keys.device)
    table[keys] = values
    return table


def _query_core(
    p_partkey: torch.Tensor,
    p_type: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    l_partkey: torch.Tensor,
    l_suppkey: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_discount: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    o_orderdate: torch.Tensor,
    c_custkey: torch.Tensor,
    c_nationkey: torch.Tensor,
    n_nationkey: torch.Tensor,
    n_name: torch.Tensor,
    n_regionkey: torch.Tensor,
    r_regionkey: torch.Tensor,
    r_name: torch.Tensor,
    nation: int,
    region: int,
    part_type: int,
    date_1995: int,
    date_1996: int,
    date_hi: int,
    region_keys: int,
    nation_keys: int,
    customer_keys: int,
    supplier_keys: int,
    part_keys: int,
    order_keys: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(o_year, mkt_share) of the years with rows, ascending. `*_keys`: direct-address table sizes."""
    region_ok = _table(r_regionkey, r_name == region, region_keys)
    customer_nation_ok = _table(n_nationkey, region_ok[n_regionkey], nation_keys)
    supplier_nation_ok = _table(n_nationkey, n_name == nation, nation_keys)
    customer_ok = _table(c_custkey, customer_nation_ok[c_nationkey], customer_keys)
    supplier_ok = _table(s_suppkey, supplier_nation_ok[s_nationkey], supplier_keys)
    part_ok = _table(p_partkey, p_type == part_type, part_keys)

    # Year slot of each order: 0 when filtered out, else 1 + the index of its year.
    slot = (o_orderdate >= date_1995).to(torch.int8) + (o_orderdate >= date_1996).to(torch.int8)
    slot = torch.where((o_orderdate <= date_hi) & customer_ok[o_custkey], slot, 0)
    order_slot = _table(o_orderkey, slot, order_keys)

    # One part type in 150: compact the lineitem rows of matching parts before touching other columns.
    lines = part_ok[l_partkey].nonzero().squeeze(1)
    line_slot = order_slot[l_orderkey[lines]]
    volume = l_extendedprice[lines] * (1 - l_discount[lines])
    from_nation = supplier_ok[l_suppkey[lines]]
    totals, nation_totals, present = [], [], []
    for i in (1, 2):
        in_year = line_slot == i
        totals.append(torch.where(in_year, volume, 0.0).sum())
        nation_totals.append(torch.where(in_year & from_nation, volume, 0.0).sum())
        present.append(in_year.any())
    # A year exists only when some row reached it: the one data-dependent output size.
    keep = torch.stack(present)
    years = torch.tensor(YEARS, dtype=torch.int64, device=l_orderkey.device)
    return years[keep], (torch.stack(nation_totals) / torch.stack(totals))[keep]


def run_query(tables, nation: str = "BRAZIL", region: str = "AMERICA", type: str = "ECONOMY ANODIZED STEEL"):
    t = tables
    o_year, mkt_share = _query_core(
        t["part"]["p_partkey"],
        t["part"]["p_type"],
        t["supplier"]["s_suppkey"],
        t["supplier"]["s_nationkey"],
        t["lineitem"]["l_partkey"],
        t["lineitem"]["l_suppkey"],
        t["lineitem"]["l_orderkey"],
        t["lineitem"]["l_extendedprice"],
        t["lineitem"]["l_discount"],
        t["orders"]["o_orderkey"],
        t["orders"]["o_custkey"],
        t["orders"]["o_orderdate"],
        t["customer"]["c_custkey"],
        t["customer"]["c_nationkey"],
        t["nation"]["n_nationkey"],
        t["nation"]["n_name"],
        t["nation"]["n_regionkey"],
        t["region"]["r_regionkey"],
        t["region"]["r_name"],
        nation=ops.dictionary_code(t["nation"].dictionary("n_name"), nation),
        region=ops.dictionary_code(t["region"].dictionary("r_name"), region),
        part_type=ops.dictionary_code(t["part"].dictionary("p_type"), type),
        date_1995=date_to_days(1995, 1, 1),
        date_1996=date_to_days(1996, 1, 1),
        date_hi=date_to_days(1996, 12, 31),
        # Keys are dense (nation and region from 0, the others from 1), except dbgen's sparse order keys
        # (mk_sparse), which never exceed 4 x the order count.
        region_keys=t["region"].rows,
        nation_keys=t["nation"].rows,
        customer_keys=t["customer"].rows + 1,
        supplier_keys=t["supplier"].rows + 1,
        part_keys=t["part"].rows + 1,
        order_keys=4 * t["orders"].rows + 1,
    )
    return {"o_year": o_year, "mkt_share": mkt_share}
