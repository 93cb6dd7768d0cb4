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


def test_rotated_tables_are_valid_data_with_the_same_joins_under_other_keys(sf001: Path) -> None:
    columns = {
        "customer": ["c_custkey", "c_mktsegment", "c_name"],
        "orders": ["o_orderkey", "o_custkey", "o_orderdate", "o_comment"],
        "lineitem": ["l_orderkey", "l_linenumber", "l_shipdate", "l_quantity", "l_suppkey"],
    }
    tables = load_tables(sf001, columns)
    rotated = tables.rotated(0.7)
    for name, keys in (("customer", ["c_custkey"]), ("orders", ["o_orderkey"])):
        for column, values in rotated[name].items():
            assert values.data_ptr() != tables[name][column].data_ptr()
            assert torch.equal(values, tables[name][column]) == (column in keys), (name, column)
    line, order = rotated["lineitem"], rotated["orders"]
    keys = line["l_orderkey"]
    assert bool((keys[1:] >= keys[:-1]).all()) and not torch.equal(keys, tables["lineitem"]["l_orderkey"])
    assert set(keys.tolist()) == set(order["o_orderkey"].tolist())

    def rows(table, names):
        return Counter(zip(*(_values(table[c]) for c in names), strict=True))

    # Whole rows moved: each table holds the same rows (its primary key aside), and an order's lines
    # the same lines, numbered 1..n in their order.
    customers = ["c_mktsegment", "c_name"]
    assert rows(rotated["customer"], customers) == rows(tables["customer"], customers)
    assert rows(rotated["orders"], ["o_comment"]) == rows(tables["orders"], ["o_comment"])

    def joined(t):
        o, li = t["orders"], t["lineitem"]
        place = {k: i for i, k in enumerate(o["o_orderkey"].tolist())}
        at = torch.tensor([place[k] for k in li["l_orderkey"].tolist()])
        return Counter(
            zip(
                o["o_custkey"][at].tolist(),
                o["o_orderdate"][at].tolist(),
                *(li[c].tolist() for c in ("l_linenumber", "l_shipdate", "l_quantity", "l_suppkey")),
                strict=True,
            )
        )

    assert joined(rotated) == joined(tables)
    dates = dict(zip(order["o_orderkey"].tolist(), order["o_orderdate"].tolist(), strict=True))
    assert all(ship > dates[k] for k, ship in zip(keys.tolist(), line["l_shipdate"].tolist(), strict=True))
    starts = torch.ones_like(keys, dtype=torch.bool)
    starts[1:] = keys[1:] != keys[:-1]
    assert bool((line["l_linenumber"][starts] == 1).all())


def _values(column: torch.Tensor) -> list:
    """A column's values, a free-text matrix's as bytes per row (hashable)."""
    return column.tolist() if column.dim() == 1 else [bytes(row) for row in column.tolist()]


def test_every_torchplan_runs_on_rotated_tables_and_lineitem_alone_answers_the_same(sf001: Path) -> None:
    """Rotated tables are valid data: the baseline must run on them (a failure there is the harness's),
    and a query over lineitem alone sees the same rows, so gives the same answer."""
    for number, query in QUERIES.items():
        tables = load_tables(sf001, query.columns())
        params = query.parameter_sets(1, seed=number)[0]
        answer = query.plan().run_query(tables.rotated(0.6), **params)
        if set(query.columns()) == {"lineitem"}:
            expected = query.plan().run_query(tables, **params)
            assert all(torch.allclose(answer[c], expected[c], equal_nan=True) for c in expected), number


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
