"""Every TorchPlan matches DuckDB at SF0.01 and SF0.1 with the spec's defaults and random parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.queries import QUERIES
from evaluator.validate import validate_query


@pytest.mark.parametrize("number", sorted(QUERIES))
def test_the_torchplan_matches_duckdb_at_sf001(number: int, sf001: Path) -> None:
    result = validate_query(QUERIES[number], sf001, random_sets=5, seed=11)
    assert result.passed, result.reason
    assert result.trials == 6


@pytest.mark.parametrize("number", sorted(QUERIES))
def test_the_torchplan_matches_duckdb_at_sf01(number: int, sf01: Path) -> None:
    result = validate_query(QUERIES[number], sf01, random_sets=5, seed=12)
    assert result.passed, result.reason
