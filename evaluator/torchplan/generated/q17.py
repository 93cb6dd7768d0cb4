"""TPC-H Q17, Small-Quantity-Order Revenue: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT sum(l_extendedprice) / 7.0 AS avg_yearly
FROM lineitem, part
WHERE p_partkey = l_partkey
  AND p_brand = 'Brand#23'
  AND p_container = 'MED BOX'
  AND l_quantity < (
        SELECT 0.2 * avg(l_quantity)
        FROM lineitem
        WHERE l_partkey = p_partkey)
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "lineitem": ("l_partkey", "l_quantity", "l_extendedprice"),
    "part": ("p_brand", "p_container", "p_partkey"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {}


def _query_core(
    sub0_lineitem_l_partkey: torch.Tensor,
    sub0_lineitem_l_quantity: torch.Tensor,
    l_partkey: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_quantity: torch.Tensor,
    p_brand: torch.Tensor,
    p_container: torch.Tensor,
    p_partkey: torch.Tensor,
    *,
    brand: int,
    container: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Subquery sub0: lineitem grouped by l_partkey, one row per key (a grouped subquery or view).
    sub0_l_partkey, sub0_l_partkey_ids = ops.group(sub0_lineitem_l_partkey)
    sub0_groups = sub0_l_partkey.numel()
    sub0_agg0 = ops.group_sum(sub0_lineitem_l_quantity, sub0_l_partkey_ids, sub0_groups) / ops.group_count(
        sub0_l_partkey_ids, sub0_groups
    )  # AVG per key
    # Filters, each on its own table's rows.
    part_mask = (p_brand == brand) & (p_container == container)
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    lineitem_part = ops.lookup(ops.key_index(p_partkey), l_partkey)
    part_sub0 = ops.lookup(ops.key_index(sub0_l_partkey), p_partkey)
    part_mask &= part_sub0 >= 0
    lineitem_mask = (lineitem_part >= 0) & part_mask[lineitem_part]
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    part_rows = lineitem_part[lineitem_rows]
    sub0_rows = part_sub0[part_rows]
    l_extendedprice = l_extendedprice[lineitem_rows]
    l_quantity = l_quantity[lineitem_rows]
    sub0_agg0 = sub0_agg0[sub0_rows]
    # Conditions across tables, on the joined rows.
    keep = torch.nonzero(0.2 * sub0_agg0 > l_quantity).squeeze(1)
    l_extendedprice = l_extendedprice[keep]
    l_quantity = l_quantity[keep]
    sub0_agg0 = sub0_agg0[keep]
    lineitem_rows = lineitem_rows[keep]
    part_rows = part_rows[keep]
    sub0_rows = sub0_rows[keep]
    # Aggregates over the joined rows.
    # Over no rows SUM, AVG, MIN and MAX are SQL's NULL: NaN (docs/data-format.md).
    sql_null = torch.full((1,), torch.nan, dtype=torch.float64, device=lineitem_rows.device)
    agg0 = (l_extendedprice).sum().reshape(1) if lineitem_rows.numel() else sql_null
    # The result columns.
    avg_yearly = agg0 / 7.0
    return (avg_yearly,)


def run_query(tables, brand: str = "Brand#23", container: str = "MED BOX") -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    part = tables["part"]
    result = _query_core(
        sub0_lineitem_l_partkey=lineitem["l_partkey"],
        sub0_lineitem_l_quantity=lineitem["l_quantity"],
        l_partkey=lineitem["l_partkey"],
        l_extendedprice=lineitem["l_extendedprice"],
        l_quantity=lineitem["l_quantity"],
        p_brand=part["p_brand"],
        p_container=part["p_container"],
        p_partkey=part["p_partkey"],
        brand=ops.dictionary_code(part.dictionary("p_brand"), brand),
        container=ops.dictionary_code(part.dictionary("p_container"), container),
    )
    return dict(zip(("avg_yearly",), result, strict=True))
