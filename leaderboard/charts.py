"""Charts: pure functions from plain data to SVG bytes (matplotlib's object API, Agg, no pyplot state)."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass

from leaderboard.formatting import speedup_text

INK = "#1f2933"
MUTED = "#7b8794"
FASTER = "#2f6fdf"
EVEN = "#c2c8d0"
SLOWER = "#d64545"
# Within 5% of the baseline reads as even, as the pages' `speedup_class` has it.
EVEN_BAND = 0.05


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    note: str = ""
    # The passing kernels alone, without falling back to the baseline: below 1x when they are slower.
    kernels_only: float | None = None
    # Why there is no speed (e.g. "wrong answer"): drawn as a failure at 1x, with no bar.
    failure: str = ""


def speed_colour(value: float) -> str:
    """Faster, about even or slower than the baseline, as a bar's colour."""
    if value >= 1 + EVEN_BAND:
        return FASTER
    if value > 1 - EVEN_BAND:
        return EVEN
    return SLOWER


AXIS_LABEL = (
    "speedup over the baseline, log scale: right of 1x faster, left slower\n"
    "bars: failing or slower kernels fall back to the baseline (as in the paper); "
    "diamonds: the passing kernels alone"
)


def speedup_bars(bars: Sequence[Bar], *, title: str, axis_label: str = AXIS_LABEL) -> bytes:
    """Horizontal bars from 1x (the baseline) on a log axis centred there, best at the top: a faster
    entry extends right in blue, a slower one left in red, one within 5% of 1x is grey. A diamond marks
    an entry's passing kernels alone, where given; a failed entry is a red cross at 1x with its reason."""
    # Imported here: matplotlib costs ~0.3 s to import, and only this view needs it.
    from matplotlib.figure import Figure
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    height = 1.2 + 0.42 * max(len(bars), 1)
    fig = Figure(figsize=(8, height), dpi=100)
    ax = fig.add_subplot()
    if not bars:
        ax.text(0.5, 0.5, "no results yet", ha="center", va="center", color=MUTED, transform=ax.transAxes)
        ax.set_axis_off()
    else:
        ordered = list(reversed(bars))
        values = [1.0 if b.failure else b.value for b in ordered]
        positions = list(range(len(ordered)))
        # log(value) is what "twice as fast" and "twice as slow" have in common: symmetric around 1x.
        shown = [v for b in ordered if not b.failure for v in (b.value, b.kernels_only) if v and v > 0]
        reach = max([abs(math.log10(v)) for v in shown] + [math.log10(2)]) + 0.35
        ax.set_xscale("log")
        ax.set_xlim(10**-reach, 10**reach)
        ax.barh(
            positions,
            [v - 1 for v in values],
            left=1,
            color=[speed_colour(v) for v in values],
            height=0.62,
        )
        for y, bar in zip(positions, ordered, strict=True):
            if bar.kernels_only and bar.kernels_only > 0:
                ax.plot(
                    [bar.kernels_only],
                    [y],
                    marker="D",
                    markersize=5,
                    color=speed_colour(bar.kernels_only),
                    markeredgecolor=INK,
                    markeredgewidth=0.6,
                    linestyle="none",
                )
            if bar.failure:
                ax.plot([1.0], [y], marker="X", markersize=8, color=SLOWER, linestyle="none")
                ax.text(1.12, y, bar.failure, va="center", ha="left", fontsize=8, color=SLOWER)
                continue
            text = speedup_text(bar.value, sign="x") + (f"  {bar.note}" if bar.note else "")
            if bar.kernels_only is not None:
                text += f"  (kernels alone {speedup_text(bar.kernels_only, sign='x')})"
            ax.text(10 ** (reach * 0.98), y, text, va="center", ha="right", fontsize=8, color=INK)
        ax.set_yticks(positions, [b.label for b in ordered], fontsize=9, color=INK)
        ax.axvline(1.0, color=INK, linewidth=0.8)
        decades = range(-math.ceil(reach), math.ceil(reach) + 1)
        steps = (1, 2, 5) if reach < 1.5 else (1,)  # a wide axis gets one tick per decade
        ticks = [10.0**d * m for d in decades for m in steps if 10**-reach <= 10.0**d * m <= 10**reach]
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
        ax.set_xlabel(axis_label, fontsize=8, color=MUTED)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        ax.tick_params(axis="x", labelsize=8, colors=MUTED)
    ax.set_title(title, fontsize=11, color=INK, loc="left")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()
