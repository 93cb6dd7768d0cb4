"""Trials that check something: enough parameter sets whose answers are not vacuous.

An answer with no rows, or whose aggregates are all NULL, is matched by a kernel that computes nothing
(returns no rows, or NaN). Random draws from the spec's ranges select nothing more often at small scale
factors (Q19's brand and quantity combinations, Q17's brand and container at SF0.01), so a query's trials
are topped up with further seeded draws until every scale factor has a few answers with something in
them. Where no draw in the spec's range can have one (Q18 at SF0.1 and below), the cap ends the search
and `Trials.coverage` says so (docs/evaluation.md, "Correctness").
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluator.queries import Query

MINIMUM = 3  # non-vacuous trials wanted at each scale factor
MAX_DRAWS = 30  # further random draws at most, used or not (Q18's four quantities run out at once)


@dataclass(frozen=True)
class Trials:
    """The parameter sets to run, the same list at every scale factor, and their answers."""

    params: list[dict[str, Any]]
    answers: dict[tuple[int, int], dict[str, np.ndarray]]  # (phase, index into params) -> answer
    coverage: list[int]  # per phase: how many of the answers are not vacuous


def vacuous(answer: dict[str, np.ndarray]) -> bool:
    """True when the answer has no rows, or every value of every float column is NULL (NaN).

    Float columns are where aggregates over no rows land as NULL (evaluator/tpch/reference.py); an
    answer made only of exact columns is vacuous only when empty.
    """
    columns = list(answer.values())
    if not columns or len(columns[0]) == 0:
        return True
    floats = [column for column in columns if np.issubdtype(column.dtype, np.floating)]
    return bool(floats) and all(np.isnan(column).all() for column in floats)


def choose_trials(
    query: Query,
    folders: list[Path],
    sets: list[dict[str, Any]],
    seed: int,
    answer: Callable[[int, dict[str, Any]], dict[str, np.ndarray]],
    minimum: int = MINIMUM,
    max_draws: int = MAX_DRAWS,
) -> Trials:
    """`sets` (all kept, in order), then further seeded random draws until every phase (scale factor,
    `folders[phase]`) has `minimum` non-vacuous answers or `max_draws` draws were made.

    `answer(phase, params)` is DuckDB's answer at `folders[phase]`. A draw already in the list counts
    towards the cap and is skipped; a draw vacuous at every phase still short of `minimum` is dropped
    without being answered at the others. Deterministic in `seed` and the answers.
    """
    params = [dict(p) for p in sets]
    phases = range(len(folders))
    answers = {(phase, index): answer(phase, p) for index, p in enumerate(params) for phase in phases}
    coverage = [sum(not vacuous(answers[(phase, i)]) for i in range(len(params))) for phase in phases]
    # Its own stream: the trials' random sets and the fresh sets (evaluator/harness/fresh.py) stay as
    # they were.
    rng = random.Random(f"{seed}:{query.number}:coverage")
    seen = {_key(p) for p in params}
    for _ in range(max_draws):
        short = [phase for phase in phases if coverage[phase] < minimum]
        if not short:
            break
        candidate = query.random_params(rng)
        if _key(candidate) in seen:
            continue
        seen.add(_key(candidate))
        found = {phase: answer(phase, candidate) for phase in short}
        if all(vacuous(a) for a in found.values()):
            continue
        index = len(params)
        params.append(candidate)
        for phase in phases:
            answers[(phase, index)] = found[phase] if phase in found else answer(phase, candidate)
            coverage[phase] += not vacuous(answers[(phase, index)])
    return Trials(params, answers, coverage)


def _key(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, default=str)
