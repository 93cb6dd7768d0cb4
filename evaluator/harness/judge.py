"""The trusted side's judging: DuckDB's expected answers, and a result compared with one.

Used by evaluator/harness/session.py; never imports a kernel. Results arrive as plain arrays
(evaluator/results.py); anything that fails while reading one is the kernel's fault.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from evaluator.harness import cores as pinning
from evaluator.harness.compare import compare
from evaluator.harness.trials import Trials, choose_trials
from evaluator.queries import Query
from evaluator.tpch.load import decode_strings
from evaluator.tpch.reference import reference_answer

# DuckDB's own default is 80% of the host's memory: at SF10 its buffer pool and hash tables took the
# worker to 1.9 GB on the H200, and a process answering Q9 alone to 2.3 GB. Under 384 MB such a process
# peaked at 610 MB, and some answers took 1.5x as long (docs/benchmarks.md, session 11).
MEMORY_LIMIT = "384MB"


class Database:
    """One DuckDB instance for a whole evaluation, every scale factor's file attached to it read-only:
    one buffer pool under one memory limit, whichever queries' answers run at once (the next query's
    start during this one's trials: evaluator/harness/core.py). Each `Answers` reads through cursors of
    its own. Opened on `cores` (evaluator/harness/cores.py): DuckDB's worker threads start with the
    instance and keep the affinity of the thread that opened it. What does not fit spills to a
    private folder, removed on `close`.

    `hold` and `release` keep DuckDB quiet while runners are timed: an answer scans gigabytes at SF10
    on as many threads as the runners' host has to spare, and the timed calls are host work too
    (launches, synchronize) on the same caches and memory."""

    def __init__(
        self, threads: int, memory_limit: str | None = MEMORY_LIMIT, cores: frozenset[int] | None = None
    ) -> None:
        self._spill = tempfile.mkdtemp(prefix="dkb-duckdb-")
        config: dict[str, Any] = {"threads": threads, "temp_directory": self._spill}
        if memory_limit is not None:
            config["memory_limit"] = memory_limit
        with pinning.pinned(cores):
            self._con = duckdb.connect(":memory:", config=config)
        self._names: dict[Path, str] = {}
        self._lock = threading.Lock()  # Answers' threads attach and take cursors side by side
        self._changed = threading.Condition(self._lock)  # an answer began or ended, a hold came or went
        self._answered_s = 0.0  # seconds of answers finished, all queries' together
        self._answering: dict[int, float] = {}  # per thread, when the answer it computes began
        self._holds = 0

    @contextmanager
    def answering(self) -> Iterator[None]:
        """An answer's computing, counted in `busy_s`; it waits for the database to be released."""
        with self._changed:
            self._changed.wait_for(lambda: not self._holds)
            self._answering[threading.get_ident()] = time.monotonic()
        try:
            yield
        finally:
            with self._changed:
                self._answered_s += time.monotonic() - self._answering.pop(threading.get_ident())
                self._changed.notify_all()

    def hold(self) -> None:
        """Once the answers under way have finished, no answer begins until `release`."""
        with self._changed:
            self._holds += 1
            self._changed.wait_for(lambda: not self._answering)

    def release(self) -> None:
        with self._changed:
            self._holds -= 1
            self._changed.notify_all()

    def busy_s(self) -> float:
        """Seconds spent computing answers so far, those under way included: the difference over a
        phase of a query is how long DuckDB answered (this query's or the next's) while it ran."""
        now = time.monotonic()
        with self._lock:
            return self._answered_s + sum(now - began for began in self._answering.values())

    def cursor(self, folder: Path) -> duckdb.DuckDBPyConnection:
        """A connection of the caller's own to the folder's database (attached on first use)."""
        folder = Path(folder).resolve()
        with self._lock:
            if folder not in self._names:
                name = f"sf{len(self._names)}"
                path = str(folder / "tpch.duckdb").replace("'", "''")
                self._con.execute(f"ATTACH '{path}' AS {name} (READ_ONLY)")
                self._names[folder] = name
            cursor = self._con.cursor()
        cursor.execute(f"USE {self._names[folder]}")
        return cursor

    def close(self) -> None:
        with self._lock:
            self._con.close()
        shutil.rmtree(self._spill, ignore_errors=True)

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def answer_threads(cores: frozenset[int] | None) -> int:
    """Half the host's cores (on a GPU host its own half): the runner times its calls meanwhile, and a
    saturated host delays its kernel launches."""
    return len(cores) if cores else max(1, (os.cpu_count() or 2) // 2)


class Answers:
    """DuckDB's expected answers for every (scale factor, parameter set), computed in a background
    thread from the moment the runners start (pausing while the database is held: `Database.hold`), so
    that they are ready when their results are.

    First the trials are chosen (evaluator/harness/trials.py): `candidates` at every scale factor, topped
    up with further draws where too few answers have anything in them; `trials()` waits for that choice.
    `phase` indexes the scale factors' folders, `index` the chosen parameter sets (0 = the spec's
    defaults); `fresh(index)` answers the fresh sets at the main scale factor.
    """

    def __init__(
        self,
        query: Query,
        folders: list[Path],
        candidates: list[dict[str, Any]],
        database: Database,
        fresh: Sequence[dict[str, Any]] = (),
        cores: frozenset[int] | None = None,
        seed: int = 0,
    ) -> None:
        # The pool's thread runs on `cores` (evaluator/harness/cores.py), beside DuckDB's workers.
        self._pool = (
            ThreadPoolExecutor(
                max_workers=1,
                thread_name_prefix="dkb-answers",
                initializer=os.sched_setaffinity,
                initargs=(0, cores),
            )
            if cores
            else ThreadPoolExecutor(max_workers=1, thread_name_prefix="dkb-answers")
        )
        self._database = database
        self._connections: dict[Path, duckdb.DuckDBPyConnection] = {}  # used by the pool's one thread

        def answer(phase: int, params: dict[str, Any]) -> dict[str, np.ndarray]:
            return self._answer(folders[phase], query, params)

        self._trials: Future[Trials] = self._pool.submit(
            choose_trials, query, folders, candidates, seed, answer
        )
        # The fresh sets (evaluator/harness/fresh.py) run at the main scale factor only, after the timed
        # calls.
        self._fresh = [self._pool.submit(self._answer, folders[-1], query, p) for p in fresh]
        self._pool.submit(self._disconnect)

    def _answer(self, folder: Path, query: Query, params: dict[str, Any]) -> dict[str, np.ndarray]:
        """One cursor per scale factor for all the sets."""
        if folder not in self._connections:
            self._connections[folder] = self._database.cursor(folder)
        with self._database.answering():
            try:
                return reference_answer(folder, query, params, con=self._connections[folder])
            except duckdb.OutOfMemoryException:
                # The limit bounds the worker, not what an answer may need: one that cannot be computed
                # under it is computed on a connection of its own, with DuckDB's default limit, rather
                # than failing the evaluation.
                return reference_answer(folder, query, params)

    def _disconnect(self) -> None:
        for con in self._connections.values():
            con.close()
        self._connections.clear()

    def trials(self) -> Trials:
        return self._trials.result()

    def get(self, phase: int, index: int) -> dict[str, np.ndarray]:
        return self.trials().answers[(phase, index)]

    def fresh(self, index: int) -> dict[str, np.ndarray]:
        return self._fresh[index].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._disconnect()  # when the pool's last task was cancelled


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
