"""Storage encodings of TPC-H values on the device (docs/data-format.md).

DATE is int32 days since 1970-01-01, DECIMAL(15,2) is float64 holding the decimal's nearest double,
integers are int64, low-cardinality strings are int32 codes into a sorted dictionary.
"""

from __future__ import annotations

import datetime as dt

EPOCH = dt.date(1970, 1, 1)


def date_to_days(year: int, month: int, day: int) -> int:
    return (dt.date(year, month, day) - EPOCH).days


def parse_date(text: str) -> int:
    return (dt.date.fromisoformat(text) - EPOCH).days


def decimal(value: float, places: int = 2) -> float:
    """The double a SQL DECIMAL literal of `places` digits stands for."""
    return round(value, places)
