"""A query's timed calls, taken from the trusted side (evaluator/harness/session.py runs them).

Baseline and kernel are timed in rounds, interleaved on the same device (`time_both`), each sample a
batch of calls the harness times from sending it to holding every result (`timed_batch`): the runner is
armed first (L2 flushed, device idle) and pinged, and the baseline's round trip is taken off both sides
(`RoundTrip`). Each round's host probe runs on the runners' core (`round_probe`); the kernel's processes
are frozen, and their CPU time watched, while the baseline is timed (`Beside`); a share of the timed
results, drawn after each batch, is kept to be checked against DuckDB's answers (`Timed`). Once the kernel's
runner is gone the baseline is timed alone (`time_alone`).
"""

from __future__ import annotations

import bisect
import hashlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluator import timing
from evaluator.harness import cores as pinning
from evaluator.harness.judge import compare_result
from evaluator.harness.remote import CallFailed, Remote, RunnerFailed
from evaluator.queries import Query
from evaluator.report import Status
from evaluator.results import unpack
from evaluator.timing import CallLimitExceeded, time_rounds, verified

if TYPE_CHECKING:
    from evaluator.harness.session import Outcome, Sides

# A baseline timed beside the kernel this much slower than alone, on a GPU, was disturbed by the kernel's
# process (work it left running on the device, or its threads on the host): the kernel is not scored.
DISTURBED = 1.5
# While the baseline's samples are timed the kernel's runner is frozen, or where it cannot be, waits on its
# pipe: a kernel's process that used more than this share of a core meanwhile left work running on the
# host, beside the baseline.
BUSY_BESIDE = 0.25
# Before each of the baseline's timed batches on a GPU its runner waits for the device to run nothing
# else (evaluator/runner/commands.py, `drain`). An honest kernel's runner synchronizes the device after
# every call, so a device still busy after it answered holds work its process left there: busy longer
# than this before over half of the baseline's samples, the kernel is rejected.
LEFT_BUSY_MS = 1.0
DRAIN_LIMIT_S = 10.0  # still busy after this, or half the query's limit on a command: rejected
KEPT_BYTES = 64 << 20  # distinct timed results kept for checking, per candidate


def arm_command(sides: Sides, drain: bool = False) -> dict[str, Any]:
    """Ready for a timed batch, on the runners' core (evaluator/harness/cores.py): a runner starts on all the
    harness's cores, so that the two start up side by side, and moves its thread there when armed. With
    `drain` (the baseline's runner), first the device left to run nothing else (`DeviceBusy`). On a GPU
    the runner then makes one call of its own, untimed (`prime`, 0.6.15): the first call after the other
    runner's turn ran up to 0.4 ms slower than the rest, on either side, which moved the Triton example
    set's speedups by up to 0.8% at 7 calls a sample (docs/benchmarks.md, session 28)."""
    return (
        {"op": "arm"}
        | ({"cpus": sorted(sides.runner_cores)} if sides.runner_cores else {})
        | ({"drain": min(DRAIN_LIMIT_S, sides.query_timeout_s / 2)} if drain else {})
        | ({"prime": True} if sides.device.startswith("cuda") else {})
    )


def round_probe(sides: Sides) -> Callable[[], float] | None:
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


class LeftBusy(Exception):
    """The device was still busy `DRAIN_LIMIT_S` after the kernel's runner answered and was frozen."""


class DeviceBusy:
    """How long the device stayed busy before each of the baseline's timed batches, as its runner's
    `drain` measured it: the trusted runner waits for the device to run nothing else, so work the
    kernel's process left there when it answered runs before the baseline's batch, not into it."""

    def __init__(self) -> None:
        self.busy_ms: list[float] = []

    def add(self, drained: dict[str, Any]) -> None:
        busy_ms = 1e3 * float(drained.get("busy_s", 0.0))
        self.busy_ms.append(busy_ms)
        if drained.get("idle") is False:
            raise LeftBusy(
                f"the device was still busy {busy_ms / 1e3:.1f} s after the kernel's runner answered a timed "
                "batch and was frozen: its process left work running on the device"
            )  # the kernel's runner, thawed, could keep it so: no more of its batches are timed

    def describe(self) -> dict[str, Any]:
        """`samples`, how many found the device `busy`, and over `LEFT_BUSY_MS`; the median and the
        longest wait, in milliseconds."""
        busy = self.busy_ms
        return {
            "samples": len(busy),
            "busy": sum(ms > 0 for ms in busy),
            "over_limit": sum(ms > LEFT_BUSY_MS for ms in busy),
            "median_ms": round(float(np.median(busy)), 3) if busy else None,
            "max_ms": round(max(busy), 3) if busy else None,
        }

    def problem(self) -> str | None:
        seen = self.describe()
        if seen["over_limit"] * 2 <= seen["samples"]:
            return None
        return (
            f"the device was still busy with the kernel's work before {seen['over_limit']} of the baseline's "
            f"{seen['samples']} timed batches (for a median {seen['median_ms']:.1f} ms after its runner "
            "answered and was frozen): its process leaves work running on the device after answering, untimed"
        )


class RoundTrip:
    """The channel's share of a timed sample, measured from the trusted side and taken off the sample,
    never more than half of it, so that a sample is its calls and little else (issue 14: the channel
    under 1% of a 0.5 ms call).

    - `ping`: an empty command's round trip, timed between `arm` and each timed batch, the runner in the
      state the batch finds it in. The baseline's median is taken off a sample no echo covers yet; the
      kernel's round trips are kept for the report only: its process could only slow its own.
    - `echo` (0.6.10): the whole channel, results included. The baseline's runner, armed, answers with
      the layout and bytes of each side's last batch, gathered as a batch gathers its results, no call
      made (evaluator/runner/commands.py, `echo`); the median of a side's echoes of batches with as many
      calls is taken off that side's samples. The ping alone left the results' copy and layout in each
      sample: 1.9% of a compiled 0.63 ms call at 10 calls a sample on the H200 (docs/benchmarks.md,
      session 17). The kernel's samples lose no more than the baseline's echo: a kernel whose results
      carry more bytes is not paid for them (one that sends them some cheaper way of its own keeps
      what it saves, as when only the round trip came off).
    """

    def __init__(self) -> None:
        self.seconds: dict[str, list[float]] = {"baseline": [], "kernel": []}  # each kept sorted
        self.echoes: dict[tuple[str, int], list[float]] = {}  # per side and calls a batch, kept sorted
        self.layouts: dict[str, tuple[list[Any], list[Any]]] = {}  # per side: its last batch's results, calls
        self.shapes: dict[str, list[Any]] = {}  # per side, the layout the baseline's runner holds (`shape`)
        self.turn = 0

    def add(self, name: str, seconds: float) -> None:
        bisect.insort(self.seconds[name], seconds)

    def median_s(self, name: str = "baseline") -> float:
        return _median(self.seconds[name])

    def keep(self, name: str, layout: list[list[list[Any]]], calls: list[Any]) -> None:
        """A side's last batch: its layout, as `results.unpack` checked it, and its command's calls."""
        self.layouts[name] = ([[column[:3] for column in columns] for columns in layout], calls)

    def echo(self, remote: Remote, limit_s: float) -> None:
        """The baseline's runner, armed, echoes each side's last batch; each answer is timed. The echo's
        command carries that batch's calls, as the batch's did, and its layout goes ahead, untimed, where
        it changed (`shape`: the runner makes its buffers then, as a batch's calls make its results). The
        sides take turns going first: the first command after `arm` can be the dearer."""
        self.turn += 1
        for name, (layout, calls) in sorted(self.layouts.items(), reverse=self.turn % 2 == 0):
            if self.shapes.get(name) != layout:
                remote.ask({"op": "shape", "side": name, "layout": layout}, limit_s)
                self.shapes[name] = layout
            seconds, _, _ = remote.timed({"op": "echo", "side": name, "calls": calls}, limit_s)
            bisect.insort(self.echoes.setdefault((name, len(layout)), []), seconds)

    def minus(self, seconds: float, name: str = "baseline", calls: int = 0) -> float:
        """A timed batch's seconds, less the channel's: the median echo of `name`'s batches of `calls`
        calls (the kernel's: at most the baseline's), or where there is none yet the baseline's round
        trip."""
        ours, theirs = self.echoes.get((name, calls)), self.echoes.get(("baseline", calls))
        taken = min(_median(ours), _median(theirs)) if ours and theirs else self.median_s()
        return seconds - min(taken, seconds / 2)

    def describe(self) -> dict[str, Any]:
        """Microseconds: each side's median round trip (`ping`), and, under `echo`, each side's median
        echo of its batches with the most calls (what its timed samples lost)."""
        described: dict[str, Any] = {
            name: round(self.median_s(name) * 1e6, 2) for name, kept in self.seconds.items() if kept
        }
        echoes = {}
        for (name, _), kept in sorted(self.echoes.items()):  # the most calls last
            echoes[name] = round(_median(kept) * 1e6, 2)
        if echoes:
            described["echo"] = echoes
        return described


def _median(kept: list[float]) -> float:
    """The median of a sorted list; 0.0 for none."""
    if not kept:
        return 0.0
    middle = len(kept) // 2
    return kept[middle] if len(kept) % 2 else (kept[middle - 1] + kept[middle]) / 2


def timed_batch(
    remote: Remote,
    name: str,
    sides: Sides,
    trip: RoundTrip,
    command: dict[str, Any],
    limit: float,
    deadline_reason: str | None = None,
    busy: DeviceBusy | None = None,
    echo: bool = False,
) -> tuple[float, dict[str, Any], bytes]:
    """A timed batch: `arm` (L2 flushed, device idle; with `busy`, the device drained of other work and
    the wait kept there), with `echo` (the baseline's runner) the echoes of each side's last batch, and
    `ping`, all outside the window; then the batch, timed here from sending it to holding every result,
    the channel's share taken off (`RoundTrip`)."""
    armed, _ = remote.ask(arm_command(sides, drain=busy is not None), sides.query_timeout_s)
    if busy is not None:
        busy.add(armed)
    if echo:
        trip.echo(remote, sides.query_timeout_s)
    trip.add(name, remote.timed({"op": "ping"}, sides.query_timeout_s)[0])
    seconds, answer, payload = remote.timed(command, limit, deadline_reason)
    return trip.minus(seconds, name, len(command.get("calls", []))), answer, payload


def _batch(
    remote: Remote,
    name: str,
    sides: Sides,
    checks: dict[str, Timed],
    pace: dict[str, float],
    trip: RoundTrip,
    busy: DeviceBusy | None = None,
) -> Callable[[int, int], float]:
    """One candidate's timed sample: a batch of calls (`timed_batch`), its drawn results kept to check;
    with `busy` (the baseline's, on a GPU), the device drained first (`DeviceBusy`)."""
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
        seconds, answer, payload = timed_batch(
            remote,
            name,
            sides,
            trip,
            {"op": "batch", "calls": batch},
            limit,
            f"a timed batch ran past its {limit:.1f} s limit",
            busy,
            echo=name == "baseline",
        )
        try:
            results = unpack(answer.get("layout"), payload, calls)
        except ValueError as exc:
            raise CallFailed(remote.who, f"the results of a timed batch cannot be read: {exc}") from None
        trip.keep(name, answer["layout"], batch)
        checks[name].add(rep, order, results)
        ms = seconds * 1e3 / calls
        if name == "baseline":
            pace["baseline"] = min(pace.get("baseline", ms), ms)
        return ms

    return run


def time_both(
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
        device = DeviceBusy() if sides.device.startswith("cuda") else None
        try:
            beside = Beside(candidate)
            stats = time_rounds(
                {
                    "baseline": beside.watch(_batch(baseline, "baseline", sides, checks, pace, trip, device)),
                    "kernel": _batch(candidate, "kernel", sides, checks, pace, trip),
                },
                policy=policy,
                strata=len(sides.params),
                probe=round_probe(sides),
            )
            outcome.stats |= {name: asdict(s) for name, s in stats.items()}
            frozen = beside.frozen_share()
            if frozen is not None:
                outcome.stats["kernel_frozen_beside_baseline"] = round(frozen, 3)
                outcome.stats["kernel_freezing_us"] = beside.freezing_us()
            busy = beside.share()
            if busy is not None:
                outcome.stats["kernel_cpu_beside_baseline"] = round(busy, 3)
            spun = beside.problem("the baseline was timed")
            if spun:
                outcome.fail(Status.REJECTED, spun)
            if device is not None:
                outcome.stats["device_busy"] = {"beside": device.describe()}
                left = device.problem()
                if left:
                    outcome.fail(Status.REJECTED, left)
            return candidate
        except LeftBusy as exc:
            outcome.fail(Status.REJECTED, f"while being timed: {exc}")
            assert device is not None
            outcome.stats["device_busy"] = {"beside": device.describe()}
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
        trip.layouts.pop("kernel", None)  # nothing more of the kernel's to echo
    stats = time_rounds(
        {"baseline": _batch(baseline, "baseline", sides, checks, pace, trip)},
        policy=policy,
        strata=len(sides.params),
        probe=round_probe(sides),
    )
    outcome.stats["baseline"] = asdict(stats["baseline"])
    return None


class Beside:
    """The kernel's runner while the baseline's samples are timed: frozen, and its CPU time read, from
    outside it (its cgroup: `Remote.freeze`, `Remote.cpu_s`). It has answered its own batch and waits on
    its pipe then, so freezing an honest one costs it nothing; a thread it left running would take host
    time from the baseline's runner, which shares its core (evaluator/harness/cores.py), and make the
    kernel look faster. Frozen, it can neither run nor start work on the device. Its CPU time is read
    all the same, for a runner that cannot be frozen (no cgroup freezer here) or was not in time: after
    one freeze past its wait (sandbox/cgroup.py) no more are tried, so a runner that will not freeze costs
    the query that wait once, and its CPU time alone is watched."""

    def __init__(self, candidate: Remote) -> None:
        self.candidate = candidate
        self.cpu_s = self.wall_s = 0.0
        self.samples = self.frozen = 0
        self.freezing_s: list[float] = []  # how long each freeze took, until every process was frozen
        self.freezable = False
        self.trying = True

    def watch(self, run: Callable[[int, int], float]) -> Callable[[int, int], float]:
        def watched(rep: int, calls: int) -> float:
            with self.around():
                return run(rep, calls)

        return watched

    @contextmanager
    def around(self) -> Iterator[None]:
        """The block run with the kernel's runner frozen, and its CPU time counted."""
        # Read once frozen, so that what it ran before counts for none of the baseline's time: a task
        # running when frozen is charged what it ran since the last tick only then.
        asked = time.perf_counter()
        frozen = self.candidate.freeze(True) if self.trying else None
        if frozen:
            self.freezing_s.append(time.perf_counter() - asked)
        before, started = self.candidate.cpu_s(), time.perf_counter()
        try:
            yield
            after, wall_s = self.candidate.cpu_s(), time.perf_counter() - started
        finally:
            if frozen is not None:
                self.candidate.freeze(False)
        self.samples += 1
        self.frozen += frozen is True
        self.freezable |= frozen is not None
        self.trying &= frozen is True
        if before is not None and after is not None:
            self.cpu_s += after - before
            self.wall_s += wall_s

    def share(self) -> float | None:
        """CPU seconds the kernel's process used per second of the baseline's samples; None: not counted."""
        return self.cpu_s / self.wall_s if self.wall_s > 0 else None

    def problem(self, during: str) -> str | None:
        """Why the kernel's CPU time beside the baseline does not stand (over `BUSY_BESIDE`), or None;
        `during`: what the baseline did meanwhile, for the reason."""
        busy = self.share()
        if busy is None or busy <= BUSY_BESIDE:
            return None
        return (
            f"the kernel's process kept {100 * busy:.0f}% of a CPU core busy while {during} beside it: work "
            "left running between its calls slows the baseline"
        )

    def freezing_us(self) -> float | None:
        """The median time to freeze it, in microseconds (outside the baseline's timed window)."""
        return round(1e6 * float(np.median(self.freezing_s)), 1) if self.freezing_s else None

    def frozen_share(self) -> float | None:
        """The share of the baseline's samples timed with the kernel's processes frozen; None: cannot be."""
        return self.frozen / self.samples if self.freezable and self.samples else None


def time_alone(baseline: Remote, sides: Sides, outcome: Outcome) -> None:
    """The baseline timed again with the kernel's runner gone; a kernel beside which it ran far slower
    does not stand (`DISTURBED`)."""
    checks, trip, busy = {"baseline": Timed(sides.verify)}, RoundTrip(), DeviceBusy()
    policy = replace(
        sides.timing,
        min_time_s=min(0.5, sides.timing.min_time_s),
        max_time_s=min(2.0, sides.timing.max_time_s),
    )
    try:
        alone = time_rounds(
            {"baseline": _batch(baseline, "baseline", sides, checks, {}, trip, busy)},
            policy=policy,
            strata=len(sides.params),
            probe=round_probe(sides),
        )["baseline"]
    except LeftBusy as exc:  # the kernel's runner is gone: something it started is not
        outcome.fail(Status.REJECTED, f"while the baseline was timed alone: {exc}")
        return
    finally:
        # Nothing else should be on the device now: the drain's own noise, beside the kernel's `beside`.
        outcome.stats.setdefault("device_busy", {})["alone"] = busy.describe()
    outcome.stats["round_trip_us"] = {"alone": trip.describe()["baseline"]}
    beside = outcome.stats["baseline"]["median_ms"]
    outcome.stats["baseline_alone"] = asdict(alone)
    if beside > DISTURBED * alone.median_ms:
        outcome.fail(
            Status.REJECTED,
            f"the baseline took {beside:.3f} ms beside this kernel but "
            f"{alone.median_ms:.3f} ms alone: the kernel's process disturbed the device",
        )
