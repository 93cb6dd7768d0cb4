"""TPC-H Q15, Top Supplier: a TorchPlan.

WITH revenue AS (
    SELECT l_suppkey AS supplier_no, sum(l_extendedprice * (1 - l_discount)) AS total_revenue
    FROM lineitem
    WHERE l_shipdate >= DATE ':date' AND l_shipdate < DATE ':date' + INTERVAL '3' MONTH
    GROUP BY supplier_no)
SELECT s_suppkey, s_name, s_address, s_phone, total_revenue
FROM supplier, revenue
WHERE s_suppkey = supplier_no AND total_revenue = (SELECT max(total_revenue) FROM revenue)
ORDER BY s_suppkey

`total_revenue = max(...)` is an equality between DECIMAL sums, exact in SQL. Float64 sums in different
orders could split a true tie or differ from DuckDB's choice, so the revenues are summed exactly as
int64 in units of 1/10000: cents of the price times hundredths of (1 - discount). A row is at most
~1.05 * 10^9 units, so even all 60M rows of SF10 together stay far inside int64.
"""

from __future__ import annotations

import torch

from evaluator.tpch.encoding import add_months, parse_date

COLUMNS = {
    "lineitem": ("l_suppkey", "l_extendedprice", "l_discount", "l_shipdate"),
    "supplier": ("s_suppkey", "s_name", "s_address", "s_phone"),
}


def _query_core(
    l_suppkey: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_discount: torch.Tensor,
    l_shipdate: torch.Tensor,
    s_suppkey: torch.Tensor,
    date_lo: int,
    date_hi: int,
) -> tuple[torch.Tensor, ...]:
    """s_suppkey, supplier row (for s_name, s_address, s_phone), total_revenue; by s_suppkey."""
    in_range = (l_shipdate >= date_lo) & (l_shipdate < date_hi)
    # The float64 columns hold the decimals' nearest doubles: scaling and rounding recovers them.
    price_cents = torch.round(l_extendedprice * 100).to(torch.int64)
    keep_hundredths = 100 - torch.round(l_discount * 100).to(torch.int64)
    revenue = torch.where(in_range, price_cents * keep_hundredths, 0)
    # Suppkeys are dense 1..N. Every revenue row is positive, so a zero sum means "no group".
    revenue_by_key = torch.zeros(s_suppkey.numel() + 1, dtype=torch.int64, device=l_suppkey.device)
    revenue_by_key.index_add_(0, l_suppkey, revenue)
    best = revenue_by_key.max()
    supplier_revenue = revenue_by_key[s_suppkey]
    rows = torch.nonzero((supplier_revenue == best) & (best > 0)).squeeze(1)  # data-dependent size
    rows = rows[torch.argsort(s_suppkey[rows])]
    return s_suppkey[rows], rows, supplier_revenue[rows].to(torch.float64) / 10000


def run_query(tables, date: str = "1996-01-01"):
    lineitem, supplier = tables["lineitem"], tables["supplier"]
    suppkey, rows, total_revenue = _query_core(
        lineitem["l_suppkey"],
        lineitem["l_extendedprice"],
        lineitem["l_discount"],
        lineitem["l_shipdate"],
        supplier["s_suppkey"],
        date_lo=parse_date(date),
        date_hi=add_months(date, 3),
    )
    return {
        "s_suppkey": suppkey,
        "s_name": rows,
        "s_address": rows,
        "s_phone": rows,
        "total_revenue": total_revenue,
    }
