"""TPC-H Q6, Forecasting Revenue Change: a TorchPlan.

SELECT sum(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_shipdate >= DATE ':date'
  AND l_shipdate < DATE ':date' + INTERVAL '1' YEAR
  AND l_discount BETWEEN :discount - 0.01 AND :discount + 0.01
  AND l_quantity < :quantity
"""

from __future__ import annotations

import torch

from evaluator.tpch.encoding import date_to_days, decimal

COLUMNS = {"lineitem": ("l_shipdate", "l_discount", "l_quantity", "l_extendedprice")}


def _query_core(
    l_shipdate: torch.Tensor,
    l_discount: torch.Tensor,
    l_quantity: torch.Tensor,
    l_extendedprice: torch.Tensor,
    date_lo: int,
    date_hi: int,
    discount_lo: float,
    discount_hi: float,
    quantity: float,
) -> torch.Tensor:
    """Revenue of the qualifying rows, as a 1-element float64 tensor: NaN (SQL's NULL) when none."""
    mask = (
        (l_shipdate >= date_lo)
        & (l_shipdate < date_hi)
        & (l_discount >= discount_lo)
        & (l_discount <= discount_hi)
        & (l_quantity < quantity)
    )
    revenue = torch.where(mask, l_extendedprice * l_discount, 0.0).sum(dtype=torch.float64)
    # SUM over no rows is NULL, not 0 (docs/data-format.md). Every qualifying row's revenue is positive
    # (l_extendedprice is, and the lowest discount a draw admits is 0.01), so a zero sum means no row: a
    # `mask.any()` here made torch.compile write the mask out and read it back, a third more device time.
    return torch.where(revenue > 0, revenue, torch.nan).reshape(1)


def run_query(tables, date: str = "1994-01-01", discount: float = 0.06, quantity: int = 24):
    lineitem = tables["lineitem"]
    year, month, day = (int(part) for part in date.split("-"))
    revenue = _query_core(
        lineitem["l_shipdate"],
        lineitem["l_discount"],
        lineitem["l_quantity"],
        lineitem["l_extendedprice"],
        date_lo=date_to_days(year, month, day),
        date_hi=date_to_days(year + 1, month, day),
        # DECIMAL literals are rounded to 2 places the way SQL parses them: 0.06 + 0.01 in float64 is
        # 0.06999999999999999, which would drop every row whose discount is exactly 0.07.
        discount_lo=decimal(discount - 0.01),
        discount_hi=decimal(discount + 0.01),
        quantity=float(quantity),
    )
    return {"revenue": revenue}
