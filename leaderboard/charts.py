"""Charts: pure functions from plain data to SVG bytes (matplotlib's object API, Agg, no pyplot state)."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from leaderboard.formatting import speedup_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure

INK = "#1f2933"
MUTED = "#5c6773"  # the site's --muted: 4.5:1 or more on every light background
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
    "diamonds and (alone ...): the passing kernels alone"
)

# Points. Narrow enough that the page's 100%-wide image, scaled to a 390 px phone, keeps ~9 px text.
WIDTH = 5.2 * 72
MARGIN = 6
ROW = 0.5 * 72
LABEL_GAP = 5


def speedup_figure(bars: Sequence[Bar], *, title: str, axis_label: str = AXIS_LABEL) -> Figure:
    """Horizontal bars from 1x (the baseline) on a log axis, best at the top, each under its label: a faster
    entry extends right in blue, a slower one left in red, one within 5% of 1x is grey. A diamond marks
    an entry's passing kernels alone, where given; a failed entry is a red cross at 1x with its reason.
    Every text lies inside the figure: the title and caption wrap to its width, and each value label sits
    right of its bar and diamond, the axis extended to hold it."""
    # Imported here: matplotlib costs ~0.3 s to import, and only the chart views need it.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    from matplotlib.transforms import blended_transform_factory

    fig = Figure(dpi=72, layout=ConstrainedLayoutEngine(w_pad=MARGIN / 72, h_pad=MARGIN / 72))
    renderer = FigureCanvasAgg(fig).get_renderer()
    inner = WIDTH - 2 * MARGIN - 4
    title = _wrap(renderer, title, 11.5, inner)
    caption = _wrap(renderer, axis_label, 9, inner) if bars else ""
    # The rows, then the title's and caption's lines and the ticks, as the layout will stack them.
    height = ROW * max(len(bars), 1) + 15 * (title.count("\n") + 1) + 12 * (caption.count("\n") + 1) + 40
    fig.set_size_inches(WIDTH / 72, height / 72)
    fig.suptitle(title, x=MARGIN / WIDTH, ha="left", fontsize=11.5, color=INK)
    ax = fig.add_subplot()
    if not bars:
        ax.text(0.5, 0.5, "no results yet", ha="center", va="center", color=MUTED, transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    ordered = list(reversed(bars))
    values = [1.0 if b.failure else b.value for b in ordered]
    positions = list(range(len(ordered)))
    # log(value) is what "twice as fast" and "twice as slow" have in common: symmetric around 1x.
    shown = [v for b in ordered if not b.failure for v in (b.value, b.kernels_only) if v and v > 0]
    reach = max([abs(math.log10(v)) for v in shown] + [math.log10(2)]) + 0.35
    ax.set_xscale("log")
    ax.set_xlim(10**-reach, 10**reach)
    ax.set_ylim(-0.5, len(ordered) - 0.2)
    ax.barh(positions, [v - 1 for v in values], left=1, color=[speed_colour(v) for v in values], height=0.4)
    # The entry's name above its bar, from the axes' left edge: the whole width is the label's.
    row_label = blended_transform_factory(ax.transAxes, ax.transData)
    ends = []
    for y, bar in zip(positions, ordered, strict=True):
        name = f"{bar.label} · {bar.note}" if bar.note and not bar.failure else bar.label
        ax.text(
            0.0,
            y + 0.27,
            _fit(renderer, name, 10, inner),
            transform=row_label,
            va="bottom",
            ha="left",
            fontsize=10,
            color=INK,
            gid=f"row-label-{y}",
            # Over the 1x line, which would otherwise strike through the name.
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5},
            zorder=3,
        )
        end = max(1.0, bar.value if not bar.failure else 1.0)
        if bar.kernels_only and bar.kernels_only > 0:
            ax.plot(
                [bar.kernels_only],
                [y],
                marker="D",
                markersize=6,
                color=speed_colour(bar.kernels_only),
                markeredgecolor=INK,
                markeredgewidth=0.6,
                linestyle="none",
            )
            end = max(end, bar.kernels_only)
        if bar.failure:
            ax.plot([1.0], [y], marker="X", markersize=9, color=SLOWER, linestyle="none")
            text, colour = bar.failure, SLOWER
        else:
            text, colour = speedup_text(bar.value, sign="x"), INK
            if bar.kernels_only is not None:
                text += f" (alone {speedup_text(bar.kernels_only, sign='x')})"
        ends.append(end)
        ax.annotate(
            text,
            (end, y),
            xytext=(LABEL_GAP + 2, 0),
            textcoords="offset points",
            va="center",
            ha="left",
            fontsize=10,
            color=colour,
            gid=f"value-label-{y}",
        )
    ax.set_yticks([])
    ax.axvline(1.0, color=INK, linewidth=0.8)
    decades = range(-math.ceil(reach), math.ceil(reach) + 1)
    steps = (1, 2, 5) if reach < 1.5 else (1,)  # a wide axis gets one tick per decade
    ticks = [10.0**d * m for d in decades for m in steps if 10**-reach <= 10.0**d * m <= 10**reach]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    fig.supxlabel(caption, x=MARGIN / WIDTH, ha="left", fontsize=9, color=MUTED)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="x", labelsize=9, colors=MUTED)
    _make_room_for_value_labels(fig, ax, ends, reach)
    return fig


def _make_room_for_value_labels(fig: Figure, ax: Axes, ends: list[float], reach: float) -> None:
    """Widen the log axis to the right until each value label, right of its bar or diamond, ends inside
    it: the axes' width is fixed by the layout, the labels' widths by their text."""
    fig.draw_without_rendering()
    width = ax.get_window_extent().width
    lo = -reach
    hi = reach
    for end, label in zip(
        ends, [t for t in ax.texts if str(t.get_gid()).startswith("value-label")], strict=True
    ):
        room = width - label.get_window_extent().width - LABEL_GAP - 4
        # Where the label may start, as a fraction of the axis; past 60% the bars would be squeezed flat.
        share = max(room / width, 0.4)
        hi = max(hi, lo + (math.log10(end) - lo) / share)
    ax.set_xlim(10**lo, 10**hi)


def speedup_bars(bars: Sequence[Bar], *, title: str, axis_label: str = AXIS_LABEL) -> bytes:
    """`speedup_figure` as SVG bytes."""
    fig = speedup_figure(bars, title=title, axis_label=axis_label)
    out = io.BytesIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def _wrap(renderer: RendererBase, text: str, size: float, width: float) -> str:
    """`text` broken between words into lines no wider than `width` points, its own line breaks kept."""
    lines = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if line and _width(renderer, candidate, size) > width:
                lines.append(line)
                line = word
            else:
                line = candidate
        lines.append(line)
    return "\n".join(lines)


def _fit(renderer: RendererBase, text: str, size: float, width: float) -> str:
    """`text`, cut short with an ellipsis where it is wider than `width` points."""
    if _width(renderer, text, size) <= width:
        return text
    while text and _width(renderer, text + "…", size) > width:
        text = text[:-1]
    return text.rstrip() + "…"


def _width(renderer: RendererBase, text: str, size: float) -> float:
    from matplotlib.font_manager import FontProperties

    width, _, _ = renderer.get_text_width_height_descent(text, FontProperties(size=size), ismath=False)
    return float(width) / float(renderer.points_to_pixels(1.0))  # type: ignore[arg-type]
