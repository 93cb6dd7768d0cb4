"""TPC-H Q6, Forecasting Revenue Change: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT sum(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_shipdate >= DATE '1994-01-01'
  AND l_shipdate < DATE '1994-01-01' + INTERVAL 1 YEAR
  AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01
  AND l_quantity < 24
"""

from __future__ import annotations

import torch

from evaluator.tpch.encoding import add_interval, decimal, parse_date

COLUMNS = {
    "lineitem": ("l_discount", "l_quantity", "l_shipdate", "l_extendedprice"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {}


def _query_core(
    l_discount: torch.Tensor,
    l_quantity: torch.Tensor,
    l_shipdate: torch.Tensor,
    l_extendedprice: torch.Tensor,
    *,
    discount_plus_0_01: float,
    discount_minus_0_01: float,
    quantity: int,
    date_plus_1_year: int,
    date: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    lineitem_mask = (
        (l_discount <= discount_plus_0_01)
        & (l_discount >= discount_minus_0_01)
        & (l_quantity < quantity)
        & (l_shipdate < date_plus_1_year)
        & (l_shipdate >= date)
    )
    # Aggregates over the qualifying rows, without gathering them.
    revenue = torch.where(
        lineitem_mask.any(), torch.where(lineitem_mask, l_extendedprice * l_discount, 0.0).sum(), torch.nan
    ).reshape(1)
    # The result columns.
    return (revenue,)


def run_query(
    tables, date: str = "1994-01-01", discount: float = 0.06, quantity: int = 24
) -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    result = _query_core(
        l_discount=lineitem["l_discount"],
        l_quantity=lineitem["l_quantity"],
        l_shipdate=lineitem["l_shipdate"],
        l_extendedprice=lineitem["l_extendedprice"],
        discount_plus_0_01=decimal(discount + 0.01),
        discount_minus_0_01=decimal(discount - 0.01),
        quantity=quantity,
        date_plus_1_year=add_interval(parse_date(date), 1, "year"),
        date=parse_date(date),
    )
    return dict(zip(("revenue",), result, strict=True))
