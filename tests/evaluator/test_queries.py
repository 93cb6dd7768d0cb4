"""The queries' parameter ranges: one declaration for the random draws and the boundary trials."""

from __future__ import annotations

import random

import pytest

from evaluator.queries import QUERIES
from evaluator.queries.ranges import Dates, Decimals, Integers


def test_ranges_list_their_values_smallest_first_with_the_ends_included() -> None:
    assert Integers(60, 120).ends == (60, 120) and len(Integers(60, 120).values()) == 61
    assert Decimals("0.02", "0.09").values() == tuple(n / 100 for n in range(2, 10))
    assert Dates("1995-03-01", "1995-03-31").ends == ("1995-03-01", "1995-03-31")
    months = Dates("1993-01-01", "1997-10-01", "month").values()
    assert len(months) == 58 and months[:2] == ("1993-01-01", "1993-02-01") and months[-1] == "1997-10-01"
    assert Dates("1993-01-01", "1997-01-01", "year").values() == tuple(
        f"{y}-01-01" for y in range(1993, 1998)
    )


def test_a_range_draws_as_randint_did_so_seeded_draws_are_unchanged() -> None:
    ours, theirs = random.Random(3), random.Random(3)
    assert [Integers(60, 120).draw(ours) for _ in range(50)] == [theirs.randint(60, 120) for _ in range(50)]


@pytest.mark.parametrize("number", sorted(QUERIES))
def test_random_draws_stay_in_the_declared_ranges_and_the_defaults_do_too(number: int) -> None:
    query = QUERIES[number]
    rng = random.Random(number)
    # Q18's validation value 300 (the spec's default) lies below its range 312..315.
    defaults = [query.defaults] if number != 18 else []
    for params in [query.random_params(rng) for _ in range(200)] + defaults:
        assert set(params) <= set(query.defaults)
        for name, values in query.ranges.items():
            assert params[name] in values.values(), f"{name}={params[name]!r}"


def test_every_ordered_parameter_of_the_spec_has_a_range() -> None:
    # Integers, decimals and dates; Q11's FRACTION is fixed, Q16's eight sizes share one range.
    ranged = {n: sorted(q.ranges) for n, q in QUERIES.items() if q.ranges}
    assert ranged == {
        1: ["delta"], 2: ["size"], 3: ["date"], 4: ["date"], 5: ["date"], 6: ["date", "discount", "quantity"],
        10: ["date"], 12: ["date"], 14: ["date"], 15: ["date"], 16: ["size1"], 18: ["quantity"],
        19: ["quantity1", "quantity2", "quantity3"], 20: ["date"],
    }  # fmt: skip


def test_boundary_sets_move_one_parameter_to_an_end_and_skip_the_defaults() -> None:
    q19 = QUERIES[19]
    # quantity1..3 default to their minimums 1, 10 and 20: only the maximums are new.
    moved = [{k: v for k, v in p.items() if q19.defaults[k] != v} for p in q19.boundary_sets()]
    assert moved == [{"quantity1": 10}, {"quantity2": 20}, {"quantity3": 30}]
    q16 = QUERIES[16].boundary_sets()
    assert [p["size1"] for p in q16] == [1, 50]


@pytest.mark.parametrize("number", sorted(QUERIES))
def test_the_columns_read_from_a_plans_source_are_the_ones_it_declares(number: int) -> None:
    query = QUERIES[number]
    assert query.columns() == query.plan().COLUMNS
