"""DuckDB's expected answers through one instance per evaluation (evaluator/harness/judge.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb
import numpy as np
import pytest

from evaluator.harness.judge import MEMORY_LIMIT, Answers, Database
from evaluator.queries import QUERIES
from evaluator.tpch.reference import reference_answer


def _same(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> bool:
    return actual.keys() == expected.keys() and all(
        np.array_equal(actual[k], expected[k], equal_nan=actual[k].dtype.kind == "f") for k in actual
    )


def test_each_scale_factor_answers_from_its_own_file(sf0005: Path, sf001: Path) -> None:
    query = QUERIES[6]
    sets = query.parameter_sets(2, seed=3)
    with Database(threads=1) as database:
        answers = Answers(query, [sf0005, sf001], sets, database)
        try:
            for phase, folder in enumerate([sf0005, sf001]):
                for index, params in enumerate(sets):
                    assert _same(answers.get(phase, index), reference_answer(folder, query, params))
            # Two scale factors' revenues differ: a cursor on the wrong file would not go unseen.
            assert answers.get(0, 0)["revenue"] != answers.get(1, 0)["revenue"]
        finally:
            answers.close()


def test_two_queries_answers_at_once_share_the_instance_and_its_limit(sf001: Path) -> None:
    """The next query's answers start during this one's trials (evaluator/harness/core.py)."""
    with Database(threads=2) as database:
        limit = database.cursor(sf001).execute("SELECT current_setting('memory_limit')").fetchone()[0]
        assert MEMORY_LIMIT == "384MB" and limit == "366.2 MiB"  # DuckDB's MB is 10^6 bytes
        running = {
            number: Answers(QUERIES[number], [sf001], QUERIES[number].parameter_sets(1, 5), database)
            for number in (9, 18)
        }
        try:
            for number, answers in running.items():
                for index, params in enumerate(QUERIES[number].parameter_sets(1, 5)):
                    assert _same(answers.get(0, index), reference_answer(sf001, QUERIES[number], params))
        finally:
            for answers in running.values():
                answers.close()


def test_the_database_counts_the_seconds_spent_answering_those_under_way_included(sf001: Path) -> None:
    """A session subtracts two readings around each phase (`stats.answering_s`): an answer still being
    computed when a phase ends must count up to then."""
    with Database(threads=1) as database:
        before = database.busy_s()
        began, go_on = threading.Event(), threading.Event()

        def answer() -> None:
            with database.answering():
                began.set()
                go_on.wait(10)

        worker = threading.Thread(target=answer)
        worker.start()
        began.wait(10)
        time.sleep(0.2)
        under_way = database.busy_s() - before
        go_on.set()
        worker.join()
        assert 0.2 <= under_way < database.busy_s() - before < 5
        answers = Answers(QUERIES[9], [sf001], QUERIES[9].parameter_sets(1, 5), database)
        try:
            answers.get(0, 0)
        finally:
            answers.close()
        assert database.busy_s() - before > under_way  # the answers' own computing counted too


def test_a_hold_waits_for_the_answers_under_way_and_keeps_new_ones_waiting(sf001: Path) -> None:
    """A session holds the database while it times runners (evaluator/harness/session.py, `_quiet`)."""
    with Database(threads=1) as database:
        under_way, go_on, held = threading.Event(), threading.Event(), threading.Event()

        def answer() -> None:
            with database.answering():
                under_way.set()
                go_on.wait(10)

        def hold() -> None:
            database.hold()
            held.set()

        first = threading.Thread(target=answer)
        first.start()
        under_way.wait(10)
        holder = threading.Thread(target=hold)
        holder.start()
        assert not held.wait(0.3)  # the answer under way is not cut short: the hold waits for it
        go_on.set()
        assert held.wait(10)
        # Held: a whole query's answers (DuckDB's real ones) wait until the release.
        answers = Answers(QUERIES[6], [sf001], QUERIES[6].parameter_sets(1, 5), database)
        try:
            time.sleep(0.3)
            busy = database.busy_s()
            assert not answers._trials.done() and database.busy_s() == busy
            database.release()
            assert _same(answers.get(0, 0), reference_answer(sf001, QUERIES[6], answers.trials().params[0]))
        finally:
            answers.close()
        first.join()
        holder.join()


def test_an_answer_that_does_not_fit_under_the_limit_is_computed_anyway(sf001: Path) -> None:
    query = QUERIES[18]
    database = Database(threads=1, memory_limit="8MB")
    spill = Path(database._spill)
    with pytest.raises(duckdb.OutOfMemoryException):
        reference_answer(sf001, query, query.defaults, con=database.cursor(sf001))
    answers = Answers(query, [sf001], [query.defaults], database)
    try:
        assert _same(answers.get(0, 0), reference_answer(sf001, query, query.defaults))
    finally:
        answers.close()
        database.close()
    assert not spill.exists()  # where DuckDB spills goes with the instance


def test_no_limit_leaves_duckdbs_own(sf001: Path) -> None:
    with Database(threads=1, memory_limit=None) as database:
        limit = database.cursor(sf001).execute("SELECT current_setting('memory_limit')").fetchone()[0]
    assert limit != "366.2 MiB"
