"""The trusted side's judging: DuckDB's expected answers, and a result compared with one.

Used by evaluator/harness/session.py; never imports a kernel. Results arrive as plain arrays
(evaluator/results.py); anything that fails while reading one is the kernel's fault.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from evaluator.harness.compare import compare
from evaluator.harness.trials import Trials, choose_trials
from evaluator.queries import Query
from evaluator.tpch.generate import connect
from evaluator.tpch.load import decode_strings
from evaluator.tpch.reference import reference_answer


class Answers:
    """DuckDB's expected answers for every (scale factor, parameter set), computed in a background
    thread from the moment the runners start, so that they are ready when their results are.

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
        fresh: Sequence[dict[str, Any]] = (),
        cores: frozenset[int] | None = None,
        seed: int = 0,
    ) -> None:
        # On `cores` (evaluator/harness/cores.py): the pool's thread opens the connections, so DuckDB's worker
        # threads start there too.
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
        self._threads = len(cores) if cores else max(1, (os.cpu_count() or 2) // 2)
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
