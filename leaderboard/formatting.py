"""Numbers as pages and charts state them: one rule for the templates and the SVGs."""

from __future__ import annotations

import math


def speedup_text(value: float | None, *, sign: str = "×") -> str:
    """A speedup with two decimals from 1x up, and two significant figures below: a passing kernel 227
    times slower reads "0.0044×", not "0.00×"."""
    if value is None:
        return "–"
    if value >= 1 or value <= 0:
        return f"{value:.2f}{sign}"
    decimals = max(2, 1 - math.floor(math.log10(value)))
    return f"{value:.{decimals}f}{sign}"
