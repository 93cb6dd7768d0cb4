"""The benchmark's queries: SQL, substitution parameters and the TorchPlan that is their baseline."""

from __future__ import annotations

import importlib
import inspect
import random
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Query:
    number: int
    name: str
    # DuckDB SQL with `{param}` placeholders; DECIMAL and DATE arithmetic stays in SQL so DuckDB is exact.
    sql_template: str
    defaults: dict[str, Any]
    # Substitution parameters drawn from the TPC-H spec's ranges (clause 2.4) with a seeded generator.
    random_params: Callable[[random.Random], dict[str, Any]]
    ordered_by: tuple[str, ...] = ()

    @property
    def slug(self) -> str:
        return f"q{self.number:02d}"

    def sql(self, **params: Any) -> str:
        return self.sql_template.format(**{**self.defaults, **params})

    def plan(self) -> ModuleType:
        return importlib.import_module(f"evaluator.torchplan.plans.{self.slug}")

    def plan_source(self) -> str:
        return inspect.getsource(self.plan())

    def columns(self) -> dict[str, tuple[str, ...]]:
        """Columns the query must read, per table: what is loaded and what the roofline counts."""
        return self.plan().COLUMNS


def _q06_params(rng: random.Random) -> dict[str, Any]:
    return {
        "date": f"{rng.randint(1993, 1997)}-01-01",
        "discount": rng.randint(2, 9) / 100,
        "quantity": rng.randint(24, 25),
    }


QUERIES: dict[int, Query] = {
    6: Query(
        number=6,
        name="Forecasting Revenue Change",
        sql_template=(
            "SELECT sum(l_extendedprice * l_discount) AS revenue\n"
            "FROM lineitem\n"
            "WHERE l_shipdate >= DATE '{date}'\n"
            "  AND l_shipdate < DATE '{date}' + INTERVAL 1 YEAR\n"
            "  AND l_discount BETWEEN {discount} - 0.01 AND {discount} + 0.01\n"
            "  AND l_quantity < {quantity}"
        ),
        defaults={"date": "1994-01-01", "discount": 0.06, "quantity": 24},
        random_params=_q06_params,
    ),
}


def get_query(number: int) -> Query:
    try:
        return QUERIES[number]
    except KeyError:
        raise KeyError(f"Q{number} is not in the benchmark yet (have: {sorted(QUERIES)})") from None
