"""The harness, the runners and DuckDB's answers on disjoint cores of a GPU host
(evaluator/harness/cores.py)."""

from __future__ import annotations

import os
from pathlib import Path

from evaluator.harness import cores
from evaluator.harness.judge import Answers, Database
from evaluator.queries import QUERIES


def test_a_gpu_host_gives_duckdb_half_its_cores_and_both_runners_one_core_of_the_other(monkeypatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    split = cores.split("cuda:0")
    assert split.answers == frozenset(range(8))
    assert split.runners == frozenset({15}) and split.harness == frozenset(range(8, 15))
    assert split.describe() == {"harness": list(range(8, 15)), "runners": [15], "answers": list(range(8))}


def test_no_split_on_a_cpu_evaluation_or_a_small_host(monkeypatch) -> None:
    assert cores.split("cpu") is None
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    assert cores.split("cuda") is None


def test_pinning_moves_this_thread_and_puts_it_back() -> None:
    before = os.sched_getaffinity(0)
    one = frozenset({min(before)})
    with cores.pinned(one):
        assert os.sched_getaffinity(0) == one
    assert os.sched_getaffinity(0) == before
    with cores.pinned(None):
        assert os.sched_getaffinity(0) == before


def test_duckdbs_answers_run_on_their_own_cores(sf001: Path) -> None:
    before = os.sched_getaffinity(0)
    one = frozenset({max(before)})
    query = QUERIES[6]
    tasks = set(os.listdir("/proc/self/task"))
    with Database(threads=2, cores=one) as database:
        # DuckDB's worker threads, started with the instance, run there too.
        workers = [int(t) for t in set(os.listdir("/proc/self/task")) - tasks]
        assert workers and all(os.sched_getaffinity(t) == one for t in workers)
        answers = Answers(query, [sf001], query.parameter_sets(0, 1), database, cores=one)
        try:
            assert answers.get(0, 0)  # DuckDB answered, from the pinned thread
            assert answers._pool.submit(os.sched_getaffinity, 0).result() == one
        finally:
            answers.close()
    assert os.sched_getaffinity(0) == before  # this thread untouched


def test_an_armed_runner_moves_its_thread_to_the_runners_core() -> None:
    import torch

    from evaluator.runner import commands as runner

    state = runner.State()
    state.device = torch.device("cpu")
    before = os.sched_getaffinity(0)
    one = min(before)
    try:
        assert runner.arm(state, {"op": "arm", "cpus": [one]}) == ({}, b"")
        assert os.sched_getaffinity(0) == {one}
        runner.arm(state, {"op": "arm"})  # no split (a CPU evaluation): left where it is
        assert os.sched_getaffinity(0) == {one}
    finally:
        os.sched_setaffinity(0, before)
