"""The runner's own commands, run in a process of their own (evaluator/runner/commands.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from evaluator.runner.commands import State

START = """
import json, sys
from evaluator.runner.commands import State, start
answer, _ = start(State(), {"op": "start", "device": "cpu", "query": 6, **json.loads(sys.argv[1])})
print(json.dumps({"device": answer["hardware"]["device"], "dynamo": "torch._dynamo" in sys.modules}))
"""


@pytest.mark.parametrize(("extra", "dynamo"), [({}, False), ({"compile": True, "profiler": True}, True)])
def test_start_imports_what_the_first_compile_needs_only_when_asked(extra: dict, dynamo: bool) -> None:
    """`compile` moves torch.compile's imports into `start`, which the harness runs ahead of the query."""
    done = subprocess.run(
        [sys.executable, "-c", START, json.dumps(extra)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"device": "cpu", "dynamo": dynamo}


def test_roll_makes_torn_or_valid_new_content_and_unroll_drops_it(sf001) -> None:
    import torch

    from evaluator.queries import QUERIES
    from evaluator.runner import commands as runner
    from evaluator.tpch.load import load_tables

    state = runner.State()
    state.device = torch.device("cpu")
    state.tables = load_tables(sf001, QUERIES[3].columns())
    for whole_rows in (False, True):
        assert runner.roll(state, {"op": "roll", "roll": 0.3, "whole_rows": whole_rows}) == ({}, b"")
    torn, rotated = state.rolled
    expected = {"torn": state.tables.rolled(0.3), "rotated": state.tables.rotated(0.3)}
    for name, made in (("torn", torn), ("rotated", rotated)):
        for table in made:
            for column in made[table]:
                assert torch.equal(made[table][column], expected[name][table][column]), (name, column)
    runner.unroll(state, {"op": "unroll"})
    assert state.rolled == []


def test_a_batch_names_each_calls_parameter_set_by_index(sf001) -> None:
    """The timed calls' parameter sets come with `pool`; a batch names one per call by index, or brings
    its own (a fresh set), and answers every call's result in order."""
    from evaluator.queries import QUERIES
    from evaluator.results import unpack
    from evaluator.runner import commands as runner

    params = QUERIES[6].parameter_sets(3, 7)
    state = _eager_runner(sf001, 6, params)

    def revenue(p: dict) -> float:
        return float(state.fn(state.tables.clone(), **p)["revenue"][0])

    answer, payload = runner.batch(state, {"op": "batch", "calls": [[0, 2], [1, 0], [2, 2]]})
    got = [r["revenue"][0] for r in unpack(answer["layout"], payload, 3)]
    assert got == [revenue(params[2]), revenue(params[0]), revenue(params[2])]
    assert len(set(got)) == 2  # the sets differ, so the order is seen
    fresh = {"date": "1995-01-01", "discount": 0.05, "quantity": 25}
    answer, payload = runner.batch(state, {"op": "batch", "calls": [[1, 0]], "params": [fresh]})
    assert unpack(answer["layout"], payload, 1)[0]["revenue"][0] == revenue(fresh)


WARM = """
import json, os, sys
from pathlib import Path
from evaluator.queries import QUERIES
from evaluator.runner import commands as runner

def children():
    mine = str(os.getpid())
    stats = (p.read_text() for p in Path("/proc").glob("[0-9]*/stat") if p.exists())
    return [s.split()[0] for s in stats if s.rsplit(")", 1)[1].split()[1] == mine]

state = runner.State()
runner.start(state, {"op": "start", "device": "cpu", "query": 6, "compile": True})
runner.load(state, {"op": "load", "baseline": "compiled"})
runner.tables(state, {"op": "tables", "folder": sys.argv[1]})
# As a compile on the GPU starts it: the pool's process, then its workers.
from torch._inductor.async_compile import AsyncCompile
AsyncCompile.warm_pool()
workers = children()
params = QUERIES[6].parameter_sets(3, 7)
answer, _ = runner.pool(state, {"op": "pool", "size": 2, "params": params, **json.loads(sys.argv[2])})
from torch._dynamo.utils import counters
graphs = counters["stats"]["unique_graphs"]
print(json.dumps({"workers": len(workers), "left": len(children()), "graphs": graphs, "answer": answer}))
"""


@pytest.mark.parametrize("warm", [None, True, "ahead"])
def test_the_baselines_pool_compiles_its_plan_and_stops_the_compile_workers(sf001, warm) -> None:
    """With "warm", `pool` makes the compiled baseline's first calls, before any is timed, and stops
    torch's compile workers: started by the first timed batch, they ran on the core both runners are
    timed on (session 18 on the H200). "ahead", as the harness sends it before the kernel's trials: the
    same on the CPU, where a compile times nothing on the device, and it says so (`tune`)."""
    done = subprocess.run(
        [sys.executable, "-c", WARM, str(sf001), json.dumps({"warm": warm} if warm else {})],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["workers"] >= 1
    if warm:
        assert found["graphs"] >= 1 and found["left"] == 0, found
    else:
        assert found["graphs"] == 0 and found["left"] == found["workers"], found
    if warm == "ahead":
        assert found["answer"]["tune"] is False and found["answer"]["ahead_s"] > 0, found
    else:
        assert found["answer"] == {}, found


def _as_on_a_gpu(sf001: Path, plan_call: Callable[..., Any]) -> State:
    """A compiled baseline's runner state as on a GPU before its first calls, calling `plan_call`. Nothing
    in the tests that use it reaches the device: each call stops at the autotuner, as a first call of a
    graph the compile cache lacks would."""
    from types import SimpleNamespace

    from evaluator.queries import QUERIES

    state = _eager_runner(sf001, 6, QUERIES[6].parameter_sets(3, 7), size=1)
    state.fn, state.compiled = plan_call, True
    state.device = SimpleNamespace(type="cuda")
    return state


def test_the_ahead_warm_up_stops_where_a_compile_would_time_configurations_on_the_device(sf001) -> None:
    """Beside the kernel's trials the baseline's compile must not time its kernels' configurations (the
    kernel's work would make slow ones look fast): the autotuner is refused there, and `tune` says the
    rest of the first calls come later (`warm`, with the kernel's runner frozen)."""
    from types import SimpleNamespace

    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    from evaluator.runner import commands as runner

    bench, calls = CachingAutotuner.bench, []

    def first_run_of_a_new_graph(tables, **params):
        calls.append(params)
        if len(calls) == 2:  # inductor's first run of a kernel with several configurations times them
            CachingAutotuner.bench(SimpleNamespace(fn=first_run_of_a_new_graph), "launcher")
        return {}

    state = _as_on_a_gpu(sf001, first_run_of_a_new_graph)
    assert runner._warm_ahead(state) is True
    assert len(calls) == 2  # none after the refusal
    assert CachingAutotuner.bench is bench  # the autotuner is itself again for `warm`


def test_an_ahead_warm_up_whose_refusal_was_caught_fails_the_baseline(sf001) -> None:
    """Where torch caught the refusal, a configuration was chosen without timing: an error, not a baseline
    that runs slow for the whole evaluation."""
    from types import SimpleNamespace

    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    from evaluator.runner import commands as runner

    def caught(tables, **params):
        try:
            CachingAutotuner.bench(SimpleNamespace(fn=caught), "launcher")
        except BaseException:
            pass
        return {}

    with pytest.raises(RuntimeError, match="chose configurations untimed: caught"):
        runner._warm_ahead(_as_on_a_gpu(sf001, caught))


def test_on_a_gpu_whose_torch_has_no_autotuner_to_refuse_nothing_is_called_ahead(sf001, monkeypatch) -> None:
    from evaluator.runner import commands as runner

    calls = []
    monkeypatch.setitem(sys.modules, "torch._inductor.runtime.triton_heuristics", None)  # import fails
    assert runner._warm_ahead(_as_on_a_gpu(sf001, lambda tables, **params: calls.append(params))) is True
    assert calls == []


def test_the_baselines_arm_drains_the_device_of_other_work_and_says_how_long_it_waited(
    sf001, monkeypatch
) -> None:
    """`drain` probes the device until a probe answers at once: here the device (the CPU) is made to look
    busy for the first three probes, as a GPU running another process's work answers only after its
    time slice; past the harness's limit it gives up and says the device is still busy."""
    import time

    from evaluator.queries import QUERIES
    from evaluator.runner import commands as runner

    state = _eager_runner(sf001, 6, QUERIES[6].parameter_sets(1, 7), size=1)
    assert runner.arm(state, {"op": "arm"}) == ({}, b"")  # the kernel's runner is never asked to drain

    busy_for = [0.002] * 3

    def sync() -> None:  # the probe's kernel queued behind 2 ms of someone else's work, three times
        if busy_for:
            time.sleep(busy_for.pop())

    monkeypatch.setattr(state, "sync", sync)
    drained, _ = runner.arm(state, {"op": "arm", "drain": 10.0})
    assert drained["idle"] is True and drained["probes"] >= 4
    assert 0.006 <= drained["busy_s"] < 1.0
    busy_for[:] = []
    assert runner.arm(state, {"op": "arm", "drain": 10.0})[0]["idle"] is True

    monkeypatch.setattr(runner, "IDLE_PROBE_S", 0.0)  # no probe is ever quick enough: a device kept busy
    drained, _ = runner.arm(state, {"op": "arm", "drain": 0.05})
    assert drained["idle"] is False and drained["busy_s"] >= 0.05


def test_a_primed_arm_makes_one_call_on_the_first_clone_before_the_flush(sf001, monkeypatch) -> None:
    """With "prime" (on a GPU, both runners, before each timed batch), `arm` calls the candidate once, on
    the pool's first clone with the first parameter set, after the baseline's drain (which waits for the
    kernel's work to leave the device) and before the L2 flush; without it, no call."""
    from evaluator.queries import QUERIES
    from evaluator.runner import commands as runner

    params = QUERIES[6].parameter_sets(2, 7)
    state = _eager_runner(sf001, 6, params)
    state.flush = Flush()
    seen: list[tuple[object, dict, int]] = []
    plan = state.fn

    def candidate(tables: object, **given: object) -> object:
        seen.append((tables, given, state.flush.fills))
        return plan(tables, **given)

    state.fn = candidate
    assert runner.arm(state, {"op": "arm"}) == ({}, b"") and seen == []
    assert runner.arm(state, {"op": "arm", "prime": True}) == ({}, b"")
    assert [(tables is state.pool[0], given, fills) for tables, given, fills in seen] == [
        (True, params[0], 1)
    ]
    assert state.flush.fills == 2  # flushed after the call, as on every arm

    order: list[str] = []
    monkeypatch.setattr(runner, "drain", lambda state, limit_s: order.append("drain") or {"idle": True})
    monkeypatch.setattr(state, "fn", lambda tables, **given: order.append("call") or plan(tables, **given))
    assert runner.arm(state, {"op": "arm", "drain": 10.0, "prime": True}) == ({"idle": True}, b"")
    assert order == ["drain", "call"]


class Flush:
    """The L2 flush's buffer, counting its fills (a CPU runner has none)."""

    def __init__(self) -> None:
        self.fills = 0

    def fill_(self, value: int) -> None:
        self.fills += 1


def test_an_echo_answers_a_batchs_layout_and_bytes_without_a_call(sf001) -> None:
    """`echo` sends back what a batch with results of the given shape would send: the harness times it
    from the baseline's runner and takes it off the timed samples (the channel, not the calls)."""
    from evaluator.queries import QUERIES
    from evaluator.results import unpack
    from evaluator.runner import commands as runner

    state = _eager_runner(sf001, 1, QUERIES[1].parameter_sets(2, 7))
    answer, payload = runner.batch(state, {"op": "batch", "calls": [[0, 0], [1, 1], [0, 1]]})
    shape = [[column[:3] for column in columns] for columns in answer["layout"]]
    calls = state.call
    state.call = None  # an echo makes no call
    synced: list[bool] = []
    state.sync = lambda: synced.append(True)  # type: ignore[method-assign]
    runner.shape(state, {"op": "shape", "side": "kernel", "layout": shape})
    assert synced  # its buffers filled before the timed echo, not inside it
    echoed, echoed_payload = runner.echo(state, {"op": "echo", "side": "kernel", "calls": [[0, 0]] * 3})
    assert echoed["layout"] == answer["layout"] and len(echoed_payload) == len(payload) > 0
    assert [set(r) for r in unpack(echoed["layout"], echoed_payload, 3)] == [
        set(r) for r in unpack(answer["layout"], payload, 3)
    ]
    # The buffers and their byte views are made by `shape`, once per type and length: the timed echo
    # only gathers, copies and sends, as a batch does after its last call.
    buffers = {key: id(buffer) for key, buffer in state.echoed.items()}
    runner.shape(state, {"op": "shape", "side": "baseline", "layout": shape})
    assert {key: id(buffer) for key, buffer in state.echoed.items()} == buffers
    assert runner.echo(state, {"op": "echo", "side": "baseline", "calls": [[0, 0]] * 3})[1] == echoed_payload
    state.call = calls


def _eager_runner(folder: Path, query: int, params: list[dict], size: int = 2) -> State:
    """A runner's state as the harness leaves it before timing: the query's eager TorchPlan, the tables of
    `folder` and a pool of `size` clones rotating over `params`."""
    from evaluator.runner import commands as runner

    state = runner.State()
    runner.start(state, {"op": "start", "device": "cpu", "query": query})
    runner.load(state, {"op": "load", "baseline": "eager"})
    runner.tables(state, {"op": "tables", "folder": str(folder)})
    runner.pool(state, {"op": "pool", "size": size, "params": params})
    return state
