"""TPC-H Q9, Product Type Profit Measure: a TorchPlan.

SELECT nation, o_year, sum(amount) AS sum_profit
FROM (SELECT n_name AS nation, extract(year FROM o_orderdate) AS o_year,
             l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity AS amount
      FROM part, supplier, lineitem, partsupp, orders, nation
      WHERE s_suppkey = l_suppkey
        AND ps_suppkey = l_suppkey
        AND ps_partkey = l_partkey
        AND p_partkey = l_partkey
        AND o_orderkey = l_orderkey
        AND s_nationkey = n_nationkey
        AND p_name LIKE '%:color%') AS profit
GROUP BY nation, o_year
ORDER BY nation, o_year DESC

LIKE runs on the part names' byte matrix; the lineitem rows of matching parts (about 1 in 18) are
compacted first. The composite (partkey, suppkey) join with partsupp packs both keys into one int64 and
binary-searches the sorted keys of the matching parts' partsupp rows. The group key is dense: nation
code x year, numbered so that ascending ids are the ORDER BY.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import date_to_days

COLUMNS = {
    "part": ("p_partkey", "p_name"),
    "supplier": ("s_suppkey", "s_nationkey"),
    "lineitem": ("l_partkey", "l_suppkey", "l_orderkey", "l_extendedprice", "l_discount", "l_quantity"),
    "partsupp": ("ps_partkey", "ps_suppkey", "ps_supplycost"),
    "orders": ("o_orderkey", "o_orderdate"),
    "nation": ("n_nationkey", "n_name"),
}

# extract(year ...) by bucketing against the first days of these years: any date TPC-H can hold.
FIRST_YEAR, LAST_YEAR = 1900, 2199
# Copies of the sum array that rows are spread over, so float64 atomics do not pile onto a few groups.
REPLICAS = 64


def _query_core(
    p_partkey: torch.Tensor,
    p_name: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    l_partkey: torch.Tensor,
    l_suppkey: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_discount: torch.Tensor,
    l_quantity: torch.Tensor,
    ps_partkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    ps_supplycost: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_orderdate: torch.Tensor,
    n_nationkey: torch.Tensor,
    n_name: torch.Tensor,
    color: str,
    year_starts: torch.Tensor,
    nation_keys: int,
    nation_names: int,
    supplier_keys: int,
    part_keys: int,
    order_keys: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(nation code, o_year, sum_profit) per group with rows, in ORDER BY order.

    `year_starts`: int32 first days of FIRST_YEAR..LAST_YEAR + 1; `nation_names`: the n_name dictionary size.
    """
    device = l_orderkey.device
    part_ok = torch.zeros(part_keys, dtype=torch.bool, device=device)
    part_ok[p_partkey] = ops.text_contains(p_name, color)

    lines = part_ok[l_partkey].nonzero().squeeze(1)
    partkey, suppkey = l_partkey[lines], l_suppkey[lines]

    # Composite join on (partkey, suppkey): packed keys of the matching parts' partsupp rows, sorted.
    supply = part_ok[ps_partkey].nonzero().squeeze(1)
    widths = [part_keys, supplier_keys]
    supply_keys, by_key = torch.sort(ops.pack([ps_partkey[supply], ps_suppkey[supply]], widths))
    # A sentinel above every key: a search never runs off the end, and a missing pair is no match.
    sentinel = torch.full((1,), torch.iinfo(torch.int64).max, dtype=torch.int64, device=device)
    supply_keys = torch.cat([supply_keys, sentinel])
    supply_cost = torch.cat([ps_supplycost[supply][by_key], ps_supplycost.new_zeros(1)])
    line_keys = ops.pack([partkey, suppkey], widths)
    at = torch.searchsorted(supply_keys, line_keys)
    matched, cost = supply_keys[at] == line_keys, supply_cost[at]

    amount = l_extendedprice[lines] * (1 - l_discount[lines]) - cost * l_quantity[lines]

    order_date = torch.zeros(order_keys, dtype=o_orderdate.dtype, device=device)
    order_date[o_orderkey] = o_orderdate
    years = year_starts.numel() - 1
    year = torch.bucketize(order_date[l_orderkey[lines]], year_starts, right=True) - 1

    nation_name = torch.full((nation_keys,), -1, dtype=torch.int64, device=device)
    nation_name[n_nationkey] = n_name.long()
    supplier_name = torch.full((supplier_keys,), -1, dtype=torch.int64, device=device)
    supplier_name[s_suppkey] = nation_name[s_nationkey]
    name = supplier_name[suppkey]

    # Ascending ids are nation ascending, year descending.
    groups = nation_names * years
    joined = matched & (name >= 0) & (year >= 0) & (year < years)
    ids = torch.where(joined, name * years + (years - 1 - year), groups)
    spread = torch.arange(ids.numel(), device=device) % REPLICAS * (groups + 1) + ids
    sums = torch.zeros(REPLICAS * (groups + 1), dtype=torch.float64, device=device)
    sums = sums.index_add_(0, spread, amount).view(REPLICAS, groups + 1)[:, :groups].sum(0)
    present = (torch.bincount(ids, minlength=groups + 1)[:groups] > 0).nonzero().squeeze(1)
    nation = present // years
    o_year = FIRST_YEAR + years - 1 - present % years
    return nation, o_year, sums[present]


def run_query(tables, color: str = "green"):
    t = tables
    year_starts = torch.tensor(
        [date_to_days(y, 1, 1) for y in range(FIRST_YEAR, LAST_YEAR + 2)],
        dtype=torch.int32,
        device=t["lineitem"]["l_orderkey"].device,
    )
    nation, o_year, sum_profit = _query_core(
        t["part"]["p_partkey"],
        t["part"]["p_name"],
        t["supplier"]["s_suppkey"],
        t["supplier"]["s_nationkey"],
        t["lineitem"]["l_partkey"],
        t["lineitem"]["l_suppkey"],
        t["lineitem"]["l_orderkey"],
        t["lineitem"]["l_extendedprice"],
        t["lineitem"]["l_discount"],
        t["lineitem"]["l_quantity"],
        t["partsupp"]["ps_partkey"],
        t["partsupp"]["ps_suppkey"],
        t["partsupp"]["ps_supplycost"],
        t["orders"]["o_orderkey"],
        t["orders"]["o_orderdate"],
        t["nation"]["n_nationkey"],
        t["nation"]["n_name"],
        color=color,
        year_starts=year_starts,
        nation_keys=t["nation"].rows,
        nation_names=len(t["nation"].dictionary("n_name")),
        # Keys are dense from 1, except dbgen's sparse order keys (mk_sparse): at most 4 x the order count.
        supplier_keys=t["supplier"].rows + 1,
        part_keys=t["part"].rows + 1,
        order_keys=4 * t["orders"].rows + 1,
    )
    return {"nation": nation, "o_year": o_year, "sum_profit": sum_profit}
