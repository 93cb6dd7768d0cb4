"""TPC-H Q2, Minimum Cost Supplier: a TorchPlan.

SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
FROM part, supplier, partsupp, nation, region
WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey
  AND p_size = :size AND p_type LIKE '%:type'
  AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = ':region'
  AND ps_supplycost = (
      SELECT min(ps_supplycost)
      FROM partsupp, supplier, nation, region
      WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey
        AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = ':region')
ORDER BY s_acctbal DESC, n_name, s_name, p_partkey
LIMIT 100

The correlated MIN is grouped by its correlation key: the minimum cost per part over the partsupp rows
whose supplier is in the region. The outer query needs it only for the parts that pass the part filter,
and those rows are exactly the subquery's rows of those parts, so one compaction of partsupp (part
passes, supplier in region) feeds both: a per-part minimum, then the rows that equal it.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "region": ("r_regionkey", "r_name"),
    "nation": ("n_nationkey", "n_name", "n_regionkey"),
    "supplier": ("s_suppkey", "s_name", "s_address", "s_nationkey", "s_phone", "s_acctbal", "s_comment"),
    "part": ("p_partkey", "p_mfgr", "p_type", "p_size"),
    "partsupp": ("ps_partkey", "ps_suppkey", "ps_supplycost"),
}

LIMIT = 100


def _query_core(
    r_regionkey: torch.Tensor,
    r_name: torch.Tensor,
    n_nationkey: torch.Tensor,
    n_name: torch.Tensor,
    n_regionkey: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_name: torch.Tensor,
    s_nationkey: torch.Tensor,
    s_acctbal: torch.Tensor,
    p_partkey: torch.Tensor,
    p_mfgr: torch.Tensor,
    p_type: torch.Tensor,
    p_size: torch.Tensor,
    ps_partkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    ps_supplycost: torch.Tensor,
    type_matches: torch.Tensor,
    region: int,
    size: int,
    region_keys: int,
    nation_keys: int,
    supplier_keys: int,
    part_keys: int,
) -> tuple[torch.Tensor, ...]:
    """s_acctbal, supplier row, n_name code, p_partkey, p_mfgr code of the first 100 rows in order.

    `type_matches[code]` is the LIKE on the p_type dictionary; `*_keys` bound each table's key values.
    The supplier row stands for s_name, s_address, s_phone and s_comment.
    """
    device = ps_partkey.device
    region_ok = torch.zeros(region_keys, dtype=torch.bool, device=device)
    region_ok[r_regionkey] = r_name == region
    nation_ok = torch.zeros(nation_keys, dtype=torch.bool, device=device)
    nation_ok[n_nationkey] = region_ok[n_regionkey]
    supplier_ok = torch.zeros(supplier_keys, dtype=torch.bool, device=device)
    supplier_ok[s_suppkey] = nation_ok[s_nationkey]
    part_ok = torch.zeros(part_keys, dtype=torch.bool, device=device)
    part_ok[p_partkey] = (p_size == size) & type_matches[p_type]
    rows = torch.nonzero(part_ok[ps_partkey] & supplier_ok[ps_suppkey]).squeeze(1)
    partkey, cost = ps_partkey[rows], ps_supplycost[rows]
    cheapest = ops.group_min(cost, partkey, part_keys)
    rows = rows[cost == cheapest[partkey]]
    supplier = ops.key_index(s_suppkey, supplier_keys)[ps_suppkey[rows]]
    nation = ops.key_index(n_nationkey, nation_keys)[s_nationkey[supplier]]
    part = ops.key_index(p_partkey, part_keys)[ps_partkey[rows]]
    acctbal, name, partkey = s_acctbal[supplier], n_name[nation], p_partkey[part]
    keys = [(acctbal, True), (name, False), *ops.text_order_keys(s_name[supplier]), (partkey, False)]
    top = ops.order(keys, limit=LIMIT)
    return acctbal[top], supplier[top], name[top], partkey[top], p_mfgr[part[top]]


def run_query(tables, size: int = 15, type: str = "BRASS", region: str = "EUROPE"):
    supplier, part = tables["supplier"], tables["part"]
    acctbal, supplier_row, n_name, p_partkey, p_mfgr = _query_core(
        tables["region"]["r_regionkey"],
        tables["region"]["r_name"],
        tables["nation"]["n_nationkey"],
        tables["nation"]["n_name"],
        tables["nation"]["n_regionkey"],
        supplier["s_suppkey"],
        supplier["s_name"],
        supplier["s_nationkey"],
        supplier["s_acctbal"],
        part["p_partkey"],
        part["p_mfgr"],
        part["p_type"],
        part["p_size"],
        tables["partsupp"]["ps_partkey"],
        tables["partsupp"]["ps_suppkey"],
        tables["partsupp"]["ps_supplycost"],
        type_matches=ops.dictionary_mask(
            part.dictionary("p_type"), lambda t: t.endswith(type), part["p_type"].device
        ),
        region=ops.dictionary_code(tables["region"].dictionary("r_name"), region),
        size=size,
        # TPC-H keys are dense: nation and region from 0, supplier and part from 1.
        region_keys=tables["region"].rows,
        nation_keys=tables["nation"].rows,
        supplier_keys=supplier.rows + 1,
        part_keys=part.rows + 1,
    )
    return {
        "s_acctbal": acctbal,
        "s_name": supplier_row,
        "n_name": n_name,
        "p_partkey": p_partkey,
        "p_mfgr": p_mfgr,
        "s_address": supplier_row,
        "s_phone": supplier_row,
        "s_comment": supplier_row,
    }
