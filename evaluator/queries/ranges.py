"""Ordered ranges of substitution parameters (integers, decimals, dates; spec clause 2.4).

One declaration per parameter gives both its random draws (`draw`) and its boundaries (`ends`): a
kernel wrong only at a range's end is caught by the trial at that end, not by the luck of the draws.
Categorical parameters (a nation, a type, a brand) have no ends and are drawn in the query's module.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast


class Range:
    """The values a parameter may take, smallest first."""

    def values(self) -> Sequence[Any]:
        raise NotImplementedError

    def draw(self, rng: random.Random) -> Any:
        # rng.choice over the values consumes the generator exactly as rng.randint(low, high) does, so
        # declaring a range kept the queries' earlier seeded draws.
        return rng.choice(self.values())

    @property
    def ends(self) -> tuple[Any, Any]:
        values = self.values()
        return values[0], values[-1]


@dataclass(frozen=True)
class Integers(Range):
    """low, low + 1, ..., high."""

    low: int
    high: int

    def values(self) -> range:
        return range(self.low, self.high + 1)


@dataclass(frozen=True)
class Decimals(Range):
    """From low to high in steps of the last digit as written: ("0.02", "0.09") is 0.02, 0.03, ..., 0.09.
    Values are the floats nearest the decimals (as Python parses "0.03"), so they print as written."""

    low: str
    high: str

    def values(self) -> tuple[float, ...]:
        low, high = Decimal(self.low), Decimal(self.high)
        exponent = cast(int, low.as_tuple().exponent)  # an int for a finite decimal, as written
        step = Decimal(1).scaleb(exponent)
        return tuple(float(low + k * step) for k in range(int((high - low) / step) + 1))


@dataclass(frozen=True)
class Dates(Range):
    """ISO dates from first to last, one `step` ("day", "month" or "year") apart. Month and year steps
    keep first's day of the month (the spec's ranges all step from the 1st)."""

    first: str
    last: str
    step: str = "day"

    def values(self) -> tuple[str, ...]:
        first, last = dt.date.fromisoformat(self.first), dt.date.fromisoformat(self.last)
        if self.step == "day":
            return tuple(str(first + dt.timedelta(days=k)) for k in range((last - first).days + 1))
        months = {"month": 1, "year": 12}[self.step]
        span = (last.year - first.year) * 12 + last.month - first.month
        found = []
        for k in range(0, span + 1, months):
            year, month = divmod(first.month - 1 + k, 12)
            found.append(str(dt.date(first.year + year, month + 1, first.day)))
        return tuple(found)
