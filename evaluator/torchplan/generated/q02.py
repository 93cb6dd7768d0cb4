"""TPC-H Q2, Minimum Cost Supplier: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
FROM part, supplier, partsupp, nation, region
WHERE p_partkey = ps_partkey
  AND s_suppkey = ps_suppkey
  AND p_size = 15
  AND p_type LIKE '%BRASS'
  AND s_nationkey = n_nationkey
  AND n_regionkey = r_regionkey
  AND r_name = 'EUROPE'
  AND ps_supplycost = (
      SELECT min(ps_supplycost)
      FROM partsupp, supplier, nation, region
      WHERE p_partkey = ps_partkey
        AND s_suppkey = ps_suppkey
        AND s_nationkey = n_nationkey
        AND n_regionkey = r_regionkey
        AND r_name = 'EUROPE')
ORDER BY s_acctbal DESC, n_name, s_name, p_partkey
LIMIT 100
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "region": ("r_name", "r_regionkey"),
    "supplier": ("s_suppkey", "s_nationkey", "s_acctbal", "s_name"),
    "partsupp": ("ps_suppkey", "ps_partkey", "ps_supplycost"),
    "nation": ("n_nationkey", "n_regionkey", "n_name"),
    "part": ("p_size", "p_type", "p_partkey", "p_mfgr"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {
    "s_name": ("supplier", "s_name"),
    "n_name": ("nation", "n_name"),
    "p_mfgr": ("part", "p_mfgr"),
    "s_address": ("supplier", "s_address"),
    "s_phone": ("supplier", "s_phone"),
    "s_comment": ("supplier", "s_comment"),
}


def _sub0(
    r_name: torch.Tensor,
    s_suppkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    n_nationkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    r_regionkey: torch.Tensor,
    n_regionkey: torch.Tensor,
    ps_partkey: torch.Tensor,
    ps_supplycost: torch.Tensor,
    *,
    region: int,
) -> tuple[torch.Tensor, ...]:
    """A grouped subquery: one row per ps_partkey."""
    # Filters, each on its own table's rows.
    region_mask = r_name == region
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    partsupp_supplier = ops.lookup(ops.key_index(s_suppkey), ps_suppkey)
    supplier_nation = ops.lookup(ops.key_index(n_nationkey), s_nationkey)
    nation_region = ops.lookup(ops.key_index(r_regionkey), n_regionkey)
    nation_mask = (nation_region >= 0) & region_mask[nation_region]
    supplier_mask = (supplier_nation >= 0) & nation_mask[supplier_nation]
    partsupp_mask = (partsupp_supplier >= 0) & supplier_mask[partsupp_supplier]
    # Late materialization: the surviving rows, then only the columns still needed.
    partsupp_rows = torch.nonzero(partsupp_mask).squeeze(1)
    ps_partkey = ps_partkey[partsupp_rows]
    ps_supplycost = ps_supplycost[partsupp_rows]
    # GROUP BY ps_partkey: exact keys, group ids by sorting.
    _, ids = ops.group(ps_partkey)
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    agg0 = ops.group_min(ps_supplycost, ids, groups)
    # The result columns.
    ps_partkey = ps_partkey[first]
    return (agg0, ps_partkey)


def _query_core(
    r_name: torch.Tensor,
    r_regionkey: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    s_acctbal: torch.Tensor,
    s_name: torch.Tensor,
    ps_suppkey: torch.Tensor,
    ps_partkey: torch.Tensor,
    ps_supplycost: torch.Tensor,
    n_nationkey: torch.Tensor,
    n_regionkey: torch.Tensor,
    n_name: torch.Tensor,
    p_size: torch.Tensor,
    p_type: torch.Tensor,
    p_partkey: torch.Tensor,
    p_mfgr: torch.Tensor,
    *,
    region: int,
    size: int,
    p_type_like_template0: torch.Tensor,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Subquery sub0: grouped by ps_partkey, one row per key.
    (
        sub0_agg0,
        sub0_ps_partkey,
    ) = _sub0(
        r_name,
        s_suppkey,
        ps_suppkey,
        n_nationkey,
        s_nationkey,
        r_regionkey,
        n_regionkey,
        ps_partkey,
        ps_supplycost,
        region=region,
    )
    # Filters, each on its own table's rows.
    part_mask = (p_size == size) & p_type_like_template0[p_type]
    region_mask = r_name == region
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    partsupp_part = ops.lookup(ops.key_index(p_partkey), ps_partkey)
    partsupp_supplier = ops.lookup(ops.key_index(s_suppkey), ps_suppkey)
    part_sub0 = ops.lookup(ops.key_index(sub0_ps_partkey), p_partkey)
    supplier_nation = ops.lookup(ops.key_index(n_nationkey), s_nationkey)
    nation_region = ops.lookup(ops.key_index(r_regionkey), n_regionkey)
    nation_mask = (nation_region >= 0) & region_mask[nation_region]
    supplier_mask = (supplier_nation >= 0) & nation_mask[supplier_nation]
    part_mask &= part_sub0 >= 0
    partsupp_mask = (partsupp_supplier >= 0) & supplier_mask[partsupp_supplier]
    partsupp_mask &= (partsupp_part >= 0) & part_mask[partsupp_part]
    # Late materialization: the surviving rows, then only the columns still needed.
    partsupp_rows = torch.nonzero(partsupp_mask).squeeze(1)
    part_rows = partsupp_part[partsupp_rows]
    supplier_rows = partsupp_supplier[partsupp_rows]
    sub0_rows = part_sub0[part_rows]
    nation_rows = supplier_nation[supplier_rows]
    ps_supplycost = ps_supplycost[partsupp_rows]
    n_name = n_name[nation_rows]
    p_mfgr = p_mfgr[part_rows]
    p_partkey = p_partkey[part_rows]
    sub0_agg0 = sub0_agg0[sub0_rows]
    s_acctbal = s_acctbal[supplier_rows]
    # Conditions across tables, on the joined rows.
    keep = torch.nonzero(sub0_agg0 == ps_supplycost).squeeze(1)
    n_name = n_name[keep]
    p_mfgr = p_mfgr[keep]
    p_partkey = p_partkey[keep]
    ps_supplycost = ps_supplycost[keep]
    sub0_agg0 = sub0_agg0[keep]
    s_acctbal = s_acctbal[keep]
    nation_rows = nation_rows[keep]
    part_rows = part_rows[keep]
    partsupp_rows = partsupp_rows[keep]
    sub0_rows = sub0_rows[keep]
    supplier_rows = supplier_rows[keep]
    sort_text2 = s_name[supplier_rows]  # ORDER BY text
    # The result columns.
    s_name = supplier_rows
    n_name = n_name.long()
    p_mfgr = p_mfgr.long()
    s_address = supplier_rows
    s_phone = supplier_rows
    s_comment = supplier_rows
    order = ops.order(
        [
            (s_acctbal, True),
            (n_name, False),
            *ops.text_order_keys(sort_text2, descending=False),
            (p_partkey, False),
        ],
        limit=100,
    )
    s_acctbal = s_acctbal[order]
    s_name = s_name[order]
    n_name = n_name[order]
    p_partkey = p_partkey[order]
    p_mfgr = p_mfgr[order]
    s_address = s_address[order]
    s_phone = s_phone[order]
    s_comment = s_comment[order]
    return (s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment)


def run_query(tables, size: int = 15, type: str = "BRASS", region: str = "EUROPE") -> dict[str, torch.Tensor]:
    region_table = tables["region"]
    supplier = tables["supplier"]
    partsupp = tables["partsupp"]
    nation = tables["nation"]
    part = tables["part"]
    result = _query_core(
        r_name=region_table["r_name"],
        r_regionkey=region_table["r_regionkey"],
        s_suppkey=supplier["s_suppkey"],
        s_nationkey=supplier["s_nationkey"],
        s_acctbal=supplier["s_acctbal"],
        s_name=supplier["s_name"],
        ps_suppkey=partsupp["ps_suppkey"],
        ps_partkey=partsupp["ps_partkey"],
        ps_supplycost=partsupp["ps_supplycost"],
        n_nationkey=nation["n_nationkey"],
        n_regionkey=nation["n_regionkey"],
        n_name=nation["n_name"],
        p_size=part["p_size"],
        p_type=part["p_type"],
        p_partkey=part["p_partkey"],
        p_mfgr=part["p_mfgr"],
        region=ops.dictionary_code(region_table.dictionary("r_name"), region),
        size=size,
        p_type_like_template0=ops.dictionary_mask(
            part.dictionary("p_type"), ops.sql_like(f"%{type}"), part["p_type"].device
        ),
    )
    return dict(
        zip(
            ("s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone", "s_comment"),
            result,
            strict=True,
        )
    )
