"""Validate TorchPlans against DuckDB: `python -m evaluator validate --sf X --device D`."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from evaluator.compare import compare, to_numpy
from evaluator.queries import Query
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


def parameter_sets(query: Query, random_sets: int, seed: int) -> list[dict[str, Any]]:
    """The spec's defaults, then each ranged parameter at its minimum and its maximum (the others at
    their defaults; `Query.boundary_sets`), then `random_sets` seeded random parameter sets."""
    rng = random.Random(f"{seed}:{query.number}")
    random_draws = [query.random_params(rng) for _ in range(random_sets)]
    return [dict(query.defaults), *query.boundary_sets(), *random_draws]


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
    query: Query, sf_folder: Path, device: str = "cpu", random_sets: int = 5, seed: int = 0
) -> Validation:
    tables = load_tables(sf_folder, query.columns(), device)
    slowest = duck = 0.0
    params_list = parameter_sets(query, random_sets, seed)
    for trial, params in enumerate(params_list, start=1):
        started = time.perf_counter()
        expected = reference_answer(sf_folder, query, params)
        duck = max(duck, time.perf_counter() - started)
        started = time.perf_counter()
        actual = run_plan(query, tables, sf_folder, params)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        slowest = max(slowest, time.perf_counter() - started)
        problem = compare(actual, expected, query.order_by)
        if problem:
            return Validation(query.number, trial, False, f"{params}: {problem}", slowest * 1e3, duck * 1e3)
    return Validation(query.number, len(params_list), True, "", slowest * 1e3, duck * 1e3)
