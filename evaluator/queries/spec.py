"""What the benchmark knows about one query, without importing torch."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import random
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from evaluator.queries.ranges import Range


@dataclass(frozen=True)
class Query:
    number: int
    name: str
    # DuckDB SQL with `{param}` placeholders; DECIMAL, DATE and INTERVAL arithmetic stays in SQL so that
    # DuckDB's answer is exact. The text follows the TPC-H spec's query, in DuckDB's dialect.
    sql_template: str
    defaults: dict[str, Any]
    # Substitution parameters drawn from the TPC-H spec's ranges (clause 2.4) with a seeded generator.
    random_params: Callable[[random.Random], dict[str, Any]]
    # The ORDER BY's result columns, in order: rows are compared in that order, rows with equal sort
    # keys as a set. Empty: the rows are compared as a multiset.
    order_by: tuple[str, ...] = ()
    # String result columns: result name -> (table, column) it comes from. The kernel returns int64
    # positions: a code into the column's sorted dictionary, or a row index into the free-text column.
    strings: dict[str, tuple[str, str]] = field(default_factory=dict)
    # The parameters with an ordered range (integers, decimals, dates), the same ranges random_params
    # draws from: each gets a trial at its minimum and one at its maximum (`boundary_sets`).
    ranges: dict[str, Range] = field(default_factory=dict)
    # The smallest scale factor at which draws from the ranges have answers with rows, where the
    # smaller ones have none: an evaluation whose scale factors are all below it checks the query there
    # too (docs/evaluation.md, "Correctness").
    coverage_scale_factor: float | None = None

    @property
    def slug(self) -> str:
        return f"q{self.number:02d}"

    def sql(self, **params: Any) -> str:
        return self.sql_template.format(**{**self.defaults, **params})

    def boundary_sets(self) -> list[dict[str, Any]]:
        """Per ranged parameter, the defaults with it at its minimum, then at its maximum; none equal to
        the defaults, none twice."""
        found: list[dict[str, Any]] = []
        for name, values in self.ranges.items():
            for end in values.ends:
                params = {**self.defaults, name: end}
                if params != self.defaults and params not in found:
                    found.append(params)
        return found

    def parameter_sets(self, random_sets: int, seed: int) -> list[dict[str, Any]]:
        """What a query's trials run, in order: the spec's defaults, then each ranged parameter at its
        minimum and its maximum (`boundary_sets`), then `random_sets` parameter sets drawn with `seed`
        (an evaluation's secret one)."""
        rng = random.Random(f"{seed}:{self.number}")
        random_draws = [self.random_params(rng) for _ in range(random_sets)]
        return [dict(self.defaults), *self.boundary_sets(), *random_draws]

    def with_core(self, core: Callable[..., Any], plan: ModuleType | None = None) -> Callable[..., Any]:
        """The TorchPlan's own run_query (or `plan`'s: a generated one), its globals seeing `core` as its
        _query_core: a core-scope kernel, or the plan's core under torch.compile."""
        plan_run = (plan or self.plan()).run_query
        globals_ = dict(plan_run.__globals__, _query_core=core)
        run = types.FunctionType(plan_run.__code__, globals_, plan_run.__name__, plan_run.__defaults__)
        run.__kwdefaults__ = plan_run.__kwdefaults__
        return run

    def plan(self) -> ModuleType:
        """The TorchPlan module (imports torch)."""
        return importlib.import_module(f"evaluator.torchplan.plans.{self.slug}")

    def plan_source(self) -> str:
        return inspect.getsource(self.plan())

    def columns(self) -> dict[str, tuple[str, ...]]:
        """Columns the query must read, per table: what is loaded and what the roofline counts. The
        plan's COLUMNS, read from its source: the harness, which counts them, does not import torch."""
        return _plan_columns(self.slug)


@functools.cache
def _plan_columns(slug: str) -> dict[str, tuple[str, ...]]:
    source = (Path(__file__).resolve().parents[1] / "torchplan" / "plans" / f"{slug}.py").read_text()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "COLUMNS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise LookupError(f"the TorchPlan {slug} has no COLUMNS literal")
