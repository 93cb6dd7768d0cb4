"""The headline chart: a log axis centred at 1x, slower drawn as slower."""

from __future__ import annotations

import re

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
    assert "1.00x  100% pass  (kernels alone 0.0044x)" in _texts(svg)
    assert "0.01x" in _texts(svg)  # the axis reaches below the slow kernels
    assert charts.SLOWER in _fills(svg)  # their marker


def test_no_results_make_an_empty_chart_that_says_so() -> None:
    assert "no results yet" in _texts(charts.speedup_bars([], title="t"))
