"""Disjoint CPU cores for the runner and for DuckDB's answers, on a GPU host.

The harness computes a query's expected answers with DuckDB while the runner times its calls
(evaluator/judge.py). A timed call is host work too (Python, launches, synchronize): on cores DuckDB
keeps busy it is slower and varies with what DuckDB happens to be doing. So on CUDA, with at least
four cores, the runner gets one half of this process's cores and DuckDB the other. Linux sets the
affinity per thread and a child inherits its parent thread's: the harness's thread that starts the
runners is pinned to the runner's half (`pinned`), DuckDB's thread, which starts DuckDB's workers, to
the other (`Answers(cores=...)`). On a CPU evaluation the timings only show a kernel runs: no split.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

MIN_CORES = 4


def split(device: str) -> tuple[frozenset[int], frozenset[int]] | None:
    """(the runner's cores, DuckDB's cores), or None where there is no split to make."""
    if not device.startswith("cuda") or not hasattr(os, "sched_getaffinity"):
        return None
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < MIN_CORES:
        return None
    half = len(cores) // 2
    return frozenset(cores[half:]), frozenset(cores[:half])


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
