"""The runner: runs one query's candidate on the harness's commands, and measures nothing.

`python -m evaluator.runner.commands` is started by the harness once per query for each side: the
kernel's runner, the only process that imports a kernel (inside the sandbox on the leaderboard), and the
baseline's, a trusted process that imports none. Both answer the same commands (evaluator/channel.py) on their
standard input and output: load the candidate, load a scale factor's tables, run a correctness trial,
run a batch of timed calls, and so on. The harness timestamps each command from its own side and takes
every result with the answer, so nothing this process says about time, hardware or results is taken on
trust (docs/sandbox.md). A kernel that crashes or hangs takes only this process down.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from evaluator.channel import MAX_PAYLOAD, read_blocking, send

Answer = tuple[dict[str, Any], bytes]
# On a GPU the runner polls this long for the timed command that follows `arm`, `ping` or `roll` rather
# than sleep on the pipe: it comes within a millisecond, and a sleeping process's wake-up would be timed
# with it (docs/sandbox.md, "The cost of timing from outside").
SPIN_S = 0.2
# `drain`: a probe of the device (one tiny kernel, then a synchronize) that answers within this found it
# idle. One that waited on another process's work waited for the GPU to switch to this process (it
# time-slices between processes), at its time slice's pace; an idle H200 answers in tens of microseconds.
IDLE_PROBE_S = 100e-6


class State:
    """What the runner holds between commands."""

    def __init__(self) -> None:
        self.device: Any = None
        self.query: Any = None
        self.fn: Callable[..., Any] | None = None  # the candidate: the kernel, or the TorchPlan
        self.compiled = False  # the TorchPlan under torch.compile
        self.filename: str | None = None  # the kernel file's name, for its errors' line numbers
        self.tables: Any = None  # the scale factor loaded last: every trial and timed call copies it
        self.pool: list[Any] = []  # clones of `tables`, rotated between timed calls
        self.params: list[dict[str, Any]] = []  # the timed calls' parameter sets, named by index in `batch`
        self.flush: Any = None  # written before each timed batch: evicts the L2 cache
        self.rolled: list[Any] = []  # copies of new table content for `rolled` calls
        self.spin_s = 0.0  # on a GPU, how long to poll for the next command before sleeping on it
        self.probe: Any = None  # `drain`'s one-element tensor
        self.echoed: dict[tuple[str, int], Any] = {}  # `echo`'s device buffers, per column type and length
        self.shapes: dict[str, Any] = {}  # per side, the layout `echo` answers (`shape`)

    def call(self, tables: Any, params: dict[str, Any]) -> Any:
        assert self.fn is not None, "no candidate was loaded"
        return self.fn(tables, **params)

    def sync(self) -> None:
        import torch

        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


def start(state: State, command: dict[str, Any]) -> Answer:
    """Import torch and the query: the runner's own start-up, before the candidate. Started ahead, during
    the previous query, it also does what would otherwise fall on this query's own time: with `compile`,
    the imports of torch.compile (7-8 s of the compiled baseline's `load` on the H200), with `profiler`,
    one empty profiled block (the first profile in a process took 5-12 s there; docs/benchmarks.md)."""
    if command["device"] == "cpu":
        # Before triton is imported: it reads the variable once, when its library is defined.
        os.environ["TRITON_INTERPRET"] = "1"
    import torch

    from evaluator import hardware
    from evaluator.queries import get_query

    state.device = torch.device(command["device"])
    state.query = get_query(command["query"])
    state.spin_s = SPIN_S if state.device.type == "cuda" else 0.0
    described = hardware.describe(state.device)
    if command.get("compile"):
        import torch._dynamo  # noqa: F401
        import torch._inductor.compile_fx  # noqa: F401
    if command.get("profiler"):
        from torch.profiler import ProfilerActivity, profile

        cuda = state.device.type == "cuda"
        with profile(activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])):
            pass
    return {"hardware": described}, b""


def load(state: State, command: dict[str, Any]) -> Answer:
    """Import the candidate: the kernel file (its import builds what it builds, under the harness's
    compile limit), or the query's TorchPlan, eager or under torch.compile."""
    import torch

    from evaluator.runner.kernel_loader import KernelBuildError, load_kernel

    if command.get("kernel_path"):
        path = command["kernel_path"]
        state.filename = os.path.basename(path)
        try:
            state.fn = load_kernel(state.query, Path(path), command["scope"])
        except KernelBuildError as exc:
            return {"build_error": str(exc)}, b""
    elif command["baseline"] == "compiled":
        state.fn = state.query.with_core(torch.compile(state.query.plan()._query_core))
        state.compiled = True
    else:
        state.fn = state.query.plan().run_query
    return {}, b""


def tables(state: State, command: dict[str, Any]) -> Answer:
    """Load a scale factor's tables onto the device, the previous ones freed first."""
    import torch

    from evaluator.tpch.load import load_tables

    state.tables, state.pool = None, []
    if state.device.type == "cuda":
        torch.cuda.empty_cache()
    state.tables = load_tables(Path(command["folder"]), state.query.columns(), state.device)
    return {"nbytes": state.tables.nbytes()}, b""


def trial(state: State, command: dict[str, Any]) -> Answer:
    """One correctness trial on a fresh clone, and whether the call changed its inputs."""
    from evaluator.results import pack

    clone = state.tables.clone()
    result = state.call(clone, command["params"])
    state.sync()
    layout, data = pack([result])
    return {"layout": layout, "inputs_changed": _changed(clone, state.tables)}, data


def pool(state: State, command: dict[str, Any]) -> Answer:
    """Clones of the loaded tables for the timed calls, the parameter sets those calls rotate over (the
    trials' own, which this runner has already been called with), and the buffer that flushes the L2
    cache. With "warm" (the baseline's runner), one call on each set first (`_warm`)."""
    import torch

    from evaluator.timing import L2_FLUSH_BYTES

    state.pool = [state.tables.clone() for _ in range(max(1, int(command["size"])))]
    state.params = list(command.get("params", []))
    if state.device.type == "cuda":
        state.flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=state.device)
    state.probe = torch.zeros(1, device=state.device)
    state.probe.add_(1)  # `drain`'s probe loaded before its first timed use
    if command.get("warm") == "ahead":
        started = time.perf_counter()
        tune = _warm_ahead(state)
        return {"tune": tune, "ahead_s": round(time.perf_counter() - started, 3)}, b""
    if command.get("warm"):
        _warm(state)
    return {}, b""


def warm(state: State, command: dict[str, Any]) -> Answer:
    """The baseline's first calls, where `pool`'s ahead warm-up left configurations to time: the harness
    has frozen the kernel's runner meanwhile, and with "drain" the device is first left to finish what
    that runner put on it (`drain`), which would otherwise run beside the configurations timed."""
    drained = drain(state, float(command["drain"])) if command.get("drain") else {}
    _warm(state)
    return drained, b""


class _TuneLater(BaseException):
    """Raised where a compiled kernel's configurations would be timed during the ahead warm-up: not an
    Exception, so that no `except Exception` of torch's takes it for a configuration that failed."""


def _warm_ahead(state: State) -> bool:
    """The baseline's first calls while the kernel's runner runs its trials: the plan compiles here, most
    of it on the CPU, and comes from the calibration's compile cache where that holds it. But a compile
    that would time a kernel's configurations on the device (a graph the cache lacks), where the
    kernel's work would make the slow ones look fast, stops the calls instead: True says the rest is
    `warm`'s, with the kernel's runner frozen. True at once on a GPU whose torch has no autotuner this
    can find."""
    with _tuning_refused(state) as refused:
        if refused is None:
            return True
        try:
            _first_calls(state)
        except _TuneLater:
            return True
    if refused:  # torch caught the refusal and chose a configuration untimed: not a baseline to time
        raise RuntimeError(f"the baseline's compile chose configurations untimed: {', '.join(refused)}")
    state.sync()
    _stop_compile_workers()
    return False


@contextlib.contextmanager
def _tuning_refused(state: State) -> Iterator[list[str] | None]:
    """Within it torch.compile's autotuner raises `_TuneLater` rather than time a kernel's configurations;
    yields the kernels it refused so far, or None on a GPU whose torch has no autotuner this can find.
    Eager plans and the CPU's compiled ones time none."""
    if state.device.type != "cuda" or not state.compiled:
        yield []
        return
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    except ImportError:
        yield None
        return
    bench = getattr(CachingAutotuner, "bench", None)
    if not callable(bench):
        yield None
        return
    refused: list[str] = []

    def refuse(autotuner: Any, *args: Any, **kwargs: Any) -> float:
        refused.append(str(getattr(getattr(autotuner, "fn", None), "__name__", "a kernel")))
        raise _TuneLater(refused[-1])

    setattr(CachingAutotuner, "bench", refuse)  # noqa: B010 (mypy: a method assigned)
    try:
        yield refused
    finally:
        setattr(CachingAutotuner, "bench", bench)  # noqa: B010


def _first_calls(state: State) -> None:
    """One call on each of the pool's parameter sets, the clones in turn."""
    for rep, params in enumerate(state.params):
        state.call(state.pool[rep % len(state.pool)], params)


def _warm(state: State) -> None:
    """The baseline's first calls, before anything is timed: a compiled plan compiles here, not in the
    first timed batch, and torch's compile workers are then stopped, later compiles (a fresh set's) made
    in this process. Started in the first timed batch, the workers inherited this thread's pinning to the
    runners' core (`arm`) and kept half of it busy while both runners were timed there: the compiled
    baseline's Q14 ran 1.46 ms beside the CUDA example set's kernel against 0.84 ms alone (docs/
    benchmarks.md, session 18)."""
    _first_calls(state)
    state.sync()
    _stop_compile_workers()


def _stop_compile_workers() -> None:
    """Stop torch.compile's pool of compile workers, where one was started, and start no other."""
    workers = sys.modules.get("torch._inductor.async_compile")
    if workers is not None:
        import torch._inductor.config

        workers.shutdown_compile_workers()
        torch._inductor.config.compile_threads = 1


def arm(state: State, command: dict[str, Any]) -> Answer:
    """Before a timed batch, outside the harness's window: this thread on the timing core (where both
    runners are timed, evaluator/harness/cores.py), with "drain" (the baseline's runner) the device
    running nothing of another process's (`drain`), with "prime" one call made (`prime`), the L2 cache
    flushed, the device idle."""
    if command.get("cpus"):
        os.sched_setaffinity(0, command["cpus"])
    drained = drain(state, float(command["drain"])) if command.get("drain") else {}
    if command.get("prime"):
        prime(state)
    if state.flush is not None:
        state.flush.fill_(0)
    state.sync()
    return drained, b""


def drain(state: State, limit_s: float) -> dict[str, Any]:
    """Wait, at most `limit_s`, until the device runs no other process's work: probe it (a one-element
    kernel, then a synchronize) until a probe answers within `IDLE_PROBE_S`. The baseline's runner does
    this before each of its timed batches: work the kernel's process left on the device when it answered
    (its runner is frozen by then and can add none) would otherwise run into the baseline's batch and
    make the kernel look faster. An honest kernel's runner leaves nothing: it synchronizes the device
    after every call. `busy_s`: how long the device stayed busy (0.0 when the first probe found it
    idle); `idle`: False when it was still busy after `limit_s`."""
    assert state.probe is not None, "drain before pool"
    started = time.perf_counter()
    probes = 0
    while True:
        probed = time.perf_counter()
        state.probe.add_(1)
        state.sync()
        answered = time.perf_counter()
        probes += 1
        if answered - probed < IDLE_PROBE_S:
            return {"busy_s": probed - started if probes > 1 else 0.0, "probes": probes, "idle": True}
        if answered - started > limit_s:
            return {"busy_s": answered - started, "probes": probes, "idle": False}


def prime(state: State) -> None:
    """One call, untimed, on the pool's first clone with the first parameter set: a batch's first call
    otherwise pays for the other runner's turn (its work on this core and on the device), on a GPU up
    to 0.4 ms more than the batch's other calls; after one call of its own, 0.06-0.19 ms more
    (scripts/gpu/switch.py and selftime.py, docs/benchmarks.md, session 28). Its result is dropped."""
    state.call(state.pool[0], state.params[0] if state.params else {})


def ping(state: State, command: dict[str, Any]) -> Answer:
    """Nothing: the harness times this answer between `arm` and a timed batch, the runner in the state a
    batch finds it in, and takes the baseline's round trip off every timed sample (evaluator/harness/
    session.py, `RoundTrip`)."""
    return {}, b""


def batch(state: State, command: dict[str, Any]) -> Answer:
    """Timed calls, `[clone, index]` each (`index` into the command's "params", else the pool's), the
    device synchronized after each, then every result gathered: the harness's clock runs from sending
    this command to reading the whole answer. Parameter sets go by index so that the window does not
    also time their JSON, call by call; which set each call gets is still told only here."""
    from evaluator.results import gather, take

    params = command.get("params", state.params)
    layout, views, offset = [], [], 0
    for clone, index in command["calls"]:
        result = state.call(state.pool[clone % len(state.pool)], params[index])
        # Taken while the device still computes the call: `take` reads shapes and types only.
        columns, taken, offset = take(result, offset)
        layout.append(columns)
        views += taken
        state.sync()  # each call ends when the device is done, as one timed by itself would
    return {"layout": layout}, gather(views)


def shape(state: State, command: dict[str, Any]) -> Answer:
    """What `echo` answers for one side: a batch's layout (per result, its columns' names, types and
    lengths) and device buffers viewed as its bytes, made here, untimed, as a batch's results are made
    and viewed by its calls and their `take`s (which on a GPU run while the device computes). The
    timed `echo` then does only what a batch does after its last call."""
    import torch

    from evaluator.results import take

    if sum(b.nbytes for b in state.echoed.values()) > 2 * MAX_PAYLOAD:
        state.echoed.clear()  # results whose lengths change with each parameter set: keep the last ones
    layout, views, offset = [], [], 0
    for columns in command["layout"]:
        result = {}
        for name, dtype, length in columns:
            key = (dtype, length)
            if key not in state.echoed:
                state.echoed[key] = torch.zeros(length, dtype=getattr(torch, dtype), device=state.device)
            result[name] = state.echoed[key]
        described, viewed, offset = take(result, offset)  # as a batch lays out and views its results
        layout.append(described)
        views += viewed
    state.shapes[command["side"]] = (layout, views)
    state.sync()  # the new buffers filled here, not inside the timed echo that follows
    return {}, b""


def echo(state: State, command: dict[str, Any]) -> Answer:
    """The channel alone: the answer a batch with results of one side's `shape` would send, its bytes
    gathered and copied to the host as `batch` gathers its results, no call made; the command carries
    the batch's "calls" as a batch's does, unread. The harness times it from the baseline's runner, for
    each side's last batch, and takes it off that side's samples (evaluator/harness/timed.py,
    `RoundTrip`)."""
    from evaluator.results import gather

    layout, views = state.shapes[command["side"]]
    return {"layout": layout}, gather(views)


def roll(state: State, command: dict[str, Any]) -> Answer:
    """New table content (evaluator/harness/fresh.py), made here, outside any timed command: the tables with
    their columns rolled apart (`Tables.rolled`: other answers, not valid data), or with "whole_rows", moved
    under other keys (`Tables.rotated`: valid data, the same work). Every copy is kept until `unroll`, so
    none takes the place (and the address) of one a kernel has seen."""
    move = state.tables.rotated if command.get("whole_rows") else state.tables.rolled
    state.rolled.append(move(command["roll"]))
    state.sync()
    return {}, b""


def rolled(state: State, command: dict[str, Any]) -> Answer:
    """One call on a copy `roll` made: the newest, or the one at "copy"."""
    from evaluator.results import pack

    result = state.call(state.rolled[command.get("copy", -1)], command["params"])
    state.sync()
    layout, data = pack([result])
    return {"layout": layout}, data


def unroll(state: State, command: dict[str, Any]) -> Answer:
    state.rolled.clear()
    return {}, b""


def choose(state: State, command: dict[str, Any]) -> Answer:
    """The baseline's runner only: time eager against compiled on the pool, keep the faster."""
    import torch

    from evaluator.runner.kernel_loader import short_error
    from evaluator.timing import TimingPolicy, time_rotated

    params = command["params"]
    compiled = state.query.with_core(torch.compile(state.query.plan()._query_core))
    eager = state.query.plan().run_query
    fns = {"compiled": compiled, "eager": eager}

    def rotated(fn: Callable[..., Any]) -> Callable[[int], Any]:
        return lambda rep: fn(state.pool[rep % len(state.pool)], **params[rep % len(params)])

    policy = TimingPolicy(**command["policy"]).for_probe()
    try:
        stats = time_rotated(
            {name: rotated(fn) for name, fn in fns.items()},
            device=state.device,
            policy=policy,
            strata=len(params),
        )
    except Exception as exc:  # a plan that fails to compile is timed eager
        state.fn = eager
        return {"baseline_mode": "eager", "baseline_probe": {"compile_error": short_error(exc)}}, b""
    chosen = min(stats, key=lambda name: stats[name].median_ms)
    state.fn = fns[chosen]
    _stop_compile_workers()
    return {
        "baseline_mode": chosen,
        "baseline_probe": {f"{n}_ms": s.median_ms for n, s in stats.items()},
    }, b""


def profile(state: State, command: dict[str, Any]) -> Answer:
    """One more call under torch.profiler: its device activity, for the attribution label (a label, not
    a score: the kernel's runner could say anything here)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from evaluator.attribution import device_activity

    cuda = state.device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    try:
        with profile(activities=activities) as prof:
            state.call(state.pool[0], command["params"])
            if cuda:
                torch.cuda.synchronize(state.device)
        return {"activity": device_activity(prof.events())}, b""
    except Exception as exc:  # a profiler failure only loses the label
        return {"activity": None, "error": f"{type(exc).__name__}: {exc}"[:300]}, b""


def inputs(state: State, command: dict[str, Any]) -> Answer:
    """Whether a timed call changed a clone it was given."""
    return {"inputs_changed": any(_changed(clone, state.tables) for clone in state.pool)}, b""


def _changed(clone: Any, tables: Any) -> bool:
    import torch

    return not all(torch.equal(clone[t][c], tables[t][c]) for t in tables for c in tables[t])


COMMANDS: dict[str, Callable[[State, dict[str, Any]], Answer]] = {
    fn.__name__: fn
    for fn in (
        start,
        load,
        tables,
        trial,
        pool,
        warm,
        arm,
        ping,
        batch,
        shape,
        echo,
        roll,
        rolled,
        unroll,
        choose,
        profile,
        inputs,
    )
}


def main() -> None:
    # The channel leaves fds 0 and 1: what a kernel prints goes to the log (standard error), and what it
    # reads from standard input is nothing.
    commands, replies = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    state = State()
    spin_s = 0.0
    while (message := read_blocking(commands, spin_s)) is not None:
        command, _ = message
        if command.get("op") == "exit":
            break
        try:
            answer = COMMANDS[command["op"]](state, command)
        except Exception as exc:
            from evaluator.runner.kernel_loader import short_error

            answer = {"error": short_error(exc, state.filename)}, b""
        send(replies, *answer)
        # Poll for the next command only where a timed one follows at once (`echo` or `ping` after `arm`
        # or `shape`, a batch after `ping`, the first call on new content after `roll`): both runners are
        # timed on one core (evaluator/harness/cores.py), and one polling while the other is timed would
        # slow it.
        spin_s = state.spin_s if command.get("op") in ("arm", "shape", "echo", "ping", "roll") else 0.0


if __name__ == "__main__":
    code = 0
    try:
        main()
    except Exception:
        traceback.print_exc()
        code = 1
    # Out at once: no interpreter teardown (freeing gigabytes of tensors, torch's exit hooks), which only
    # delays the next query. Torch's compile workers, where a compile started them, are stopped first.
    _stop_compile_workers()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
