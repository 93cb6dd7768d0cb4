"""TPC-H Q17, Small-Quantity-Order Revenue: a TorchPlan.

SELECT sum(l_extendedprice) / 7.0 AS avg_yearly
FROM lineitem, part
WHERE p_partkey = l_partkey
  AND p_brand = ':brand'
  AND p_container = ':container'
  AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)

The correlated AVG is a group-by on partkey, computed only for the selected parts (the rest add zero)
and gathered back to each lineitem row. The comparison is done in integers: quantities are whole
numbers, so `q < 0.2 * S / c` is `5 * q * c < S`, exact. DuckDB compares doubles
(`q < 0.2 * (S / c)`); the two agree: they can only differ at an exact tie `5qc = S`, where
S / c = 5q is exact and 0.2 * 5q rounds back to q for every quantity 1..50.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "lineitem": ("l_partkey", "l_quantity", "l_extendedprice"),
    "part": ("p_partkey", "p_brand", "p_container"),
}

# A lineitem row adds (1 << COUNT_SHIFT) + quantity to its part: one scatter gives count and sum.
COUNT_SHIFT = 32


def _query_core(
    l_partkey: torch.Tensor,
    l_quantity: torch.Tensor,
    l_extendedprice: torch.Tensor,
    p_partkey: torch.Tensor,
    p_brand: torch.Tensor,
    p_container: torch.Tensor,
    brand: int,
    container: int,
) -> torch.Tensor:
    """avg_yearly as a 1-element float64 tensor: NaN (SQL's NULL) when no row qualifies."""
    # Partkeys are dense 1..N: a flag per key, gathered by every lineitem row.
    selected_by_key = torch.zeros(p_partkey.numel() + 1, dtype=torch.bool, device=p_partkey.device)
    selected_by_key[p_partkey] = (p_brand == brand) & (p_container == container)
    selected = selected_by_key[l_partkey]
    quantity = l_quantity.to(torch.int64)
    # Count and quantity sum per part in one int64 scatter (a part's quantity sum is far below 2^32).
    packed = torch.where(selected, quantity + (1 << COUNT_SHIFT), 0)
    totals = torch.zeros_like(selected_by_key, dtype=torch.int64).index_add_(0, l_partkey, packed)
    line_totals = totals[l_partkey]
    count = line_totals >> COUNT_SHIFT
    quantity_sum = line_totals & ((1 << COUNT_SHIFT) - 1)
    keep = selected & (5 * quantity * count < quantity_sum)
    avg_yearly = torch.where(keep, l_extendedprice, 0.0).sum() / 7.0
    # SUM over no rows is NULL, not 0 (docs/data-format.md): the defaults' brand and container select
    # nothing at SF0.01. Every l_extendedprice is positive, so a zero sum means no row (a second
    # reduction, `keep.any()`, costs device time: q06.py).
    return torch.where(avg_yearly > 0, avg_yearly, torch.nan).reshape(1)


def run_query(tables, brand: str = "Brand#23", container: str = "MED BOX"):
    lineitem, part = tables["lineitem"], tables["part"]
    avg_yearly = _query_core(
        lineitem["l_partkey"],
        lineitem["l_quantity"],
        lineitem["l_extendedprice"],
        part["p_partkey"],
        part["p_brand"],
        part["p_container"],
        brand=ops.dictionary_code(part.dictionary("p_brand"), brand),
        container=ops.dictionary_code(part.dictionary("p_container"), container),
    )
    return {"avg_yearly": avg_yearly}
