"""The trusted side's reading of what a runner wrote: expected answers and result files.

Used by evaluator/harness.py; never imports a kernel. Every file read here was written by untrusted
code, so it is loaded as plain arrays (never unpickled) and any failure to read it is the kernel's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from evaluator.compare import compare
from evaluator.queries import Query
from evaluator.timing import verified
from evaluator.tpch.generate import connect
from evaluator.tpch.load import decode_strings
from evaluator.tpch.reference import reference_answer


class Answers:
    """DuckDB's expected answers for every (scale factor, parameter set), computed in a background
    thread from the moment the runner starts, so that they are ready when its results are.

    `phase` indexes the scale factors' folders, `index` the parameter sets (0 = the spec's defaults);
    `fresh(index)` answers the fresh sets at the main scale factor.
    """

    def __init__(
        self,
        query: Query,
        folders: list[Path],
        params: list[dict[str, Any]],
        fresh: list[dict[str, Any]] = (),
        cores: frozenset[int] | None = None,
    ) -> None:
        # On `cores` (evaluator/cores.py): the pool's thread opens the connections, so DuckDB's worker
        # threads start there too.
        pinning = {"initializer": os.sched_setaffinity, "initargs": (0, cores)} if cores else {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dkb-answers", **pinning)
        self._threads = len(cores) if cores else max(1, (os.cpu_count() or 2) // 2)
        self._connections: dict[Path, duckdb.DuckDBPyConnection] = {}  # used by the pool's one thread
        self._futures: dict[tuple[int, int], Future[dict[str, np.ndarray]]] = {
            (phase, index): self._pool.submit(self._answer, folder, query, p)
            for phase, folder in enumerate(folders)
            for index, p in enumerate(params)
        }
        # The fresh sets (evaluator/fresh.py) run at the main scale factor only, after the timed reps.
        self._fresh = [self._pool.submit(self._answer, folders[-1], query, p) for p in fresh]
        self._pool.submit(self._disconnect)

    def _answer(self, folder: Path, query: Query, params: dict[str, Any]) -> dict[str, np.ndarray]:
        """One connection per scale factor for all the sets: its buffer pool stays warm. Half the host's
        cores (on a GPU host its own half): the runner times its calls meanwhile, and a saturated host
        delays its kernel launches."""
        if folder not in self._connections:
            con = connect(Path(folder) / "tpch.duckdb", read_only=True)
            con.execute(f"SET threads = {self._threads}")
            self._connections[folder] = con
        return reference_answer(folder, query, params, con=self._connections[folder])

    def _disconnect(self) -> None:
        for con in self._connections.values():
            con.close()
        self._connections.clear()

    def get(self, phase: int, index: int) -> dict[str, np.ndarray]:
        return self._futures[(phase, index)].result()

    def fresh(self, index: int) -> dict[str, np.ndarray]:
        return self._fresh[index].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._disconnect()  # when the pool's last task was cancelled


def read_result(path: Path, prefix: str = "") -> dict[str, np.ndarray]:
    """The arrays of one result in an `.npz` the runner wrote (keys `prefix + column`)."""
    with np.load(path, allow_pickle=False) as data:  # untrusted file: never unpickle
        return {name[len(prefix) :]: data[name] for name in data.files if name.startswith(prefix)}


def compare_result(
    query: Query, sf_folder: Path, actual: dict[str, np.ndarray], expected: dict[str, np.ndarray]
) -> str | None:
    """The first difference between a result (string columns still as positions) and the answer."""
    try:
        actual = dict(actual)
        for name, (table, column) in query.strings.items():
            if name in actual:
                actual[name] = decode_strings(sf_folder, table, column, actual[name])
    except Exception as exc:  # whatever an untrusted file does to the decoder is the kernel's fault
        return f"the result cannot be read: {exc}"
    return compare(actual, expected, query.order_by)


def compare_file(query: Query, sf_folder: Path, path: Path, expected: dict[str, np.ndarray]) -> str | None:
    if not path.exists():
        return "no result was written"
    try:
        actual = read_result(path)
    except Exception as exc:  # a truncated or forged archive: the kernel's fault
        return f"the result cannot be read: {exc}"
    return compare_result(query, sf_folder, actual, expected)


def timed_problem(
    query: Query,
    sf_folder: Path,
    out: Path,
    name: str,
    response: dict[str, Any],
    verify: dict[str, Any],
    params: list[dict[str, Any]],
    expected: Callable[[int], dict[str, np.ndarray]],
) -> str | None:
    """The first timed rep of candidate `name` whose result is wrong or was not kept; None if all match.

    The reps to check are drawn here, with the seed the runner drew them with (`timing.verified`),
    plus the last one; rep `r` ran parameter set `r % len(params)`. `expected(i)` is set i's answer.
    """
    facts = (response.get("timed") or {}).get(name)
    stats = (response.get("timing") or {}).get(name) or {}
    # Every timed rep, also those of rounds the statistics set aside (a slowed host): all are results.
    n = stats.get("n", 0) + stats.get("set_aside", 0)
    if not n:
        return None
    if not facts:
        return "no result of the timed reps was kept"
    if facts.get("error"):
        return str(facts["error"])
    reps = sorted({r for r in range(n) if verified(verify["seed"], verify["share"], r)} | {n - 1})
    if facts.get("capped_at") is not None:
        reps = [r for r in reps if r < int(facts["capped_at"])]
    try:
        by_rep: dict[int, dict[str, np.ndarray]] = {}
        for key, array in read_result(out / f"timed-{name}.npz").items():
            rep, _, column = key.partition("_")
            by_rep.setdefault(int(rep[1:]), {})[column] = array
        same = {int(r): int(e) for r, e in (facts.get("same_as") or {}).items()}
    except Exception as exc:  # a truncated or forged archive: the candidate's fault
        return f"the results of the timed reps cannot be read: {exc}"
    checked: set[int] = set()
    for rep in reps:
        source = rep if rep in by_rep else same.get(rep)
        if source is None or source not in by_rep or source % len(params) != rep % len(params):
            return f"the result of timed rep {rep + 1} was not kept"
        if source in checked:
            continue
        problem = compare_result(query, sf_folder, by_rep[source], expected(rep % len(params)))
        if problem:
            return f"timed rep {rep + 1} of {n} {params[rep % len(params)]}: {problem}"
        checked.add(source)
    return None
