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
3. timing: rounds of one batch each, baseline and kernel interleaved on the same device;
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

import bisect
import hashlib
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from evaluator import timing
from evaluator.harness import cores as pinning
from evaluator.harness import fresh
from evaluator.harness.judge import Answers, Database, compare_result
from evaluator.harness.launch import Launch, Launcher
from evaluator.harness.remote import CallFailed, Remote, RunnerFailed
from evaluator.queries import Query
from evaluator.report import Status
from evaluator.results import unpack
from evaluator.timing import CallLimitExceeded, TimingPolicy, time_rounds, verified
from evaluator.tpch.load import scale_factor

# A baseline timed beside the kernel this much slower than alone, on a GPU, was disturbed by the kernel's
# process (work it left running on the device, or its threads on the host): the kernel is not scored.
DISTURBED = 1.5
# While the baseline's samples are timed the kernel's runner waits on its pipe: a kernel's process that
# used more than this share of a core meanwhile left work running on the host, beside the baseline.
BUSY_BESIDE = 0.25
KEPT_BYTES = 64 << 20  # distinct timed results kept for checking, per candidate
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
    DuckDB (`answers`' where there are answers), kept quiet while the calls are timed."""
    outcome = Outcome(status=Status.PASSED if kernel else Status.MISSING)
    wall: dict[str, float] = {}
    answering: dict[str, float] = {}
    database = answers.database if answers else database
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
        if candidate:
            with phase("trials"):
                candidate = _trials(candidate, sides, answers, outcome)
            launch.check()  # a kernel that used up the evaluation's time ends the evaluation
        candidate = _pools(baseline, candidate, sides, outcome)
        checks = {"baseline": Timed(sides.verify), "kernel": Timed(sides.verify)}
        trip = RoundTrip()
        with _quiet(phase, database, "timing"):
            candidate = _time(baseline, candidate, sides, checks, trip, outcome)
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
                    _alone(baseline, sides, outcome)
    # Where the seconds went, per runner and command: from sending each to holding its answer.
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


def _pools(baseline: Remote, candidate: Remote | None, sides: Sides, outcome: Outcome) -> Remote | None:
    """The table clones the timed calls rotate over, in both runners; the baseline's mode chosen where
    it is `best` (a probe in the trusted runner)."""
    baseline.answer()  # its main tables, loaded meanwhile
    pool = {"op": "pool", "size": sides.timing.pool, "params": sides.params}
    baseline.ask(pool, sides.query_timeout_s)
    if (
        candidate
        and _guarded(candidate, outcome, partial(candidate.ask, pool, sides.query_timeout_s)) is None
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
    with tempfile.TemporaryDirectory(prefix=f"dkb-{sides.query.slug}-") as scratch:
        launched = Launch(
            argv=[sys.executable, "-m", "evaluator.runner.commands"],
            readable=readable,
            writable=[Path(scratch)],
            hidden=[f / "tpch.duckdb" for f in sides.folders],
            env=sides.build_env(Path(scratch), kernel is None),
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


def _arm(sides: Sides) -> dict[str, Any]:
    """Ready for a timed batch, on the runners' core (evaluator/harness/cores.py): a runner starts on all the
    harness's cores, so that the two start up side by side, and moves its thread there when armed."""
    return {"op": "arm"} | ({"cpus": sorted(sides.runner_cores)} if sides.runner_cores else {})


def _probe(sides: Sides) -> Callable[[], float] | None:
    """Each round's host probe (evaluator/timing.py) on the runners' core, where the calls it vouches
    for are timed: this thread moves there for it and back. On the H200 any core ran at half speed for
    seconds at a time, the runners' among them (docs/benchmarks.md, session 16), and a probe on the
    harness's cores could not see it. None (the probe where this thread is) without a split."""
    if not sides.runner_cores:
        return None
    cores = sides.runner_cores

    def probe() -> float:
        with pinning.pinned(cores):
            return timing.host_probe()

    return probe


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


class Timed:
    """The results of one candidate's timed calls that get checked: rep `r` when `verified(seed, share,
    r)` draws it (drawn here, after its batch answered), and the last rep. Results equal byte for byte
    to one kept for the same parameter set are kept once; past `KEPT_BYTES`, no more are kept and the
    rest are not checked (`capped_at`)."""

    def __init__(self, verify: dict[str, Any]) -> None:
        self.seed, self.share = verify["seed"], verify["share"]
        self.kept: dict[tuple[int, bytes], tuple[int, dict[str, np.ndarray]]] = {}  # (set, digest) -> rep
        self.nbytes = 0
        self.capped_at: int | None = None
        self.last: tuple[int, int, dict[str, np.ndarray]] | None = None
        self.reps = 0

    def add(self, rep: int, sets: list[int], results: list[dict[str, np.ndarray]]) -> None:
        for offset, (index, result) in enumerate(zip(sets, results, strict=True)):
            self.last = (rep + offset, index, result)
            if verified(self.seed, self.share, rep + offset):
                self._keep(rep + offset, index, result)
        self.reps = max(self.reps, rep + len(results))

    def _keep(self, rep: int, index: int, result: dict[str, np.ndarray]) -> None:
        digest = hashlib.blake2b(digest_size=16)
        for name in sorted(result):
            digest.update(f"{name}:{result[name].dtype}:".encode() + result[name].tobytes())
        key = (index, digest.digest())
        if key in self.kept or self.capped_at is not None:
            return
        size = sum(a.nbytes for a in result.values())
        if self.nbytes + size > KEPT_BYTES:
            self.capped_at = rep
            return
        self.nbytes += size
        self.kept[key] = (rep, result)

    def problem(
        self,
        query: Query,
        folder: Path,
        params: list[dict[str, Any]],
        expected: Callable[[int], dict[str, np.ndarray]],
    ) -> str | None:
        if self.last is not None:
            self._keep(*self.last)
        for (index, _), (rep, result) in sorted(self.kept.items(), key=lambda kv: kv[1][0]):
            wrong = compare_result(query, folder, result, expected(index))
            if wrong:
                return f"timed call {rep + 1} of {self.reps} {params[index]}: {wrong}"
        return None


class RoundTrip:
    """The channel's share of a timed sample: an empty command's round trip (`ping`), timed between `arm`
    and each timed batch, the runner in the state the batch finds it in. The median of the baseline's
    (the trusted runner's: the kernel's process could only slow its own) is taken off every timed sample
    of both sides, so that a sample is its calls, their results' copy and little else (issue 14: the
    channel under 1% of a 0.5 ms call). Never more than half a sample. The kernel's round trips are kept
    for the report only."""

    def __init__(self) -> None:
        self.seconds: dict[str, list[float]] = {"baseline": [], "kernel": []}  # each kept sorted

    def add(self, name: str, seconds: float) -> None:
        bisect.insort(self.seconds[name], seconds)

    def median_s(self, name: str = "baseline") -> float:
        kept = self.seconds[name]
        if not kept:
            return 0.0
        middle = len(kept) // 2
        return kept[middle] if len(kept) % 2 else (kept[middle - 1] + kept[middle]) / 2

    def minus(self, seconds: float) -> float:
        """A timed command's seconds, the baseline's round trip so far taken off."""
        return seconds - min(self.median_s(), seconds / 2)

    def describe(self) -> dict[str, float]:
        """Microseconds: each side's median round trip (the baseline's is what was taken off)."""
        return {name: round(self.median_s(name) * 1e6, 2) for name, kept in self.seconds.items() if kept}


def _timed_batch(
    remote: Remote,
    name: str,
    sides: Sides,
    trip: RoundTrip,
    command: dict[str, Any],
    limit: float,
    deadline_reason: str | None = None,
) -> tuple[float, dict[str, Any], bytes]:
    """A timed batch: `arm` (L2 flushed, device idle) and `ping` outside the window, then the batch, timed
    here from sending it to holding every result, the baseline's round trip taken off (`RoundTrip`)."""
    remote.ask(_arm(sides), sides.query_timeout_s)
    trip.add(name, remote.timed({"op": "ping"}, sides.query_timeout_s)[0])
    seconds, answer, payload = remote.timed(command, limit, deadline_reason)
    return trip.minus(seconds), answer, payload


def _batch(
    remote: Remote,
    name: str,
    sides: Sides,
    checks: dict[str, Timed],
    pace: dict[str, float],
    trip: RoundTrip,
) -> Callable[[int, int], float]:
    """One candidate's timed sample: a batch of calls (`_timed_batch`), its drawn results kept to check."""
    sets = len(sides.params)

    def run(rep: int, calls: int) -> float:
        order = [(rep + i) % sets for i in range(calls)]
        batch = [[rep + i, index] for i, index in enumerate(order)]  # sides.params[index], sent with `pool`
        # The deadline: the per-call limit, against the baseline's pace so far (or the query's limit).
        per_call = pace.get("baseline")
        limit = (
            (sides.timing.call_limit * 2 * per_call * calls / 1e3 + 5.0)
            if per_call
            else sides.query_timeout_s
        )
        seconds, answer, payload = _timed_batch(
            remote,
            name,
            sides,
            trip,
            {"op": "batch", "calls": batch},
            limit,
            f"a timed batch ran past its {limit:.1f} s limit",
        )
        try:
            results = unpack(answer.get("layout"), payload, calls)
        except ValueError as exc:
            raise CallFailed(remote.who, f"the results of a timed batch cannot be read: {exc}") from None
        checks[name].add(rep, order, results)
        ms = seconds * 1e3 / calls
        if name == "baseline":
            pace["baseline"] = min(pace.get("baseline", ms), ms)
        return ms

    return run


def _time(
    baseline: Remote,
    candidate: Remote | None,
    sides: Sides,
    checks: dict[str, Timed],
    trip: RoundTrip,
    outcome: Outcome,
) -> Remote | None:
    """Baseline and kernel interleaved; the baseline alone if the kernel failed or is gone."""
    pace: dict[str, float] = {}
    policy = sides.timing
    if candidate is not None:
        try:
            beside = Beside(candidate)
            stats = time_rounds(
                {
                    "baseline": beside.watch(_batch(baseline, "baseline", sides, checks, pace, trip)),
                    "kernel": _batch(candidate, "kernel", sides, checks, pace, trip),
                },
                policy=policy,
                strata=len(sides.params),
                probe=_probe(sides),
            )
            outcome.stats |= {name: asdict(s) for name, s in stats.items()}
            busy = beside.share()
            if busy is not None:
                outcome.stats["kernel_cpu_beside_baseline"] = round(busy, 3)
                if busy > BUSY_BESIDE:
                    outcome.fail(
                        Status.REJECTED,
                        f"the kernel's process kept {100 * busy:.0f}% of a CPU core busy while the baseline "
                        "was timed beside it: work left running between its calls slows the baseline",
                    )
            return candidate
        except RunnerFailed as exc:
            if exc.who == "baseline":
                raise
            outcome.fail(exc.status, f"while being timed: {exc.reason}")
        except CallFailed as exc:
            if exc.who == "baseline":
                raise
            outcome.fail(exc.status, f"while being timed: {exc.error}")
        except CallLimitExceeded as exc:
            outcome.fail(Status.TIMEOUT, f"while being timed: {exc}")
        candidate.stop()
        checks["baseline"] = Timed(sides.verify)
    stats = time_rounds(
        {"baseline": _batch(baseline, "baseline", sides, checks, pace, trip)},
        policy=policy,
        strata=len(sides.params),
        probe=_probe(sides),
    )
    outcome.stats["baseline"] = asdict(stats["baseline"])
    return None


class Beside:
    """The kernel's runner's CPU time while the baseline's samples are timed, read from outside it
    (its cgroup, `Remote.cpu_s`). It has answered its own batch and waits on its pipe then, so an honest
    one uses next to nothing; a thread it left running takes host time from the baseline's runner,
    which shares its core (evaluator/harness/cores.py), and makes the kernel look faster."""

    def __init__(self, candidate: Remote) -> None:
        self.candidate = candidate
        self.cpu_s = self.wall_s = 0.0

    def watch(self, run: Callable[[int, int], float]) -> Callable[[int, int], float]:
        def watched(rep: int, calls: int) -> float:
            before, started = self.candidate.cpu_s(), time.perf_counter()
            ms = run(rep, calls)
            after = self.candidate.cpu_s()
            if before is not None and after is not None:
                self.cpu_s += after - before
                self.wall_s += time.perf_counter() - started
            return ms

        return watched

    def share(self) -> float | None:
        """CPU seconds the kernel's process used per second of the baseline's samples; None: not counted."""
        return self.cpu_s / self.wall_s if self.wall_s > 0 else None


def _judge_timed(
    candidate: Remote | None,
    checks: dict[str, Timed],
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
    trip: RoundTrip,
    outcome: Outcome,
) -> Remote | None:
    """The fresh parameter sets (evaluator/harness/fresh.py): per set and side, one untimed call on tables
    rolled apart (it compiles what the new values need), one timed call on valid tables it has never seen
    (a kernel that precomputes per table content pays for it here), a second untimed call on the torn
    tables (any cache keyed on parameters now holds a wrong answer: the valid tables' can be right), then
    two timed calls on the rotation's clones, the second result checked."""
    assert answers is not None
    facts: dict[str, dict[str, Any]] = {
        "baseline": {"ms": [], "first_ms": []},
        "kernel": {"ms": [], "first_ms": []},
    }
    main = len(sides.folders) - 1
    limit = sides.query_timeout_s
    for index, params in enumerate(sides.fresh):
        first_roll, second_roll = sides.rolls[index]
        for name, remote in (("baseline", baseline), ("kernel", candidate)):
            side = facts[name]
            where = "on a parameter set drawn after its timed reps"
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
                seconds, _, _ = remote.timed({"op": "rolled", "params": params}, limit)
                side["first_ms"].append(trip.minus(seconds) * 1e3)
                where = "on a parameter set drawn after its timed reps"
                try:  # the torn tables last: a cache keyed by parameters leaves with their wrong answer
                    remote.ask({"op": "rolled", "params": params, "copy": -2}, limit)
                except CallFailed as exc:
                    side.setdefault("rolled_errors", []).append(exc.error)
                for clone in (index, index + 1):
                    seconds, answer, payload = _timed_batch(
                        remote,
                        name,
                        sides,
                        trip,
                        {"op": "batch", "calls": [[clone, 0]], "params": [params]},
                        limit,
                    )
                    side["ms"].append(seconds * 1e3)
                problem = _result_problem(
                    sides.query, sides.folders[main], answer, payload, answers.fresh(index)
                )
            except (RunnerFailed, CallFailed) as exc:
                if name == "baseline":
                    raise
                reason = exc.reason if isinstance(exc, RunnerFailed) else exc.error
                outcome.fail(exc.status, f"{where}, {params}: {reason}")
                outcome.stats["fresh"] = facts
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
    why = fresh.cached(timing, facts, sides.device) or fresh.precomputed(timing, facts, sides.device)
    if why:
        outcome.fail(Status.REJECTED, why)
    return candidate


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


def _alone(baseline: Remote, sides: Sides, outcome: Outcome) -> None:
    """The baseline timed again with the kernel's runner gone; a kernel beside which it ran far slower
    does not stand (`DISTURBED`)."""
    checks, trip = {"baseline": Timed(sides.verify)}, RoundTrip()
    policy = replace(
        sides.timing,
        min_time_s=min(0.5, sides.timing.min_time_s),
        max_time_s=min(2.0, sides.timing.max_time_s),
    )
    alone = time_rounds(
        {"baseline": _batch(baseline, "baseline", sides, checks, {}, trip)},
        policy=policy,
        strata=len(sides.params),
        probe=_probe(sides),
    )["baseline"]
    outcome.stats["round_trip_us"] = {"alone": trip.describe()["baseline"]}
    beside = outcome.stats["baseline"]["median_ms"]
    outcome.stats["baseline_alone"] = asdict(alone)
    if beside > DISTURBED * alone.median_ms:
        outcome.fail(
            Status.REJECTED,
            f"the baseline took {beside:.3f} ms beside this kernel but "
            f"{alone.median_ms:.3f} ms alone: the kernel's process disturbed the device",
        )
