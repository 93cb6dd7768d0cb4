"""Fresh inputs: the check that a kernel's timed speed is the speed of doing the work.

Timed reps rotate a few parameter sets over a few table clones, and every parameter set of the
correctness trials sits in the runner's memory from its start. A kernel that caches its results
across calls (keyed by parameters, by pointers and parameters, or computed at import for the sets it
finds on its runner's stack) is then timed doing look-ups. So after its timed reps each candidate is
called on `FRESH_SETS` more parameter sets, drawn here from the rest of the spec's ranges, which reach
the runner only through its standard input, read after the timed reps. Per set, first one untimed call
on a copy of the tables whose non-key columns are rolled (`Tables.rolled`: the same shapes, other
answers; a cache keyed by parameters alone now holds a wrong answer, and whatever the new values make
Triton specialise gets compiled), then two timed calls on two of the rotation's table clones, the
second result checked (a cache keyed on pointers misses both; one filled by the first is timed by the
second, which still leaves half the samples doing the work).

Rolled tables keep each column's values but not what valid data guarantees across columns (a line
may ship before its order is placed): a kernel that fails there is not judged for it (the errors are
noted in `stats.fresh`), unless the failure takes its process's GPU context down with it.

A kernel whose fresh calls are much slower than its timed median, beyond what the baseline shows
beside it, was timed on look-ups: rejected. A kernel that reads the runner's standard input itself
leaves the runner nothing to read: rejected too.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from evaluator.judge import compare_result, read_result
from evaluator.queries import Query
from evaluator.report import Status

FRESH_SETS = 3
# Fresh median / timed median, the kernel's over the baseline's, above which the timed reps measured
# look-ups. A cache hit saves the whole call, so a caching kernel's ratio is in the tens or thousands;
# a kernel whose cost varies with its parameters more than the baseline's stays well under 2.
SLOWER = 2.0
# ... and by at least this much: single calls jitter by tens of microseconds on a GPU, by milliseconds on
# a busy CPU (CI's two cores, Triton's interpreter).
SLACK_MS = {"cuda": 0.1, "cpu": 20.0}
DRAWS = 500  # tries at an unused parameter set; Q18's four quantities run out


def fresh_sets(
    query: Query, used: list[dict[str, Any]], seed: int, count: int = FRESH_SETS
) -> list[dict[str, Any]]:
    """Up to `count` parameter sets none of `used`; fewer when the query's parameter space runs out."""
    rng = random.Random(f"{seed}:{query.number}:fresh")
    seen = {_key(p) for p in used}
    found: list[dict[str, Any]] = []
    for _ in range(DRAWS):
        if len(found) == count:
            break
        params = query.random_params(rng)
        if _key(params) not in seen:
            seen.add(_key(params))
            found.append(params)
    return found


def payload(sets: list[dict[str, Any]], seed: int, query: Query) -> bytes:
    """What the runner reads on its standard input: the sets and how far to roll the tables."""
    roll = random.Random(f"{seed}:{query.number}:roll").uniform(0.1, 0.9)
    return json.dumps({"param_sets": sets, "roll": roll}).encode()


def problem(
    query: Query,
    sf_folder: Path,
    out: Path,
    response: dict[str, Any],
    sets: list[dict[str, Any]],
    expected: Callable[[int], dict[str, np.ndarray]],
) -> tuple[str, str] | None:
    """(status, reason) when the kernel's fresh calls fail, are wrong or show it cached; else None."""
    if not sets:
        return None
    facts = response.get("fresh") or {}
    if facts.get("error"):
        return Status.REJECTED, str(facts["error"])
    kernel = facts.get("kernel") or {}
    if kernel.get("error"):
        return Status.RUNTIME_ERROR, f"on a parameter set drawn after its timed reps: {kernel['error']}"
    if len(kernel.get("ms") or []) != 2 * len(sets):
        return Status.RUNTIME_ERROR, "the runner stopped before the fresh parameter sets ran"
    try:
        results = _by_set(read_result(out / "fresh-kernel.npz"))
    except Exception as exc:  # a truncated or forged archive: the kernel's fault
        return Status.WRONG_ANSWER, f"the results of the fresh parameter sets cannot be read: {exc}"
    for index, params in enumerate(sets):
        if index not in results:
            return Status.WRONG_ANSWER, f"no result was kept for the fresh parameter set {params}"
        wrong = compare_result(query, sf_folder, results[index], expected(index))
        if wrong:
            return Status.WRONG_ANSWER, f"on a parameter set drawn after its timed reps, {params}: {wrong}"
    return None


def cached(timing: dict[str, Any], facts: dict[str, Any], device: str = "cuda") -> str | None:
    """Why the timed median measured look-ups (the fresh calls far slower than it), or None."""
    ratio = slowdown(timing, facts)
    if ratio is None:
        return None
    fresh_ms = statistics.median(facts["kernel"]["ms"])
    timed_ms = timing["kernel"]["median_ms"]
    if ratio > SLOWER and fresh_ms - timed_ms > SLACK_MS["cuda" if device.startswith("cuda") else "cpu"]:
        return (
            f"timed at {timed_ms:.3f} ms on the rotation's parameter sets but {fresh_ms:.3f} ms on sets it "
            f"had not seen ({ratio:.1f}x slower than the baseline's same comparison): results are kept "
            "across calls, so the timed reps measured look-ups, not the work"
        )
    return None


def slowdown(timing: dict[str, Any], facts: dict[str, Any]) -> float | None:
    """(kernel's fresh median / its timed median) / the same for the baseline, at least 1 for it."""
    try:
        kernel = statistics.median(facts["kernel"]["ms"]) / timing["kernel"]["median_ms"]
        baseline = statistics.median(facts["baseline"]["ms"]) / timing["baseline"]["median_ms"]
    except (KeyError, TypeError, ValueError, ZeroDivisionError, statistics.StatisticsError):
        return None
    return kernel / max(1.0, baseline)


def _by_set(arrays: dict[str, np.ndarray]) -> dict[int, dict[str, np.ndarray]]:
    """`f<index>_<column>` keys, as the runner writes them, back to one result per set."""
    results: dict[int, dict[str, np.ndarray]] = {}
    for key, array in arrays.items():
        index, _, column = key.partition("_")
        results.setdefault(int(index[1:]), {})[column] = array
    return results


def _key(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, default=str)
