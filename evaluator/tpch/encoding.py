"""Storage encodings of TPC-H values on the device (docs/data-format.md).

DATE is int32 days since 1970-01-01, DECIMAL(15,2) is float64 holding the decimal's nearest double,
integers are int64, low-cardinality strings are int32 codes into a sorted dictionary.

Dates are computed with integer arithmetic rather than `datetime`: TorchPlans run under torch.compile,
and Dynamo traced `date.fromisoformat` into a guard that failed on its own frame (seen on the H200 with
torch 2.11, 2026-12-02).
"""

from __future__ import annotations


def date_to_days(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def parse_date(text: str) -> int:
    """'YYYY-MM-DD' as days since 1970-01-01."""
    year, month, day = (int(part) for part in text.split("-"))
    return date_to_days(year, month, day)


def add_months(text: str, months: int) -> int:
    """'YYYY-MM-DD' + INTERVAL months MONTH, as days (the day of month is kept, as TPC-H's are 1)."""
    year, month, day = (int(part) for part in text.split("-"))
    total = year * 12 + month - 1 + months
    return date_to_days(total // 12, total % 12 + 1, day)


def decimal(value: float, places: int = 2) -> float:
    """The double a SQL DECIMAL literal of `places` digits stands for."""
    return round(value, places)
