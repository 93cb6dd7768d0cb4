"""Disjoint CPU cores for the harness, the runners and DuckDB's answers, on a GPU host.

The harness computes a query's expected answers with DuckDB while the runners start and run their trials
(evaluator/harness/judge.py; since 0.6.6 it holds DuckDB during the timing phase). A timed call is host
work too (Python, launches, synchronize): on cores DuckDB keeps busy it is slower and varies with what
DuckDB happens to be doing. And a speedup compares two
runners' host work: on a lent host one core can run 10% slower than another for minutes, so the
baseline's runner and the kernel's, on different cores, differed by that much from one machine to the
next (harness 0.5.0, docs/evaluation.md). So on CUDA, with at least four cores, DuckDB gets one half of
this process's cores, the harness (which spins on the runners' answers) the other half but one core,
and both runners are timed on that one (they are timed in turn and wait on their channel without
spinning between batches: evaluator/runner/commands.py). Linux sets the affinity per thread and a child
inherits its parent thread's: the harness pins itself (`pinned`), so the runners start on its cores
(start-up, imports and builds side by side), and each moves its thread to the runners' core when
armed for its first timed batch; DuckDB's instance is opened on DuckDB's half, so its workers run
there, and so does each query's answering thread (`Database(cores=...)`, `Answers(cores=...)`). On a
CPU evaluation the timings only show a kernel runs: no split.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

MIN_CORES = 4


@dataclass(frozen=True)
class Split:
    harness: frozenset[int]
    runners: frozenset[int]
    answers: frozenset[int]

    def describe(self) -> dict[str, list[int]]:
        return {name: sorted(getattr(self, name)) for name in ("harness", "runners", "answers")}


def split(device: str) -> Split | None:
    """The cores of each part, or None where there is no split to make."""
    if not device.startswith("cuda") or not hasattr(os, "sched_getaffinity"):
        return None
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < MIN_CORES:
        return None
    half = len(cores) // 2
    return Split(frozenset(cores[half:-1]), frozenset(cores[-1:]), frozenset(cores[:half]))


@contextmanager
def pinned(cores: frozenset[int] | None) -> Iterator[None]:
    """This thread on `cores` (None: as it is) while the block runs, then back where it was."""
    if cores is None:
        yield
        return
    previous = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cores)
    try:
        yield
    finally:
        os.sched_setaffinity(0, previous)
