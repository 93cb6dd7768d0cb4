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

import re
from collections.abc import Callable

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import date_to_days, parse_date

COLUMNS = {
    "lineitem": ("l_shipdate", "l_partkey", "l_discount", "l_extendedprice"),
    "part": ("p_partkey", "p_type"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS = {}


def _add_interval(days: int, amount: int, unit: str) -> int:
    """DATE + INTERVAL on the host, in days since 1970-01-01; a month end clamps, as in DuckDB.

    Integer civil-date arithmetic, not datetime: run_query runs under torch.compile, and Dynamo traced
    datetime into a guard that failed (evaluator/tpch/encoding.py).
    """
    if unit == "day":
        return days + amount
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    months = (yoe + era * 400 + (month <= 2)) * 12 + month - 1 + amount * (12 if unit == "year" else 1)
    year, month = months // 12, months % 12 + 1
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    last = 29 if month == 2 and leap else 28 if month == 2 else 30 if month in (4, 6, 9, 11) else 31
    return date_to_days(year, month, min(day, last))


def _like(pattern: str) -> Callable[[str], bool]:
    """SQL LIKE for dictionary entries on the host: '%' is any run of characters, '_' any one."""
    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.compile(regex, re.DOTALL).fullmatch


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
    agg0 = (torch.where(p_type_like_promo[p_type], l_extendedprice * (1 - l_discount), 0.0)).sum().reshape(1)
    agg1 = (l_extendedprice * (1 - l_discount)).sum().reshape(1)
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
        date_plus_1_month=_add_interval(parse_date(date), 1, "month"),
        date=parse_date(date),
        p_type_like_promo=ops.dictionary_mask(
            part.dictionary("p_type"), _like("PROMO%"), part["p_type"].device
        ),
    )
    return dict(zip(("promo_revenue",), result, strict=True))
