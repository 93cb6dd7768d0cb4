"""TPC-H Q14, Promotion Effect: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT
    100.00 * sum(
        CASE WHEN p_type LIKE 'PROMO%' THEN
            l_extendedprice * (1 - l_discount)
        ELSE
            0
        END) / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
FROM lineitem, part
WHERE l_partkey = p_partkey
  AND l_shipdate >= DATE '1995-09-01'
  AND l_shipdate < DATE '1995-09-01' + INTERVAL 1 MONTH
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import add_interval, parse_date

COLUMNS = {
    "lineitem": ("l_shipdate", "l_partkey", "l_discount", "l_extendedprice"),
    "part": ("p_partkey", "p_type"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {}


def _query_core(
    l_shipdate: torch.Tensor,
    l_partkey: torch.Tensor,
    l_discount: torch.Tensor,
    l_extendedprice: torch.Tensor,
    p_partkey: torch.Tensor,
    p_type: torch.Tensor,
    *,
    date_plus_1_month: int,
    date: int,
    p_type_like_promo: torch.Tensor,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    lineitem_mask = (l_shipdate < date_plus_1_month) & (l_shipdate >= date)
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    lineitem_part = ops.lookup(ops.key_index(p_partkey), l_partkey)
    lineitem_mask &= lineitem_part >= 0
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    part_rows = lineitem_part[lineitem_rows]
    l_discount = l_discount[lineitem_rows]
    l_extendedprice = l_extendedprice[lineitem_rows]
    p_type = p_type[part_rows]
    # Aggregates over the joined rows.
    # Over no rows SUM, AVG, MIN and MAX are SQL's NULL: NaN (docs/data-format.md).
    sql_null = torch.full((1,), torch.nan, dtype=torch.float64, device=lineitem_rows.device)
    agg0 = (
        (torch.where(p_type_like_promo[p_type], l_extendedprice * (1 - l_discount), 0.0)).sum().reshape(1)
        if lineitem_rows.numel()
        else sql_null
    )
    agg1 = (l_extendedprice * (1 - l_discount)).sum().reshape(1) if lineitem_rows.numel() else sql_null
    # The result columns.
    promo_revenue = 100.0 * agg0 / agg1
    return (promo_revenue,)


def run_query(tables, date: str = "1995-09-01") -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    part = tables["part"]
    result = _query_core(
        l_shipdate=lineitem["l_shipdate"],
        l_partkey=lineitem["l_partkey"],
        l_discount=lineitem["l_discount"],
        l_extendedprice=lineitem["l_extendedprice"],
        p_partkey=part["p_partkey"],
        p_type=part["p_type"],
        date_plus_1_month=add_interval(parse_date(date), 1, "month"),
        date=parse_date(date),
        p_type_like_promo=ops.dictionary_mask(
            part.dictionary("p_type"), ops.sql_like("PROMO%"), part["p_type"].device
        ),
    )
    return dict(zip(("promo_revenue",), result, strict=True))
