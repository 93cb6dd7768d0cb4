"""TPC-H Q19, Discounted Revenue: a TorchPlan.

SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM lineitem, part
WHERE (p_partkey = l_partkey AND p_brand = ':brand1'
       AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
       AND l_quantity >= :quantity1 AND l_quantity <= :quantity1 + 10 AND p_size BETWEEN 1 AND 5
       AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON')
   OR (p_partkey = l_partkey AND p_brand = ':brand2'
       AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
       AND l_quantity >= :quantity2 AND l_quantity <= :quantity2 + 10 AND p_size BETWEEN 1 AND 10
       AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON')
   OR (p_partkey = l_partkey AND p_brand = ':brand3'
       AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
       AND l_quantity >= :quantity3 AND l_quantity <= :quantity3 + 10 AND p_size BETWEEN 1 AND 15
       AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON')

The three branches' container lists are disjoint, so a part meets the part conditions of at most one
branch: each part gets a branch number (0 = none) in a table indexed by partkey, and each lineitem row
gathers its branch and checks that branch's quantity range from two 4-entry tables. One fused pass.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "lineitem": (
        "l_partkey",
        "l_quantity",
        "l_extendedprice",
        "l_discount",
        "l_shipmode",
        "l_shipinstruct",
    ),
    "part": ("p_partkey", "p_brand", "p_container", "p_size"),
}

CONTAINERS = (
    ("SM CASE", "SM BOX", "SM PACK", "SM PKG"),
    ("MED BAG", "MED BOX", "MED PKG", "MED PACK"),
    ("LG CASE", "LG BOX", "LG PACK", "LG PKG"),
)
SIZES = (5, 10, 15)
SHIPMODES = ("AIR", "AIR REG")
SHIPINSTRUCT = "DELIVER IN PERSON"


def _query_core(
    l_partkey: torch.Tensor,
    l_quantity: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_discount: torch.Tensor,
    l_shipmode: torch.Tensor,
    l_shipinstruct: torch.Tensor,
    p_partkey: torch.Tensor,
    p_brand: torch.Tensor,
    p_container: torch.Tensor,
    p_size: torch.Tensor,
    container_branch: torch.Tensor,
    brands: tuple[int, ...],  # the three brands' codes
    sizes: tuple[int, int, int],
    quantity_lo: torch.Tensor,
    quantity_hi: torch.Tensor,
    shipmode_ok: torch.Tensor,
    shipinstruct: int,
) -> torch.Tensor:
    """Revenue as a 1-element float64 tensor: NaN (SQL's NULL) when no row qualifies.

    `container_branch[code]` is the branch (1..3) whose IN list holds that container, else 0;
    `quantity_lo/hi[branch]` are float64 bounds (empty range for branch 0).
    """
    branch = container_branch[p_container.long()]
    brand_ok = torch.stack([p_brand == b for b in brands])  # [3, parts]
    size_ok = torch.stack([(p_size >= 1) & (p_size <= s) for s in sizes])
    # Branch b's brand/size test, picked by the part's container branch (the gather needs b - 1 >= 0).
    pick = (branch - 1).clamp(min=0).unsqueeze(0)
    part_ok = (brand_ok & size_ok).gather(0, pick).squeeze(0) & (branch > 0)
    branch_by_key = torch.zeros(p_partkey.numel() + 1, dtype=torch.int64, device=p_partkey.device)
    branch_by_key[p_partkey] = torch.where(part_ok, branch, 0).long()

    line_branch = branch_by_key[l_partkey]
    keep = (
        shipmode_ok[l_shipmode.long()]
        & (l_shipinstruct == shipinstruct)
        & (l_quantity >= quantity_lo[line_branch])
        & (l_quantity <= quantity_hi[line_branch])
    )
    revenue = torch.where(keep, l_extendedprice * (1 - l_discount), 0.0).sum()
    # SUM over no rows is NULL, not 0 (docs/data-format.md): common at SF0.01 with three random brands.
    # Every row's revenue is positive (a discount is at most 0.10), so a zero sum means no row (a second
    # reduction, `keep.any()`, costs device time: q06.py).
    return torch.where(revenue > 0, revenue, torch.nan).reshape(1)


def run_query(
    tables,
    quantity1: int = 1,
    quantity2: int = 10,
    quantity3: int = 20,
    brand1: str = "Brand#12",
    brand2: str = "Brand#23",
    brand3: str = "Brand#34",
):
    lineitem, part = tables["lineitem"], tables["part"]
    device = part["p_partkey"].device
    containers = part.dictionary("p_container")
    container_branch = torch.tensor(
        [next((b + 1 for b, names in enumerate(CONTAINERS) if c in names), 0) for c in containers],
        dtype=torch.int64,
        device=device,
    )
    # Quantities are integers, the bounds exact in float64; branch 0 gets an empty range.
    lows = [float("inf"), float(quantity1), float(quantity2), float(quantity3)]
    highs = [float("-inf"), quantity1 + 10.0, quantity2 + 10.0, quantity3 + 10.0]
    brand_codes = part.dictionary("p_brand")
    revenue = _query_core(
        lineitem["l_partkey"],
        lineitem["l_quantity"],
        lineitem["l_extendedprice"],
        lineitem["l_discount"],
        lineitem["l_shipmode"],
        lineitem["l_shipinstruct"],
        part["p_partkey"],
        part["p_brand"],
        part["p_container"],
        part["p_size"],
        container_branch=container_branch,
        brands=tuple(ops.dictionary_code(brand_codes, b) for b in (brand1, brand2, brand3)),
        sizes=SIZES,
        quantity_lo=torch.tensor(lows, dtype=torch.float64, device=device),
        quantity_hi=torch.tensor(highs, dtype=torch.float64, device=device),
        shipmode_ok=ops.dictionary_mask(lineitem.dictionary("l_shipmode"), SHIPMODES.__contains__, device),
        shipinstruct=ops.dictionary_code(lineitem.dictionary("l_shipinstruct"), SHIPINSTRUCT),
    )
    return {"revenue": revenue}
