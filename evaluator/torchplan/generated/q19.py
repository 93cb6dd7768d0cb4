"""TPC-H Q19, Discounted Revenue: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM lineitem, part
WHERE (p_partkey = l_partkey
       AND p_brand = 'Brand#12'
       AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
       AND l_quantity >= 1
       AND l_quantity <= 1 + 10
       AND p_size BETWEEN 1 AND 5
       AND l_shipmode IN ('AIR', 'AIR REG')
       AND l_shipinstruct = 'DELIVER IN PERSON')
   OR (p_partkey = l_partkey
       AND p_brand = 'Brand#23'
       AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
       AND l_quantity >= 10
       AND l_quantity <= 10 + 10
       AND p_size BETWEEN 1 AND 10
       AND l_shipmode IN ('AIR', 'AIR REG')
       AND l_shipinstruct = 'DELIVER IN PERSON')
   OR (p_partkey = l_partkey
       AND p_brand = 'Brand#34'
       AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
       AND l_quantity >= 20
       AND l_quantity <= 20 + 10
       AND p_size BETWEEN 1 AND 15
       AND l_shipmode IN ('AIR', 'AIR REG')
       AND l_shipinstruct = 'DELIVER IN PERSON')
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "lineitem": ("l_shipinstruct", "l_shipmode", "l_quantity", "l_partkey", "l_discount", "l_extendedprice"),
    "part": ("p_size", "p_brand", "p_container", "p_partkey"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {}


def _query_core(
    l_shipinstruct: torch.Tensor,
    l_shipmode: torch.Tensor,
    l_quantity: torch.Tensor,
    l_partkey: torch.Tensor,
    l_discount: torch.Tensor,
    l_extendedprice: torch.Tensor,
    p_size: torch.Tensor,
    p_brand: torch.Tensor,
    p_container: torch.Tensor,
    p_partkey: torch.Tensor,
    *,
    deliver_in_person: int,
    l_shipmode_in_list: torch.Tensor,
    quantity1_plus_10: int,
    quantity1: int,
    quantity2_plus_10: int,
    quantity2: int,
    quantity3_plus_10: int,
    quantity3: int,
    brand1: int,
    p_container_in_list: torch.Tensor,
    brand2: int,
    p_container_in_list_2: torch.Tensor,
    brand3: int,
    p_container_in_list_3: torch.Tensor,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    lineitem_mask = (
        (l_shipinstruct == deliver_in_person)
        & l_shipmode_in_list[l_shipmode]
        & (
            (l_quantity <= quantity1_plus_10) & (l_quantity >= quantity1)
            | (l_quantity <= quantity2_plus_10) & (l_quantity >= quantity2)
            | (l_quantity <= quantity3_plus_10) & (l_quantity >= quantity3)
        )
    )
    part_mask = (p_size >= 1) & (
        (p_brand == brand1) & p_container_in_list[p_container] & (p_size <= 5)
        | (p_brand == brand2) & p_container_in_list_2[p_container] & (p_size <= 10)
        | (p_brand == brand3) & p_container_in_list_3[p_container] & (p_size <= 15)
    )
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    lineitem_part = ops.lookup(ops.key_index(p_partkey), l_partkey)
    lineitem_mask &= (lineitem_part >= 0) & part_mask[lineitem_part]
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    part_rows = lineitem_part[lineitem_rows]
    l_discount = l_discount[lineitem_rows]
    l_extendedprice = l_extendedprice[lineitem_rows]
    l_quantity = l_quantity[lineitem_rows]
    p_brand = p_brand[part_rows]
    p_container = p_container[part_rows]
    p_size = p_size[part_rows]
    # Conditions across tables, on the joined rows.
    keep = torch.nonzero(
        (l_quantity <= quantity1_plus_10)
        & (l_quantity >= quantity1)
        & (p_brand == brand1)
        & p_container_in_list[p_container]
        & (p_size <= 5)
        | (l_quantity <= quantity2_plus_10)
        & (l_quantity >= quantity2)
        & (p_brand == brand2)
        & p_container_in_list_2[p_container]
        & (p_size <= 10)
        | (l_quantity <= quantity3_plus_10)
        & (l_quantity >= quantity3)
        & (p_brand == brand3)
        & p_container_in_list_3[p_container]
        & (p_size <= 15)
    ).squeeze(1)
    l_discount = l_discount[keep]
    l_extendedprice = l_extendedprice[keep]
    l_quantity = l_quantity[keep]
    p_brand = p_brand[keep]
    p_container = p_container[keep]
    p_size = p_size[keep]
    lineitem_rows = lineitem_rows[keep]
    part_rows = part_rows[keep]
    # Aggregates over the joined rows.
    # Over no rows SUM, AVG, MIN and MAX are SQL's NULL: NaN (docs/data-format.md).
    sql_null = torch.full((1,), torch.nan, dtype=torch.float64, device=lineitem_rows.device)
    revenue = (l_extendedprice * (1 - l_discount)).sum().reshape(1) if lineitem_rows.numel() else sql_null
    # The result columns.
    return (revenue,)


def run_query(
    tables,
    quantity1: int = 1,
    quantity2: int = 10,
    quantity3: int = 20,
    brand1: str = "Brand#12",
    brand2: str = "Brand#23",
    brand3: str = "Brand#34",
) -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    part = tables["part"]
    result = _query_core(
        l_shipinstruct=lineitem["l_shipinstruct"],
        l_shipmode=lineitem["l_shipmode"],
        l_quantity=lineitem["l_quantity"],
        l_partkey=lineitem["l_partkey"],
        l_discount=lineitem["l_discount"],
        l_extendedprice=lineitem["l_extendedprice"],
        p_size=part["p_size"],
        p_brand=part["p_brand"],
        p_container=part["p_container"],
        p_partkey=part["p_partkey"],
        deliver_in_person=ops.dictionary_code(lineitem.dictionary("l_shipinstruct"), "DELIVER IN PERSON"),
        l_shipmode_in_list=ops.dictionary_mask(
            lineitem.dictionary("l_shipmode"),
            lambda s: s in ("AIR", "AIR REG"),
            lineitem["l_shipmode"].device,
        ),
        quantity1_plus_10=quantity1 + 10,
        quantity1=quantity1,
        quantity2_plus_10=quantity2 + 10,
        quantity2=quantity2,
        quantity3_plus_10=quantity3 + 10,
        quantity3=quantity3,
        brand1=ops.dictionary_code(part.dictionary("p_brand"), brand1),
        p_container_in_list=ops.dictionary_mask(
            part.dictionary("p_container"),
            lambda s: s in ("SM CASE", "SM BOX", "SM PACK", "SM PKG"),
            part["p_container"].device,
        ),
        brand2=ops.dictionary_code(part.dictionary("p_brand"), brand2),
        p_container_in_list_2=ops.dictionary_mask(
            part.dictionary("p_container"),
            lambda s: s in ("MED BAG", "MED BOX", "MED PKG", "MED PACK"),
            part["p_container"].device,
        ),
        brand3=ops.dictionary_code(part.dictionary("p_brand"), brand3),
        p_container_in_list_3=ops.dictionary_mask(
            part.dictionary("p_container"),
            lambda s: s in ("LG CASE", "LG BOX", "LG PACK", "LG PKG"),
            part["p_container"].device,
        ),
    )
    return dict(zip(("revenue",), result, strict=True))
