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


def add_interval(days: int, amount: int, unit: str) -> int:
    """DATE + INTERVAL `amount` `unit` (day, month or year) in days; a month end clamps, as in DuckDB."""
    if unit == "day":
        return days + amount
    year, month, day = days_to_date(days)
    months = year * 12 + month - 1 + amount * (12 if unit == "year" else 1)
    year, month = months // 12, months % 12 + 1
    return date_to_days(year, month, min(day, _month_length(year, month)))


def add_months(text: str, months: int) -> int:
    """'YYYY-MM-DD' + INTERVAL months MONTH, as days."""
    return add_interval(parse_date(text), months, "month")


def days_to_date(days: int) -> tuple[int, int, int]:
    """(year, month, day) of days since 1970-01-01 (H. Hinnant's civil_from_days)."""
    z = days + 719468
    era = z // 146097
    day_of_era = z - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + 3 if shifted_month < 10 else shifted_month - 9
    return year_of_era + era * 400 + (month <= 2), month, day


def _month_length(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def decimal(value: float, places: int = 2) -> float:
    """The double a SQL DECIMAL literal of `places` digits stands for."""
    return round(value, places)
