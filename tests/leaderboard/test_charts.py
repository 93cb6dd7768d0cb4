"""The headline chart: a log axis centred at 1x, slower drawn as slower."""

from __future__ import annotations

import io
import re
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg

from leaderboard import charts


def _texts(svg: bytes) -> list[str]:
    # matplotlib draws text as paths and keeps each string in a comment beside them.
    return re.findall(r"<!-- (.*?) -->", svg.decode())


def _fills(svg: bytes) -> set[str]:
    return set(re.findall(r"fill: ?(#[0-9a-f]{6})", svg.decode()))


def test_a_slower_entry_is_drawn_in_the_slower_colour_and_a_faster_one_in_the_faster() -> None:
    slower = charts.speedup_bars([charts.Bar("Slow LLM", 0.5)], title="t")
    faster = charts.speedup_bars([charts.Bar("Fast LLM", 2.0)], title="t")
    assert charts.SLOWER in _fills(slower) and charts.FASTER not in _fills(slower)
    assert charts.FASTER in _fills(faster) and charts.SLOWER not in _fills(faster)


def test_an_entry_at_the_baseline_is_not_drawn_as_faster() -> None:
    svg = charts.speedup_bars([charts.Bar("Fallback LLM", 1.0)], title="t")
    assert charts.FASTER not in _fills(svg)


def test_the_axis_is_logarithmic_and_centred_at_1x() -> None:
    texts = _texts(charts.speedup_bars([charts.Bar("Fast LLM", 4.0)], title="t"))
    ticks = [t for t in texts if re.fullmatch(r"[0-9.]+x", t) and t != "4.00x"]  # not the bar's label
    assert "1x" in ticks and "0.5x" in ticks and "2x" in ticks and "5x" in ticks
    assert ticks.index("1x") == len(ticks) // 2  # as many ticks below 1x as above


def test_passing_kernels_slower_than_the_baseline_show_below_1x_with_significant_figures() -> None:
    svg = charts.speedup_bars([charts.Bar("Slow LLM", 1.0, "100% pass", kernels_only=0.0044)], title="t")
    assert "1.00x (alone 0.0044x)" in _texts(svg)
    assert "0.01x" in _texts(svg)  # the axis reaches below the slow kernels
    assert charts.SLOWER in _fills(svg)  # their marker


def test_no_results_make_an_empty_chart_that_says_so() -> None:
    assert "no results yet" in _texts(charts.speedup_bars([], title="t"))


LONG_TITLE = "Best set per model: overall speedup over the TorchPlan baseline, on every hardware, every scope"
AUDITED = [  # the home chart the audit found clipped, with the committed H200 reports imported
    charts.Bar("DataKernelBench reference - Triton, full Triton-full", 2.76, "100% pass", kernels_only=2.76),
    charts.Bar("DataKernelBench reference - CUDA, full CUDA-full", 2.20, "36% pass", kernels_only=4.35),
    charts.Bar("DataKernelBench example Triton-core", 1.01, "14% pass", kernels_only=1.13),
    charts.Bar("planted bug Triton-full", 1.0, "5% pass", kernels_only=0.48),
    charts.Bar("A model with a name far longer than any row of the chart has room for, " * 2, 40.0),
    charts.Bar("Slow LLM", 0.02, kernels_only=0.01),
    charts.Bar("Broken LLM", 1.0, failure="failed: wrong answer, and a long reason for it too"),
]


def _drawn(bars: list[charts.Bar]) -> tuple[Any, Any]:
    fig = charts.speedup_figure(bars, title=LONG_TITLE, axis_label=charts.AXIS_LABEL + " " + LONG_TITLE)
    fig.savefig(io.BytesIO(), format="svg")  # lays the figure out as the view does
    return fig, FigureCanvasAgg(fig).get_renderer()


def test_every_text_of_a_chart_lies_inside_the_figure() -> None:
    fig, renderer = _drawn(AUDITED)
    (ax,) = fig.axes
    texts = [*fig.texts, *ax.texts, *ax.get_xticklabels()]
    assert len(texts) > 2 * len(AUDITED)
    for text in texts:
        if text.get_visible() and text.get_text():
            assert fig.bbox.contains(*text.get_window_extent(renderer).min), text.get_text()
            assert fig.bbox.contains(*text.get_window_extent(renderer).max), text.get_text()


def test_no_text_of_a_chart_overlaps_its_bars_or_markers() -> None:
    fig, renderer = _drawn(AUDITED)
    (ax,) = fig.axes
    shapes = [*ax.patches, *(line for line in ax.lines if line.get_marker() not in (None, "None", ""))]
    assert len(shapes) == len(AUDITED) + 6  # a bar each, five diamonds and a cross
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        for shape in shapes:
            assert not box.overlaps(shape.get_window_extent(renderer)), (text.get_text(), shape)


def test_a_chart_shown_at_a_phones_width_keeps_its_text_at_least_8_px_high() -> None:
    fig, _ = _drawn(AUDITED)
    phone_px = 340  # a 390 px phone less the page's and the chart panel's padding
    scale = phone_px / (fig.get_figwidth() * 72)  # px per point
    (ax,) = fig.axes
    for text in [*fig.texts, *ax.texts, *ax.get_xticklabels()]:
        assert text.get_fontsize() * scale >= 8, text.get_text()
