"""Trials that check something: vacuous answers are topped up with further draws, per scale factor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from evaluator.harness.trials import choose_trials, vacuous
from evaluator.queries import QUERIES
from evaluator.tpch.reference import reference_answer


def test_an_answer_with_no_rows_or_only_null_aggregates_is_vacuous() -> None:
    assert vacuous({"revenue": np.array([np.nan])})
    assert vacuous({"k": np.array([], dtype=np.int64), "v": np.array([])})
    assert vacuous({"k": np.array([1, 2]), "v": np.array([np.nan, np.nan]), "w": np.array([np.nan, np.nan])})
    assert not vacuous({"revenue": np.array([0.0])})
    assert not vacuous({"k": np.array([1, 2]), "v": np.array([np.nan, 3.0])})
    assert not vacuous({"s_name": np.array(["Supplier#1"]), "numwait": np.array([4])})


def _answers(query_number: int, folders: list[Path]) -> tuple[Any, list[tuple[int, dict]]]:
    calls: list[tuple[int, dict]] = []
    query = QUERIES[query_number]

    def answer(phase: int, params: dict) -> dict[str, np.ndarray]:
        calls.append((phase, params))
        return reference_answer(folders[phase], query, params)

    return answer, calls


def test_choose_trials_draws_again_where_the_answer_is_vacuous_and_reports_coverage(sf001: Path) -> None:
    q17 = QUERIES[17]
    answer, _ = _answers(17, [sf001])
    # At SF0.01 the spec's defaults (Brand#23, MED BOX) select no part: avg_yearly is NULL.
    trials = choose_trials(q17, [sf001], [dict(q17.defaults)], seed=4, answer=answer)
    assert trials.params[0] == q17.defaults and vacuous(trials.answers[(0, 0)])
    assert trials.coverage == [3] and len(trials.params) == 4
    assert [vacuous(trials.answers[(0, i)]) for i in range(4)] == [True, False, False, False]
    assert choose_trials(q17, [sf001], [dict(q17.defaults)], seed=4, answer=answer).params == trials.params


def test_choose_trials_keeps_the_given_sets_and_stops_at_the_cap_where_no_draw_can_help(sf001: Path) -> None:
    q18 = QUERIES[18]
    answer, calls = _answers(18, [sf001])
    sets = q18.parameter_sets(2, seed=1)  # 300, then 312 and 315, then two draws from 312..315
    trials = choose_trials(q18, [sf001], sets, seed=1, answer=answer)
    # Only the spec's 300 has an order above it at SF0.01; 313 and 314 were tried and dropped.
    assert trials.params == sets and trials.coverage == [1]
    assert {p["quantity"] for _, p in calls} == {300, 312, 313, 314, 315}


def test_every_scale_factor_gets_the_same_list_and_its_own_count() -> None:
    q19 = QUERIES[19]
    folders = [Path("small"), Path("main")]
    # A fake answer: at the small scale factor only quantity1 = 7 selects rows; everything does at main.
    asked: list[tuple[int, dict]] = []

    def answer(phase: int, params: dict) -> dict[str, np.ndarray]:
        asked.append((phase, params))
        empty = phase == 0 and params["quantity1"] != 7
        return {"revenue": np.array([np.nan if empty else 1.0])}

    sets = q19.parameter_sets(2, seed=2)  # enough at the main scale factor already
    trials = choose_trials(q19, folders, sets, seed=2, answer=answer, max_draws=200)
    assert trials.params[: len(sets)] == sets
    assert trials.coverage[0] == 3 and trials.coverage[1] == len(trials.params)
    assert set(trials.answers) == {(phase, i) for phase in (0, 1) for i in range(len(trials.params))}
    assert [p["quantity1"] for p in trials.params[len(sets) :]] == [7, 7, 7]
    # A draw vacuous where coverage is short is dropped without asking the main scale factor.
    dropped = [p for phase, p in asked if phase == 0 and p not in trials.params]
    assert dropped and not any(phase == 1 and p in dropped for phase, p in asked)


def test_the_draw_cap_bounds_the_work() -> None:
    q19 = QUERIES[19]
    asked: list[dict] = []

    def nothing(phase: int, params: dict) -> dict[str, np.ndarray]:
        asked.append(params)
        return {"revenue": np.array([np.nan])}

    trials = choose_trials(q19, [Path("sf")], [dict(q19.defaults)], seed=3, answer=nothing, max_draws=7)
    assert trials.params == [q19.defaults] and trials.coverage == [0] and len(asked) == 1 + 7
