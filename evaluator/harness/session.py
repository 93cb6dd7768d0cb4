"""One query's session: its two runners, commanded and timed from the trusted side.

The baseline runs in a trusted runner that imports no kernel (a plain child process); the kernel in its
own runner, through the evaluation's launcher (the sandbox on the leaderboard). The harness sends each
runner its commands (evaluator/runner/commands.py) and takes everything that scores the kernel from its
own side: the time from sending a timed batch to holding its results, the results themselves (checked against
DuckDB's answers: every correctness trial, a seeded share of the timed calls drawn after each batch,
the fresh parameter sets), and how each runner ended. The order, per query:

0. both runners spawned and told to start (import torch, open the device): by the session, or ahead of
   it (`open_runners`), while the previous query's session is past its timing; the kernel is not
   imported yet, so nothing of the set runs beside another query's measurements;
1. both runners start; the kernel's import must answer within the compile limit;
2. the kernel's correctness trials at every scale factor, judged as they come (the first failure ends
   the kernel's part);
3. timing: rounds of one batch each, baseline and kernel interleaved on the same device
   (evaluator/harness/timed.py);
4. the fresh parameter sets (evaluator/harness/fresh.py), the device-activity profile, the inputs check;
5. with the kernel's runner gone, the baseline timed alone: a baseline far slower beside the kernel than
   alone was disturbed by the kernel's process, and the kernel's timing does not stand.

DuckDB computes expected answers (this query's, the next query's) beside all of it but the timing (3),
which waits for the answers under way (phase `settle`) and holds new ones until it ends
(`Database.hold`). The fresh sets and the baseline alone are timed beside them: their rules compare
each side with its own timing, with a wide margin, and holding DuckDB there too would leave the next
query's trials unanswered when its turn comes.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from evaluator.harness import fresh, timed
from evaluator.harness.judge import Answers, Database, compare_result
from evaluator.harness.launch import Launch, Launcher
from evaluator.harness.remote import CallFailed, Remote, RunnerFailed
from evaluator.queries import Query
from evaluator.report import Status
from evaluator.results import unpack
from evaluator.timing import TimingPolicy
from evaluator.tpch.load import scale_factor

ISOLATED_SCRATCH = Path("/tmp/scratch")  # an isolated runner's build folder, in its private /tmp
SPIN_S = 1.0  # on a GPU, poll for a runner's answer this long before sleeping on the pipe


@dataclass
class Sides:
    """What one query's session is given."""

    query: Query
    folders: list[Path]  # every scale factor's folder: the check ones, then the main one (timed)
    device: str
    params: list[dict[str, Any]]  # the trials' parameter sets, also the timed rotation's
    timing: TimingPolicy
    baseline_mode: str  # eager, compiled or best
    query_timeout_s: float
    compile_limit_s: float
    verify: dict[str, Any]  # {"seed", "share"}: which timed reps are checked
    fresh: list[dict[str, Any]] = field(default_factory=list)
    rolls: list[tuple[float, float]] = field(default_factory=list)  # per fresh set: two new contents
    build_env: Callable[[Path, bool], dict[str, str]] = lambda folder, baseline: {}
    runner_cores: frozenset[int] | None = None  # both runners are timed on these (evaluator/harness/cores.py)


@dataclass
class Outcome:
    """What the session found; the harness turns it into the query's result."""

    status: str = Status.PASSED
    reason: str = ""
    trials: int = 0
    stats: dict[str, Any] = field(default_factory=dict)
    hardware: dict[str, Any] = field(default_factory=dict)
    profile: dict[str, Any] = field(default_factory=dict)

    def fail(self, status: str, reason: str) -> None:
        if self.status == Status.PASSED:
            self.status, self.reason = status, reason


@dataclass
class Runners:
    """A query's two runners, spawned and sent `start`, its answers not read yet (`_start` reads them).
    `failure`: the kernel's runner broke before its start was sent (then `candidate` is None)."""

    baseline: Remote
    candidate: Remote | None
    stack: ExitStack  # stops both runners and removes their scratch folders
    failure: RunnerFailed | None = None


def open_runners(
    sides: Sides, kernel: tuple[Path, str] | None, launch: Launcher, warm: bool = False
) -> Runners:
    """Spawn the query's runners and send each `start`: importing torch and opening the device take
    seconds, which the harness spends during the previous query (evaluator/harness/core.py). `warm`, on
    a GPU: the start also imports what torch.compile needs (the compiled baseline's) and sets the
    profiler up, which would otherwise be this query's own time. The caller closes `stack` when the
    session does not take them."""
    stack = ExitStack()
    try:
        baseline = stack.enter_context(_runner(Launcher(), sides, None))
        candidate = stack.enter_context(_runner(launch, sides, kernel)) if kernel else None
        start = {"op": "start", "device": sides.device, "query": sides.query.number}
        warm = warm and sides.device.startswith("cuda")
        profiler = {"profiler": True} if warm else {}
        compiles = {"compile": True} if warm and sides.baseline_mode != "eager" else {}
        baseline.send(start | profiler | compiles, sides.query_timeout_s)
        failure = None
        if candidate:
            try:
                candidate.send(start | profiler, sides.query_timeout_s)
            except RunnerFailed as exc:
                failure, candidate = exc, None
    except BaseException:
        stack.close()
        raise
    return Runners(baseline, candidate, stack, failure)


def run_session(
    sides: Sides,
    kernel: tuple[Path, str] | None,
    answers: Answers | None,
    launch: Launcher,
    runners: Runners | None = None,
    ahead: Callable[[], None] | None = None,
    ahead_at: str = "trials",
    database: Database | None = None,
) -> Outcome:
    """Evaluate one query: `kernel` is (file, scope) or None (the baseline alone). `runners`: started
    ahead by `open_runners` (the session stops them), else started here. `ahead` starts the next
    query's runners: called once this query's runners have loaded what they run (`ahead_at`
    "trials"), or once the timed calls are over and judged ("tail"). `database`: the evaluation's
    DuckDB (the one `answers` computes with), kept quiet while the calls are timed."""
    outcome = Outcome(status=Status.PASSED if kernel else Status.MISSING)
    wall: dict[str, float] = {}
    answering: dict[str, float] = {}
    phase = _timer(wall, answering, database.busy_s if database else None)
    runners = runners or open_runners(sides, kernel, launch)
    with runners.stack:
        baseline = runners.baseline
        with phase("start"):
            candidate = _start(runners, sides, kernel, outcome)
        if ahead is not None and ahead_at == "trials":
            with phase("ahead"):
                ahead()
        if (
            answers is not None
        ):  # the trials DuckDB chose while the runners started (evaluator/harness/trials.py)
            chosen = answers.trials()
            sides = replace(sides, params=chosen.params)
            outcome.stats["coverage"] = {
                f"{scale_factor(f):g}": n for f, n in zip(sides.folders, chosen.coverage, strict=True)
            }
        # The baseline's clones and first calls, made while the kernel's trials run (`_pools`).
        baseline.send(_pool(sides) | {"warm": "ahead"}, sides.query_timeout_s)
        if candidate:
            with phase("trials"):
                candidate = _trials(candidate, sides, answers, outcome)
            launch.check()  # a kernel that used up the evaluation's time ends the evaluation
        with phase("pools"):
            candidate = _pools(baseline, candidate, sides, outcome)
        checks = {"baseline": timed.Timed(sides.verify), "kernel": timed.Timed(sides.verify)}
        trip = timed.RoundTrip()
        with _quiet(phase, database, "timing"):
            candidate = timed.time_both(baseline, candidate, sides, checks, trip, outcome)
        launch.check()
        with phase("judge"):
            _judge_timed(candidate, checks, sides, answers, outcome)
        if ahead is not None and ahead_at == "tail":
            with phase("ahead"):
                ahead()
        if candidate and outcome.status == Status.PASSED and sides.fresh:
            with phase("fresh"):
                candidate = _fresh(baseline, candidate, sides, answers, trip, outcome)
        with phase("profile"):
            _profile(baseline, candidate, sides, outcome)
        if candidate:
            candidate.stop()
            if sides.device.startswith("cuda") and "kernel" in outcome.stats:
                with phase("alone"):
                    timed.time_alone(baseline, sides, outcome)
    # Where the seconds went, per runner and command: from sending each (or from the answer before it,
    # where the runner was busy) to holding its answer.
    outcome.stats["waited_s"] = {
        remote.who: {op: round(s, 3) for op, s in remote.waited.items()}
        for remote in (runners.baseline, runners.candidate)
        if remote is not None
    }
    outcome.stats["wall_s"] = wall
    outcome.stats["round_trip_us"] = trip.describe() | outcome.stats.get("round_trip_us", {})
    if database is not None:
        outcome.stats["answering_s"] = answering
    return outcome


def _timer(
    wall: dict[str, float], answering: dict[str, float], busy: Callable[[], float] | None
) -> Callable[[str], Any]:
    """`with phase(name):` adds the seconds the block took to `wall[name]`, and the seconds DuckDB spent
    answering meanwhile (`busy`, any query's answers) to `answering[name]`: answers computed while the
    runners are timed share the host with them."""

    @contextmanager
    def phase(name: str) -> Iterator[None]:
        started, busy_before = time.perf_counter(), busy() if busy else 0.0
        try:
            yield
        finally:
            wall[name] = round(wall.get(name, 0.0) + time.perf_counter() - started, 3)
            if busy:
                answering[name] = round(answering.get(name, 0.0) + busy() - busy_before, 3)

    return phase


@contextmanager
def _quiet(phase: Callable[[str], Any], database: Database | None, name: str) -> Iterator[None]:
    """Phase `name` with DuckDB quiet (`Database.hold`): the wait for the answers under way is phase
    `settle`, so `answering_s[name]` is 0."""
    if database is not None:
        with phase("settle"):
            database.hold()
    try:
        with phase(name):
            yield
    finally:
        if database is not None:
            database.release()


def _start(
    runners: Runners, sides: Sides, kernel: tuple[Path, str] | None, outcome: Outcome
) -> Remote | None:
    """Both runners, sent `start` (`open_runners`), import what they run; the baseline's then loads the
    main tables while the kernel's trials run. The kernel's import must answer within the compile limit."""
    baseline, candidate = runners.baseline, runners.candidate
    if runners.failure is not None:
        outcome.fail(runners.failure.status, runners.failure.reason)
    outcome.hardware = baseline.answer()[0]["hardware"]
    baseline.send({"op": "load", "baseline": _mode(sides)}, sides.query_timeout_s)
    if candidate and kernel:
        load = {"op": "load", "kernel_path": str(kernel[0]), "scope": kernel[1]}
        started = _guarded(candidate, outcome, candidate.answer)
        sent = started and _sent(candidate, outcome, load, sides.compile_limit_s)
        candidate = _loaded(candidate, sides, outcome) if sent else None
    baseline.answer()
    baseline.send({"op": "tables", "folder": str(sides.folders[-1])}, sides.query_timeout_s)
    return candidate


def _pool(sides: Sides) -> dict[str, Any]:
    return {"op": "pool", "size": sides.timing.pool, "params": sides.params}


def _pools(baseline: Remote, candidate: Remote | None, sides: Sides, outcome: Outcome) -> Remote | None:
    """The table clones the timed calls rotate over, in both runners; the baseline's mode chosen where
    it is `best` (a probe in the trusted runner).

    The baseline's clones and first calls, which compile its plan, were sent before the kernel's trials
    and made meanwhile (`pool` "ahead"), but for one part: timing a compiled kernel's configurations on
    the device, which a graph the calibration's compile cache lacks would do. A kernel busy meanwhile
    would make the baseline keep slow ones for the whole evaluation, so the runner stops short of it
    (`tune`) and makes those calls here, with the kernel's runner frozen and, on a GPU, the device left
    to finish what that runner put on it, as before the baseline's timed batches."""
    baseline.answer()  # its main tables, loaded meanwhile
    ahead, _ = baseline.answer()
    outcome.stats["baseline_warm"] = ahead
    if ahead["tune"]:
        frozen = candidate.freeze(True) if candidate else None
        warm = {"op": "warm"} | ({"drain": timed.DRAIN_LIMIT_S} if sides.device.startswith("cuda") else {})
        try:
            drained, _ = baseline.ask(warm, sides.query_timeout_s)
        finally:
            if candidate and frozen is not None:
                candidate.freeze(False)
        outcome.stats["baseline_warm"]["drained"] = drained
        if drained.get("idle") is False:
            outcome.fail(
                Status.REJECTED,
                f"the device still ran the kernel's work {drained['busy_s']:.1f} s after its runner was "
                "frozen, where the baseline's compile was to time its configurations",
            )
    if (
        candidate
        and _guarded(candidate, outcome, partial(candidate.ask, _pool(sides), sides.query_timeout_s)) is None
    ):
        candidate = None
    if sides.baseline_mode == "best":
        command = {"op": "choose", "params": sides.params, "policy": asdict(sides.timing)}
        outcome.stats |= baseline.ask(command, sides.query_timeout_s)[0]
    else:
        outcome.stats["baseline_mode"] = sides.baseline_mode
    return candidate


@contextmanager
def _runner(launch: Launcher, sides: Sides, kernel: tuple[Path, str] | None) -> Iterator[Remote]:
    """A runner in a scratch folder of its own (its build caches), stopped whatever happens."""
    readable = list(sides.folders) + ([kernel[0].parent] if kernel else [])
    # A backstop behind the harness's own deadlines on each answer: start-up and trials, four times the
    # timing budget (warm-up and the last sample may outlast it), and a minute for each fresh set and
    # for the profile.
    limit = sides.query_timeout_s + sides.timing.max_time_s * 4 + 60 * (1 + len(sides.fresh))
    with _scratch(launch, sides) as scratch:
        launched = Launch(
            argv=[sys.executable, "-m", "evaluator.runner.commands"],
            readable=readable,
            writable=[] if launch.isolated else [scratch],
            hidden=[f / "tpch.duckdb" for f in sides.folders],
            env=sides.build_env(scratch, kernel is None),
            timeout_s=limit,
            channel=True,
        )
        remote = Remote(
            launch.start(launched),
            "kernel" if kernel else "baseline",
            spin_s=SPIN_S if sides.device.startswith("cuda") else 0.0,
        )
        try:
            yield remote
        finally:
            remote.stop()


@contextmanager
def _scratch(launch: Launcher, sides: Sides) -> Iterator[Path]:
    """Where the runner builds. An isolated runner builds in its private /tmp, whose size is bounded:
    a kernel that fills its build folder fills no disk of the host's. Elsewhere in a host folder of its
    own, removed after it (the baseline's is seeded with the calibration's compile cache)."""
    if launch.isolated:
        yield ISOLATED_SCRATCH
        return
    with tempfile.TemporaryDirectory(prefix=f"dkb-{sides.query.slug}-") as folder:
        yield Path(folder)


def _mode(sides: Sides) -> str:
    return "compiled" if sides.baseline_mode == "compiled" else "eager"  # "best" chooses later


def _loaded(candidate: Remote, sides: Sides, outcome: Outcome) -> Remote | None:
    """The kernel's import answered within the compile limit, or the kernel's part is over."""
    reason = f"building took longer than the {sides.compile_limit_s:g} s compile limit"
    try:
        answer, _ = candidate.answer(deadline_reason=reason)
    except RunnerFailed as exc:
        status = Status.BUILD_ERROR if exc.status == Status.TIMEOUT else exc.status
        outcome.fail(status, reason if exc.status == Status.TIMEOUT else exc.reason)
        return None
    except CallFailed as exc:
        outcome.fail(Status.BUILD_ERROR, exc.error)
        return None
    if answer.get("build_error"):
        outcome.fail(Status.BUILD_ERROR, str(answer["build_error"]))
        candidate.stop()
        return None
    return candidate


def _sent(candidate: Remote, outcome: Outcome, command: dict[str, Any], limit_s: float) -> bool:
    """`command` sent to the kernel's runner; False, its failure recorded, when the runner broke."""

    def send() -> bool:
        candidate.send(command, limit_s)
        return True

    return bool(_guarded(candidate, outcome, send))


def _guarded(candidate: Remote, outcome: Outcome, ask: Callable[[], Any]) -> Any:
    """`ask()`, with the kernel's failure recorded as its query's outcome (and then None)."""
    try:
        return ask()
    except RunnerFailed as exc:
        outcome.fail(exc.status, exc.reason)
    except CallFailed as exc:
        outcome.fail(exc.status, exc.error)
        candidate.stop()
    return None


def _trials(candidate: Remote, sides: Sides, answers: Answers | None, outcome: Outcome) -> Remote | None:
    """Every parameter set at every scale factor, the check ones first; judged as each answers."""
    assert answers is not None
    for phase, folder in enumerate(sides.folders):
        command = {"op": "tables", "folder": str(folder)}
        if _guarded(candidate, outcome, partial(candidate.ask, command, sides.query_timeout_s)) is None:
            return None
        sf = f"SF{scale_factor(folder):g}"
        for index, params in enumerate(sides.params):
            where = f"trial {index + 1} at {sf} {params}"
            try:
                answer, payload = candidate.ask(
                    {"op": "trial", "params": params},
                    sides.query_timeout_s,
                    f"no answer within {sides.query_timeout_s:g} s",
                )
            except RunnerFailed as exc:
                outcome.fail(exc.status, f"{where}: {exc.reason}")
                return None
            except CallFailed as exc:
                outcome.fail(exc.status, f"{where}: {exc.error}")
                candidate.stop()
                return None
            outcome.trials += 1
            problem = _result_problem(sides.query, folder, answer, payload, answers.get(phase, index))
            if problem is None and answer.get("inputs_changed"):
                problem = "the kernel modified its input tensors"
            if problem:
                outcome.fail(Status.WRONG_ANSWER, f"{where}: {problem}")
                candidate.stop()
                return None
    return candidate


def _result_problem(
    query: Query, folder: Path, answer: dict[str, Any], payload: bytes, expected: dict[str, np.ndarray]
) -> str | None:
    try:
        (result,) = unpack(answer.get("layout"), payload, 1)
    except ValueError as exc:
        return f"the result cannot be read: {exc}"
    return compare_result(query, folder, result, expected)


def _judge_timed(
    candidate: Remote | None,
    checks: dict[str, timed.Timed],
    sides: Sides,
    answers: Answers | None,
    outcome: Outcome,
) -> None:
    """Whether the timed calls changed their inputs (the cause first, before the wrong results it leads
    to), then the drawn timed results against DuckDB: the kernel's, and the baseline's (a kernel that
    spoils what the baseline computes beside it must not look fast)."""
    if answers is None or candidate is None:
        return
    changed = _guarded(candidate, outcome, lambda: candidate.ask({"op": "inputs"}, sides.query_timeout_s))
    if changed and changed[0].get("inputs_changed"):
        outcome.fail(Status.WRONG_ANSWER, "the kernel modified its input tensors while being timed")
    main = len(sides.folders) - 1
    for name in ("kernel", "baseline"):
        problem = checks[name].problem(
            sides.query, sides.folders[main], sides.params, lambda index: answers.get(main, index)
        )
        if problem:
            whose = {
                "kernel": "the result returned while being timed is wrong",
                "baseline": "the baseline's result went wrong while timed beside this kernel",
            }[name]
            outcome.fail(Status.WRONG_ANSWER, f"{whose}: {problem}")
            return
        if checks[name].capped_at is not None:
            outcome.stats.setdefault("timed_checks_capped_at", {})[name] = checks[name].capped_at


def _fresh(
    baseline: Remote,
    candidate: Remote,
    sides: Sides,
    answers: Answers | None,
    trip: timed.RoundTrip,
    outcome: Outcome,
) -> Remote | None:
    """The fresh parameter sets (evaluator/harness/fresh.py): per set and side, one untimed call on tables
    rolled apart (it compiles what the new values need), one timed call on valid tables it has never seen
    (a kernel that precomputes per table content pays for it here), a second untimed call on the torn
    tables (any cache keyed on parameters now holds a wrong answer: the valid tables' can be right), then
    two timed calls on the rotation's clones, the second result checked.

    The baseline's calls here are what the kernel's are compared with (`fresh.slowdown`): a baseline
    slowed here would hide a kernel's precomputation. So, as while the baseline is timed, the kernel's
    runner is frozen through the baseline's part of each set, or, where it cannot be, its CPU time
    counted (`timed.Beside`), and on a GPU the baseline's runner drains the device before each of its
    timed calls (`timed.DeviceBusy`)."""
    assert answers is not None
    facts: dict[str, dict[str, Any]] = {
        "baseline": {"ms": [], "first_ms": []},
        "kernel": {"ms": [], "first_ms": []},
    }
    main = len(sides.folders) - 1
    limit = sides.query_timeout_s
    device = timed.DeviceBusy() if sides.device.startswith("cuda") else None
    beside = timed.Beside(candidate)
    for index, params in enumerate(sides.fresh):
        first_roll, second_roll = sides.rolls[index]
        for name, remote in (("baseline", baseline), ("kernel", candidate)):
            side = facts[name]
            busy = device if name == "baseline" else None
            where = "on a parameter set drawn after its timed reps"
            left = None
            with beside.around() if name == "baseline" else nullcontext():
                try:
                    try:
                        remote.ask({"op": "roll", "roll": first_roll}, limit)
                        remote.ask({"op": "rolled", "params": params}, limit)
                    except CallFailed as exc:
                        # Rolled tables are not valid TPC-H data (a line may ship before its order is placed):
                        # a kernel may fail there and be right on real data. Noted, not judged.
                        side.setdefault("rolled_errors", []).append(exc.error)
                    # Rotated tables are valid data: a kernel that fails there fails (else failing on new
                    # content would be a way out of the check on it).
                    where = "on tables it had not seen (valid data: rows moved under other keys)"
                    remote.ask({"op": "roll", "roll": second_roll, "whole_rows": True}, limit)
                    armed, _ = remote.ask(timed.arm_command(sides, drain=busy is not None), limit)
                    if busy is not None:
                        busy.add(armed)
                    seconds, _, _ = remote.timed({"op": "rolled", "params": params}, limit)
                    side["first_ms"].append(trip.minus(seconds, name, 1) * 1e3)  # as a one-call batch
                    where = "on a parameter set drawn after its timed reps"
                    try:  # the torn tables last: a cache keyed by parameters leaves with their wrong answer
                        remote.ask({"op": "rolled", "params": params, "copy": -2}, limit)
                    except CallFailed as exc:
                        side.setdefault("rolled_errors", []).append(exc.error)
                    for clone in (index, index + 1):
                        seconds, answer, payload = timed.timed_batch(
                            remote,
                            name,
                            sides,
                            trip,
                            {"op": "batch", "calls": [[clone, 0]], "params": [params]},
                            limit,
                            busy=busy,
                        )
                        side["ms"].append(seconds * 1e3)
                    problem = _result_problem(
                        sides.query, sides.folders[main], answer, payload, answers.fresh(index)
                    )
                except timed.LeftBusy as exc:  # the kernel's runner was frozen: something it started is not
                    left = str(exc)
                except (RunnerFailed, CallFailed) as exc:
                    if name == "baseline":
                        raise
                    reason = exc.reason if isinstance(exc, RunnerFailed) else exc.error
                    outcome.fail(exc.status, f"{where}, {params}: {reason}")
                    outcome.stats["fresh"] = facts
                    return None
            if left:
                outcome.fail(Status.REJECTED, f"on the fresh parameter sets: {left}")
                outcome.stats["fresh"] = facts
                _fresh_busy(device, outcome)
                candidate.stop()
                return None
            if problem and name == "kernel":
                outcome.fail(
                    Status.WRONG_ANSWER, f"on a parameter set drawn after its timed reps, {params}: {problem}"
                )
                outcome.stats["fresh"] = facts
                return candidate
    baseline.ask({"op": "unroll"}, limit)
    if _guarded(candidate, outcome, lambda: candidate.ask({"op": "unroll"}, limit)) is None:
        return None
    timing = {name: outcome.stats[name] for name in ("baseline", "kernel")}
    outcome.stats["fresh"] = facts | {
        "slowdown": fresh.slowdown(timing, facts),
        "first_slowdown": fresh.first_slowdown(timing, facts),
    }
    _fresh_busy(device, outcome)
    why = (
        fresh.cached(timing, facts, sides.device)
        or fresh.precomputed(timing, facts, sides.device)
        or (device.problem() if device else None)
        # a runner that cannot be frozen is watched by its CPU time
        or beside.problem("the baseline's calls on the fresh parameter sets ran")
    )
    if why:
        outcome.fail(Status.REJECTED, why)
    return candidate


def _fresh_busy(device: timed.DeviceBusy | None, outcome: Outcome) -> None:
    """The drain's waits before the baseline's fresh calls, beside the timing's (`device_busy`)."""
    if device is not None:
        outcome.stats.setdefault("device_busy", {})["fresh"] = device.describe()


def _profile(baseline: Remote, candidate: Remote | None, sides: Sides, outcome: Outcome) -> None:
    """One profiled call on each side, the two at once: starting the profiler costs each runner
    seconds, and what it yields is a label (the attribution), not a time."""
    command = {"op": "profile", "params": sides.params[0]}
    baseline.send(command, sides.query_timeout_s)
    sent = candidate is not None and _sent(candidate, outcome, command, sides.query_timeout_s)
    outcome.profile["baseline"] = baseline.answer()[0]
    if candidate and sent:
        profiled = _guarded(candidate, outcome, candidate.answer)
        if profiled:
            outcome.profile["kernel"] = profiled[0]
