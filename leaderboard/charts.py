"""Charts: pure functions from plain data to SVG bytes (matplotlib's object API, Agg, no pyplot state)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

INK = "#1f2933"
MUTED = "#7b8794"
ACCENT = "#2f6fdf"
BELOW = "#c2c8d0"


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    note: str = ""


def speedup_bars(bars: Sequence[Bar], *, title: str) -> bytes:
    """Horizontal bars of speedups with a line at 1x (the baseline); best at the top."""
    # Imported here: matplotlib costs ~0.3 s to import, and only this view needs it.
    from matplotlib.figure import Figure

    height = 0.9 + 0.42 * max(len(bars), 1)
    fig = Figure(figsize=(8, height), dpi=100)
    ax = fig.add_subplot()
    if not bars:
        ax.text(0.5, 0.5, "no results yet", ha="center", va="center", color=MUTED, transform=ax.transAxes)
        ax.set_axis_off()
    else:
        ordered = list(reversed(bars))
        values = [b.value for b in ordered]
        colors = [ACCENT if v >= 1 else BELOW for v in values]
        positions = range(len(ordered))
        ax.barh(positions, values, color=colors, height=0.62)
        ax.set_yticks(list(positions), [b.label for b in ordered], fontsize=9, color=INK)
        ax.axvline(1.0, color=INK, linewidth=0.8, linestyle="--")
        right = max(values + [1.0]) * 1.25
        ax.set_xlim(0, right)
        for y, bar in zip(positions, ordered, strict=True):
            text = f"{bar.value:.2f}x" + (f"  {bar.note}" if bar.note else "")
            ax.text(bar.value + right * 0.01, y, text, va="center", fontsize=8, color=INK)
        ax.set_xlabel("overall speedup (x), failures fall back to the baseline", fontsize=9, color=MUTED)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        ax.tick_params(axis="x", labelsize=8, colors=MUTED)
    ax.set_title(title, fontsize=11, color=INK, loc="left")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()
