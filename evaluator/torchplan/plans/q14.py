"""TPC-H Q14, Promotion Effect: a TorchPlan.

SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END)
       / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
FROM lineitem, part
WHERE l_partkey = p_partkey
  AND l_shipdate >= DATE ':date'
  AND l_shipdate < DATE ':date' + INTERVAL '1' MONTH

LIKE 'PROMO%' is evaluated once per p_type dictionary entry; the part join is a gather from a flag
table indexed by partkey, so the whole query is one fused pass over lineitem and two sums.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import add_months, parse_date

COLUMNS = {
    "lineitem": ("l_partkey", "l_extendedprice", "l_discount", "l_shipdate"),
    "part": ("p_partkey", "p_type"),
}


def _query_core(
    l_partkey: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_discount: torch.Tensor,
    l_shipdate: torch.Tensor,
    p_partkey: torch.Tensor,
    p_type: torch.Tensor,
    promo_types: torch.Tensor,
    date_lo: int,
    date_hi: int,
) -> torch.Tensor:
    """promo_revenue as a 1-element float64 tensor; `promo_types[code]` says p_type LIKE 'PROMO%'.

    Over no rows both SUMs are NULL and so is their ratio: 0 / 0 here, NaN, as it should be (a row's
    revenue is never 0, so the denominator is 0 only when no row is in the month).
    """
    # Partkeys are dense 1..N: a flag per key, then one gather per lineitem row (no -1 rows: every
    # l_partkey exists in part, a TPC-H foreign key).
    promo_by_key = torch.zeros(p_partkey.numel() + 1, dtype=torch.bool, device=p_partkey.device)
    promo_by_key[p_partkey] = promo_types[p_type.long()]
    in_range = (l_shipdate >= date_lo) & (l_shipdate < date_hi)
    revenue = torch.where(in_range, l_extendedprice * (1 - l_discount), 0.0)
    promo = torch.where(promo_by_key[l_partkey], revenue, 0.0)
    return (100.0 * promo.sum() / revenue.sum()).reshape(1)


def run_query(tables, date: str = "1995-09-01"):
    lineitem, part = tables["lineitem"], tables["part"]
    promo_revenue = _query_core(
        lineitem["l_partkey"],
        lineitem["l_extendedprice"],
        lineitem["l_discount"],
        lineitem["l_shipdate"],
        part["p_partkey"],
        part["p_type"],
        promo_types=ops.dictionary_mask(
            part.dictionary("p_type"), lambda s: s.startswith("PROMO"), part["p_type"].device
        ),
        date_lo=parse_date(date),
        date_hi=add_months(date, 1),
    )
    return {"promo_revenue": promo_revenue}
