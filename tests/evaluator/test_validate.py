"""Query.parameter_sets: the defaults, each ranged parameter at both ends, then the seeded random draws."""

from __future__ import annotations

import pytest

from evaluator.queries import QUERIES


def test_q1s_delta_gets_a_trial_at_its_minimum_and_one_at_its_maximum() -> None:
    sets = QUERIES[1].parameter_sets(4, seed=5)
    assert sets[:3] == [{"delta": 90}, {"delta": 60}, {"delta": 120}]
    assert len(sets) == 7


@pytest.mark.parametrize("number", sorted(QUERIES))
def test_parameter_sets_are_defaults_then_boundaries_then_random_draws_deterministic_in_the_seed(
    number: int,
) -> None:
    query = QUERIES[number]
    sets = query.parameter_sets(4, seed=9)
    boundaries = query.boundary_sets()
    assert sets[0] == query.defaults and sets[1 : 1 + len(boundaries)] == boundaries
    assert query.defaults not in boundaries
    assert all(a != b for i, a in enumerate(boundaries) for b in boundaries[i + 1 :])
    assert len(sets) == 1 + len(boundaries) + 4
    assert query.parameter_sets(4, seed=9) == sets
    if query.number != 18:  # Q18's four quantities leave little room for two seeds to differ
        assert query.parameter_sets(4, seed=10)[1 + len(boundaries) :] != sets[1 + len(boundaries) :]


def test_with_four_random_sets_a_query_gets_five_to_ten_trials() -> None:
    counts = {n: len(q.parameter_sets(4, seed=0)) for n, q in QUERIES.items()}
    assert min(counts.values()) == 5 and max(counts.values()) == 10 == counts[6]
