"""The compiled TorchPlans: committed files are what the compiler writes, and they match DuckDB."""

from __future__ import annotations

import importlib
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaluator.harness.compare import compare, to_numpy
from evaluator.queries import QUERIES, Query
from evaluator.torchplan.compiler.regenerate import GENERATED, generate, regenerate
from evaluator.tpch.load import decode_strings, load_tables
from evaluator.tpch.reference import reference_answer

COMPILED = sorted(int(p.stem[1:]) for p in GENERATED.glob("q[0-9][0-9].py"))


def test_regenerating_gives_the_committed_files(tmp_path: Path) -> None:
    outcome = regenerate(tmp_path)
    written = sorted(p.name for p in tmp_path.glob("q*.py"))
    assert written == sorted(p.name for p in GENERATED.glob("q[0-9][0-9].py"))
    for name in written:
        assert (tmp_path / name).read_text() == (GENERATED / name).read_text(), f"{name} is stale"
    assert [n for n, reason in outcome.items() if reason is None] == COMPILED


def test_every_benchmark_query_compiles() -> None:
    assert set(QUERIES) == set(COMPILED)


def _check(query: Query, sf_folder: Path, params: dict[str, Any]) -> str | None:
    module = importlib.import_module(f"evaluator.torchplan.generated.{query.slug}")
    tables = load_tables(sf_folder, module.COLUMNS)
    actual = to_numpy(module.run_query(tables, **params))
    for name, (table, column) in module.STRINGS.items():
        actual[name] = decode_strings(sf_folder, table, column, actual[name])
    return compare(actual, reference_answer(sf_folder, query, params), query.order_by)


@pytest.mark.parametrize("number", COMPILED)
def test_a_compiled_torchplan_matches_duckdb_with_defaults_and_random_params(
    number: int, sf001: Path
) -> None:
    query = QUERIES[number]
    rng = random.Random(f"compiler:{number}")
    for params in [dict(query.defaults)] + [query.random_params(rng) for _ in range(5)]:
        problem = _check(query, sf001, params)
        assert problem is None, f"{params}: {problem}"


# Parameter sets whose aggregate is over no rows at SF0.01 (as in test_torchplans.py): SQL's NULL.
EMPTY = {
    6: {"date": "2030-01-01"},
    14: {"date": "2030-01-01"},
    17: {"brand": "Brand#23", "container": "MED BOX"},
    19: {"brand1": "Brand#35", "brand2": "Brand#54", "quantity1": 2, "quantity3": 23},
}


@pytest.mark.parametrize("number", sorted(EMPTY))
def test_a_compiled_aggregate_over_no_rows_is_nan_as_sqls_null_is(number: int, sf001: Path) -> None:
    params = {**QUERIES[number].defaults, **EMPTY[number]}
    assert np.isnan(reference_answer(sf001, QUERIES[number], params)[_only_column(number)]).all()
    assert _check(QUERIES[number], sf001, params) is None


def _only_column(number: int) -> str:
    return {6: "revenue", 14: "promo_revenue", 17: "avg_yearly", 19: "revenue"}[number]


@pytest.mark.parametrize("number", COMPILED)
def test_a_compiled_torchplan_matches_duckdb_at_sf01(number: int, sf01: Path) -> None:
    query = QUERIES[number]
    rng = random.Random(f"compiler-sf01:{number}")
    for params in [dict(query.defaults)] + [query.random_params(rng) for _ in range(5)]:
        problem = _check(query, sf01, params)
        assert problem is None, f"{params}: {problem}"


@pytest.mark.parametrize("number", COMPILED)
def test_a_compiled_module_names_its_parameters_with_the_query_defaults(number: int) -> None:
    import inspect

    module = importlib.import_module(f"evaluator.torchplan.generated.q{number:02d}")
    signature = inspect.signature(module.run_query)
    defaults = {n: p.default for n, p in signature.parameters.items() if n != "tables"}
    assert defaults == QUERIES[number].defaults
    assert QUERIES[number].sql().strip() in (module.__doc__ or "")
    assert generate(QUERIES[number]) == (GENERATED / f"q{number:02d}.py").read_text()
