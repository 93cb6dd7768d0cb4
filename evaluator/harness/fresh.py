"""Fresh inputs: the check that a kernel's timed speed is the speed of doing the work.

Timed calls rotate a few parameter sets over a few table clones, and every parameter set of the
correctness trials reaches the kernel's runner before its timed calls. A kernel that caches its results
across calls (keyed by parameters, by pointers and parameters, or computed for the sets it has seen) is
then timed doing look-ups; one that builds, per table content, every answer it could be asked for is
timed doing look-ups too. So after the timed calls each candidate is called on `FRESH_SETS` more
parameter sets, drawn here from the rest of the spec's ranges, which the harness sends only now
(evaluator/harness/session.py). Per set: one untimed call on a copy of the tables whose non-key columns are
rolled apart (`Tables.rolled`: the same shapes, other answers; a cache keyed by parameters alone now holds a
wrong answer, and whatever the new values make Triton specialise gets compiled); one timed call on a
copy whose rows moved, whole, under other keys (`Tables.rotated`: valid data the kernel has never seen,
with the same work to do: work it does once per content is timed here); one more untimed call on the
rolled copy (a cache keyed by parameters is left holding its wrong answer: the valid tables' may be
right); then two timed calls on two of the rotation's clones, the second result checked (a cache keyed
on pointers misses both; one filled by the first is timed by the second).

Rolled tables keep each column's values but not what valid data guarantees across columns (a line
may ship before its order is placed): a kernel that fails there is not judged for it (the errors are
noted in `stats.fresh`), unless the failure takes its runner down with it. They cannot be timed for the
check either: what dbgen correlates decides how much work a query has (Q3 selects about 10 times more
orders from rolled tables: both reference sets' Q3 were rejected on that in harness 0.6.3). Rotated
tables are valid, so a kernel that fails on them fails.

A kernel whose fresh calls (`cached`) or first calls on new content (`precomputed`) are much slower than
its timed median, beyond what the baseline shows beside it, was timed on look-ups: rejected. The fresh
calls are compared by their median: a cache filled by the first of a set's two calls answers the second,
so half of them can be fast. The first calls are compared by the fastest: each is on content never seen,
so a precomputation slows every one, while one slow spell of the host slows one of three (an honest CUDA
Q6 core on a lent H100 read 6.37, 0.85 and 2.05 ms against its 0.68 ms median, and was rejected on the
median of the three, 2.5x).
"""

from __future__ import annotations

import json
import random
import statistics
from typing import Any

from evaluator.queries import Query

FRESH_SETS = 3
# Fresh median / timed median, the kernel's over the baseline's, above which the timed reps measured
# look-ups. A cache hit saves the whole call, so a caching kernel's ratio is in the tens or thousands
# (15-500x for the caching attacks on a CPU). On a GPU an honest kernel whose cost varies with its
# parameters more than the baseline's stays well under 2; on a busy two-core CPU, where Triton's
# interpreter is timed, an honest Q6 core read 2.3x (132 ms timed, 302 ms fresh), so the bound is wider.
SLOWER = {"cuda": 2.0, "cpu": 5.0}
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


def rolls(seed: int, query: Query, count: int) -> list[tuple[float, float]]:
    """Per fresh set, how far to roll the tables for its two calls on new content (`Tables.rolled`)."""
    rng = random.Random(f"{seed}:{query.number}:roll")
    return [(rng.uniform(0.05, 0.45), rng.uniform(0.55, 0.95)) for _ in range(count)]


def cached(timing: dict[str, Any], facts: dict[str, Any], device: str = "cuda") -> str | None:
    """Why the timed median measured look-ups (the fresh calls far slower than it), or None."""
    found = _far_slower(timing, facts, "ms", device)
    return found and (
        f"timed at {found[0]:.3f} ms on the rotation's parameter sets but {found[1]:.3f} ms on sets it had "
        f"not seen ({found[2]:.1f}x slower than the baseline's same comparison): results are kept across "
        "calls, so the timed reps measured look-ups, not the work"
    )


def precomputed(timing: dict[str, Any], facts: dict[str, Any], device: str = "cuda") -> str | None:
    """Why the timed median hides work done once per table content (its first calls on new content far
    slower than it), or None."""
    found = _far_slower(timing, facts, "first_ms", device)
    return found and (
        f"timed at {found[0]:.3f} ms on table content it had seen, but even its fastest first call on new "
        f"content took {found[1]:.3f} ms ({found[2]:.1f}x slower than the baseline's same comparison): work "
        "done once per table content and kept is hidden from the timed calls"
    )


def _far_slower(
    timing: dict[str, Any], facts: dict[str, Any], key: str, device: str
) -> tuple[float, float, float] | None:
    """(timed median, the `key` calls' typical time (`_typical`), their slowdown) when those calls were far
    slower than the timed median, beyond what the baseline shows (`SLOWER`, `SLACK_MS`); else None."""
    ratio = slowdown(timing, facts, key)
    if ratio is None:
        return None
    timed_ms, other_ms = timing["kernel"]["median_ms"], _typical(facts["kernel"][key], key)
    kind = "cuda" if device.startswith("cuda") else "cpu"
    far = ratio > SLOWER[kind] and other_ms - timed_ms > SLACK_MS[kind]
    return (timed_ms, other_ms, ratio) if far else None


def slowdown(timing: dict[str, Any], facts: dict[str, Any], key: str = "ms") -> float | None:
    """(kernel's fresh median / its timed median) / the same for the baseline, at least 1 for it; `key`
    "first_ms" compares the fastest first call on new table content instead."""
    try:
        kernel = _typical(facts["kernel"][key], key) / timing["kernel"]["median_ms"]
        baseline = _typical(facts["baseline"][key], key) / timing["baseline"]["median_ms"]
    except (KeyError, TypeError, ValueError, ZeroDivisionError, statistics.StatisticsError):
        return None
    return kernel / max(1.0, baseline)


def _typical(times: list[float], key: str) -> float:
    """The median of the fresh calls; the fastest of the first calls on new content (the module's doc)."""
    return min(times) if key == "first_ms" else statistics.median(times)


def first_slowdown(timing: dict[str, Any], facts: dict[str, Any]) -> float | None:
    return slowdown(timing, facts, "first_ms")


def _key(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, default=str)
