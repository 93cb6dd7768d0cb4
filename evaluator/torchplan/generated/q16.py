"""TPC-H Q16, Parts/Supplier Relationship: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt
FROM partsupp, part
WHERE p_partkey = ps_partkey
  AND p_brand <> 'Brand#45'
  AND p_type NOT LIKE 'MEDIUM POLISHED%'
  AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9)
  AND ps_suppkey NOT IN (
      SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%')
GROUP BY p_brand, p_type, p_size
ORDER BY supplier_cnt DESC, p_brand, p_type, p_size
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "part": ("p_brand", "p_size", "p_type", "p_partkey"),
    "supplier": ("s_comment", "s_suppkey"),
    "partsupp": ("ps_suppkey", "ps_partkey"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {"p_brand": ("part", "p_brand"), "p_type": ("part", "p_type")}


def _query_core(
    p_brand: torch.Tensor,
    p_size: torch.Tensor,
    p_type: torch.Tensor,
    p_partkey: torch.Tensor,
    u_0_supplier_s_comment: torch.Tensor,
    u_0_supplier_s_suppkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    ps_partkey: torch.Tensor,
    *,
    brand: int,
    size1: int,
    size2: int,
    size3: int,
    size4: int,
    size5: int,
    size6: int,
    size7: int,
    size8: int,
    p_type_like_template0: torch.Tensor,
    customer_complaints_0: str,
    customer_complaints_1: str,
    p_brand_size: int,
    p_type_size: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    part_mask = (
        (p_brand != brand)
        & (
            (p_size == size1)
            | (p_size == size2)
            | (p_size == size3)
            | (p_size == size4)
            | (p_size == size5)
            | (p_size == size6)
            | (p_size == size7)
            | (p_size == size8)
        )
        & ~p_type_like_template0[p_type]
    )
    # NOT EXISTS / NOT IN: membership of ps_suppkey among the subquery's s_suppkey.
    u_0_supplier_mask = ops.text_contains_in_order(
        u_0_supplier_s_comment, customer_complaints_0, customer_complaints_1
    )
    partsupp_mask = ~ops.member(ps_suppkey, of=u_0_supplier_s_suppkey[u_0_supplier_mask])
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    partsupp_part = ops.lookup(ops.key_index(p_partkey), ps_partkey)
    partsupp_mask &= (partsupp_part >= 0) & part_mask[partsupp_part]
    # Late materialization: the surviving rows, then only the columns still needed.
    partsupp_rows = torch.nonzero(partsupp_mask).squeeze(1)
    part_rows = partsupp_part[partsupp_rows]
    ps_suppkey = ps_suppkey[partsupp_rows]
    p_brand = p_brand[part_rows]
    p_size = p_size[part_rows]
    p_type = p_type[part_rows]
    key2 = p_size
    key2 = key2 - key2.min()
    # GROUP BY p_brand, p_type, p_size: exact keys, group ids by sorting.
    _, ids = ops.group(ops.pack([p_brand, p_type, key2], [p_brand_size, p_type_size, int(key2.max()) + 1]))
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    supplier_cnt = ops.group_count_distinct(ps_suppkey, ids, groups)
    # The result columns.
    p_brand = p_brand[first].long()
    p_type = p_type[first].long()
    p_size = p_size[first]
    order = ops.order([(supplier_cnt, True), (p_brand, False), (p_type, False), (p_size, False)])
    p_brand = p_brand[order]
    p_type = p_type[order]
    p_size = p_size[order]
    supplier_cnt = supplier_cnt[order]
    return (p_brand, p_type, p_size, supplier_cnt)


def run_query(
    tables,
    brand: str = "Brand#45",
    type: str = "MEDIUM POLISHED",
    size1: int = 49,
    size2: int = 14,
    size3: int = 23,
    size4: int = 45,
    size5: int = 19,
    size6: int = 3,
    size7: int = 36,
    size8: int = 9,
) -> dict[str, torch.Tensor]:
    part = tables["part"]
    supplier = tables["supplier"]
    partsupp = tables["partsupp"]
    result = _query_core(
        p_brand=part["p_brand"],
        p_size=part["p_size"],
        p_type=part["p_type"],
        p_partkey=part["p_partkey"],
        u_0_supplier_s_comment=supplier["s_comment"],
        u_0_supplier_s_suppkey=supplier["s_suppkey"],
        ps_suppkey=partsupp["ps_suppkey"],
        ps_partkey=partsupp["ps_partkey"],
        brand=ops.dictionary_code(part.dictionary("p_brand"), brand),
        size1=size1,
        size2=size2,
        size3=size3,
        size4=size4,
        size5=size5,
        size6=size6,
        size7=size7,
        size8=size8,
        p_type_like_template0=ops.dictionary_mask(
            part.dictionary("p_type"), ops.sql_like(f"{type}%"), part["p_type"].device
        ),
        customer_complaints_0="Customer",
        customer_complaints_1="Complaints",
        p_brand_size=len(part.dictionary("p_brand")),
        p_type_size=len(part.dictionary("p_type")),
    )
    return dict(zip(("p_brand", "p_type", "p_size", "supplier_cnt"), result, strict=True))
