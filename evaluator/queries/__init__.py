"""The benchmark's queries: SQL, substitution parameters, result shape, and the TorchPlan baseline.

Each query is a small module `evaluator/queries/qNN.py` (pure Python, no torch: the web app imports
these) that defines a `QUERY = Query(...)`; its TorchPlan is `evaluator/torchplan/plans/qNN.py`.
"""

from __future__ import annotations

import importlib

from evaluator.queries.spec import Query

__all__ = ["QUERIES", "Query", "get_query"]


def _discover() -> dict[int, Query]:
    found = {}
    for number in range(1, 23):
        try:
            module = importlib.import_module(f"evaluator.queries.q{number:02d}")
        except ModuleNotFoundError as exc:
            if exc.name != f"evaluator.queries.q{number:02d}":
                raise
            continue
        found[number] = module.QUERY
    return found


QUERIES: dict[int, Query] = _discover()


def get_query(number: int) -> Query:
    try:
        return QUERIES[number]
    except KeyError:
        raise KeyError(f"Q{number} is not in the benchmark (have: {sorted(QUERIES)})") from None
