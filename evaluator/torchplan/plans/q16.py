"""TPC-H Q16, Parts/Supplier Relationship: a TorchPlan.

SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt
FROM partsupp, part
WHERE p_partkey = ps_partkey
  AND p_brand <> ':brand'
  AND p_type NOT LIKE ':type%'
  AND p_size IN (:size1, :size2, :size3, :size4, :size5, :size6, :size7, :size8)
  AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%')
GROUP BY p_brand, p_type, p_size
ORDER BY supplier_cnt DESC, p_brand, p_type, p_size

Each part gets a dense group code (brand code, type code, slot of its size among the listed sizes),
-1 when it fails the part predicates; NOT IN is an anti-join bitmap over supplier keys. COUNT(DISTINCT)
is a count of distinct (group, suppkey) pairs: sort the packed pairs of the surviving partsupp rows,
drop repeats, and run-length count the groups, which come out in (brand, type, size) order.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "partsupp": ("ps_partkey", "ps_suppkey"),
    "part": ("p_partkey", "p_brand", "p_type", "p_size"),
    "supplier": ("s_suppkey", "s_comment"),
}


def _query_core(
    ps_partkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    p_partkey: torch.Tensor,
    p_brand: torch.Tensor,
    p_type: torch.Tensor,
    p_size: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_comment: torch.Tensor,
    brand: int,
    type_ok: torch.Tensor,
    sizes: torch.Tensor,
    brands: int,
    part_keys: int,
    supplier_keys: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(p_brand code, p_type code, p_size, supplier_cnt) in ORDER BY order.

    `type_ok`: per p_type code, NOT LIKE ':type%'; `sizes`: the distinct listed sizes, ascending;
    `brands`: the p_brand dictionary size.
    """
    device = ps_partkey.device
    types, slots = type_ok.numel(), sizes.numel()
    size_match = p_size[None, :] == sizes[:, None]
    part_pass = (p_brand != brand) & type_ok[p_type] & size_match.any(0)
    code = (p_brand.long() * types + p_type.long()) * slots + size_match.int().argmax(0)
    part_group = torch.full((part_keys,), -1, dtype=torch.int64, device=device)
    part_group[p_partkey] = torch.where(part_pass, code, -1)

    complains = torch.zeros(supplier_keys, dtype=torch.bool, device=device)
    complains[s_suppkey] = ops.text_contains_in_order(s_comment, "Customer", "Complaints")

    group = part_group[ps_partkey]
    rows = ((group >= 0) & ~complains[ps_suppkey]).nonzero().squeeze(1)
    pairs = torch.unique(ops.pack([group[rows], ps_suppkey[rows]], [brands * types * slots, supplier_keys]))
    groups, supplier_cnt = torch.unique_consecutive(pairs // supplier_keys, return_counts=True)

    # Groups ascend by code, i.e. by (brand, type, size): a stable sort on the count finishes the order.
    supplier_cnt, by_count = torch.sort(supplier_cnt, stable=True, descending=True)
    groups = groups[by_count]
    return groups // (types * slots), groups // slots % types, sizes[groups % slots], supplier_cnt


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
):
    partsupp, part, supplier = tables["partsupp"], tables["part"], tables["supplier"]
    device = part["p_size"].device
    sizes = sorted({size1, size2, size3, size4, size5, size6, size7, size8})
    p_brand, p_type, p_size, supplier_cnt = _query_core(
        partsupp["ps_partkey"],
        partsupp["ps_suppkey"],
        part["p_partkey"],
        part["p_brand"],
        part["p_type"],
        part["p_size"],
        supplier["s_suppkey"],
        supplier["s_comment"],
        brand=ops.dictionary_code(part.dictionary("p_brand"), brand),
        type_ok=ops.dictionary_mask(part.dictionary("p_type"), lambda t: not t.startswith(type), device),
        sizes=torch.tensor(sizes, dtype=part["p_size"].dtype, device=device),
        brands=len(part.dictionary("p_brand")),
        # Part and supplier keys are dense 1..N.
        part_keys=part.rows + 1,
        supplier_keys=supplier.rows + 1,
    )
    return {"p_brand": p_brand, "p_type": p_type, "p_size": p_size, "supplier_cnt": supplier_cnt}
