"""Validate TorchPlans against DuckDB: `python -m evaluator validate --sf X --device D`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from evaluator.harness.compare import compare, to_numpy
from evaluator.harness.trials import MINIMUM, choose_trials
from evaluator.queries import Query
from evaluator.tpch.generate import connect
from evaluator.tpch.load import decode_strings, load_tables
from evaluator.tpch.reference import reference_answer


@dataclass
class Validation:
    query: int
    trials: int
    passed: bool
    reason: str
    plan_ms: float  # slowest eager call of the trials, a rough figure (bench measures properly)
    duckdb_ms: float
    covered: int = 0  # trials whose answer is not vacuous (evaluator/harness/trials.py)


def decode_result(
    query: Query, result: object, sf_folder: Path, strings: dict[str, tuple[str, str]] | None = None
) -> dict[str, np.ndarray]:
    """A `run_query` result on the host with string positions decoded: ready to compare. `strings`: the
    result columns holding positions, when not the query's (a generated program's STRINGS)."""
    arrays = to_numpy(result)
    for name, (table, column) in (query.strings if strings is None else strings).items():
        if name in arrays:
            arrays[name] = decode_strings(sf_folder, table, column, arrays[name])
    return arrays


def run_plan(query: Query, tables, sf_folder: Path, params: dict[str, Any]) -> dict[str, np.ndarray]:
    """The TorchPlan's decoded result for one parameter set."""
    return decode_result(query, query.plan().run_query(tables, **params), sf_folder)


def validate_query(
    query: Query,
    sf_folder: Path,
    device: str = "cpu",
    random_sets: int = 5,
    seed: int = 0,
    run_query: Callable[..., Any] | None = None,
) -> Validation:
    """The TorchPlan (or `run_query`, a full-scope kernel's) against DuckDB on `Query.parameter_sets`,
    topped up with draws until at least three answers are not vacuous (evaluator/harness/trials.py); a
    passing query short of three says so in `reason`."""
    tables = load_tables(sf_folder, query.columns(), device)
    slowest = duck = 0.0

    def answer(phase: int, params: dict[str, Any]) -> dict[str, np.ndarray]:
        nonlocal duck
        started = time.perf_counter()
        expected = reference_answer(sf_folder, query, params, con=con)
        duck = max(duck, time.perf_counter() - started)
        return expected

    con = connect(Path(sf_folder) / "tpch.duckdb", read_only=True)  # one warm buffer pool for all sets
    try:
        trials = choose_trials(query, [sf_folder], query.parameter_sets(random_sets, seed), seed, answer)
    finally:
        con.close()
    for index, params in enumerate(trials.params):
        started = time.perf_counter()
        if run_query is None:
            actual = run_plan(query, tables, sf_folder, params)
        else:
            actual = decode_result(query, run_query(tables.clone(), **params), sf_folder)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        slowest = max(slowest, time.perf_counter() - started)
        problem = compare(actual, trials.answers[(0, index)], query.order_by)
        if problem:
            return Validation(
                query.number,
                index + 1,
                False,
                f"{params}: {problem}",
                slowest * 1e3,
                duck * 1e3,
                trials.coverage[0],
            )
    covered = trials.coverage[0]
    note = f"{covered} of {len(trials.params)} answers not vacuous" if covered < MINIMUM else ""
    return Validation(query.number, len(trials.params), True, note, slowest * 1e3, duck * 1e3, covered)
