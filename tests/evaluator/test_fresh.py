"""The fresh parameter sets and rolled tables that catch kernels caching results across calls."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import torch

from evaluator.harness import fresh
from evaluator.queries import QUERIES
from evaluator.tpch.load import load_tables


def test_fresh_sets_are_none_of_the_evaluations_sets_and_run_out_with_the_space() -> None:
    q06 = QUERIES[6]
    used = q06.parameter_sets(4, seed=1)
    sets = fresh.fresh_sets(q06, used, seed=1)
    assert len(sets) == fresh.FRESH_SETS
    assert not any(s in used for s in sets) and len({str(s) for s in sets}) == len(sets)
    assert sets != fresh.fresh_sets(q06, used, seed=2)  # drawn with the evaluation's secret seed
    q18 = QUERIES[18]  # four quantities in all
    every = [{"quantity": q} for q in range(312, 316)]
    assert fresh.fresh_sets(q18, every, seed=1) == []


def test_rolled_tables_keep_shapes_and_keys_but_tear_rows_apart(sf001: Path) -> None:
    tables = load_tables(sf001, {"lineitem": ["l_orderkey", "l_quantity", "l_discount", "l_shipmode"]})
    rolled = tables.rolled(0.3)
    line, moved = tables["lineitem"], rolled["lineitem"]
    assert torch.equal(moved["l_orderkey"], line["l_orderkey"])
    assert moved["l_orderkey"].data_ptr() != line["l_orderkey"].data_ptr()
    for column in ("l_quantity", "l_discount", "l_shipmode"):
        assert moved[column].shape == line[column].shape and not torch.equal(moved[column], line[column])
        assert torch.equal(moved[column].sort(dim=0).values, line[column].sort(dim=0).values)

    # Each column by its own shift: rows are not just reordered whole (the multiset of rows changes).
    def rows(table):
        return Counter(zip(table["l_quantity"].tolist(), table["l_discount"].tolist(), strict=True))

    assert rows(moved) != rows(line)


def test_a_kernel_is_judged_cached_only_when_fresh_calls_are_far_slower_than_the_baselines() -> None:
    timing = {"kernel": {"median_ms": 1.0}, "baseline": {"median_ms": 2.0}}
    honest = {"kernel": {"ms": [1.1, 1.3, 0.9]}, "baseline": {"ms": [2.0, 2.4, 2.1]}}
    cached = {"kernel": {"ms": [50.0, 52.0, 51.0]}, "baseline": {"ms": [2.0, 2.4, 2.1]}}
    slow_everywhere = {"kernel": {"ms": [2.5, 2.6, 2.4]}, "baseline": {"ms": [5.0, 5.2, 4.9]}}
    assert fresh.cached(timing, honest) is None
    assert "results are kept across calls" in fresh.cached(timing, cached)
    hiccups = {"kernel": {"ms": [15.0, 14.0, 16.0]}, "baseline": {"ms": [2.0, 2.4, 2.1]}}
    assert fresh.cached(timing, hiccups, device="cuda")  # 14 ms over on a GPU: look-ups
    assert fresh.cached(timing, hiccups, device="cpu") is None  # within a busy CPU's jitter
    assert fresh.cached(timing, cached, device="cpu")
    assert fresh.cached(timing, slow_everywhere) is None  # the baseline slowed as much: the parameters
    assert fresh.slowdown(timing, {"kernel": {"ms": []}}) is None
    # An honest Q6 core on a busy two-core CPU (Triton's interpreter): 2.3x on fresh sets, not look-ups.
    busy = {"kernel": {"median_ms": 132.0}, "baseline": {"median_ms": 40.0}}
    interpreter = {"kernel": {"ms": [302.0, 290.0, 310.0]}, "baseline": {"ms": [40.0, 41.0, 39.0]}}
    assert fresh.cached(busy, interpreter, device="cpu") is None
    assert fresh.cached(busy, interpreter, device="cuda")


def test_a_kernel_is_judged_to_precompute_only_when_its_first_calls_on_new_content_are_far_slower() -> None:
    timing = {"kernel": {"median_ms": 1.0}, "baseline": {"median_ms": 2.0}}
    honest = {"kernel": {"first_ms": [1.2, 1.1, 1.3]}, "baseline": {"first_ms": [2.1, 2.2, 2.0]}}
    cube = {"kernel": {"first_ms": [80.0, 1.0, 79.0]}, "baseline": {"first_ms": [2.1, 2.2, 2.0]}}
    both_slow = {"kernel": {"first_ms": [3.0, 3.1, 2.9]}, "baseline": {"first_ms": [6.0, 6.2, 6.1]}}
    assert fresh.precomputed(timing, honest) is None
    assert "work done once per table content" in fresh.precomputed(timing, cube)
    assert fresh.precomputed(timing, both_slow) is None  # new content costs the baseline as much
    assert fresh.first_slowdown(timing, cube) == pytest.approx(79.0 / 1.05)  # over the baseline's 2.1 / 2.0
