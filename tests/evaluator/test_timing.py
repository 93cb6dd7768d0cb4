"""The timing loop's statistics and the choice of timed reps to check, without a kernel."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import ANY

import numpy as np
import pytest
import torch

from evaluator import timing
from evaluator.harness import timed
from evaluator.harness.session import Outcome, Sides
from evaluator.harness.timed import RoundTrip, Timed
from evaluator.queries import QUERIES
from evaluator.timing import (
    CallLimitExceeded,
    TimingPolicy,
    TimingStats,
    _stderr,
    time_rotated,
    time_rounds,
    verified,
)


def test_the_standard_error_pools_the_spread_within_parameter_sets() -> None:
    # Two parameter sets, one costing 1 ms and one 2 ms, each with a little noise: the mix is fixed by
    # the rotation, so only the noise makes the median uncertain.
    samples = [1.0 + 0.001 * (i % 3) if i % 2 == 0 else 2.0 + 0.001 * (i % 3) for i in range(60)]
    assert _stderr(samples, strata=2) < 0.001
    assert _stderr(samples, strata=1) > 0.05  # read as one population, the two costs look like noise


def test_the_standard_error_of_the_median_is_not_inflated_by_a_few_outliers() -> None:
    samples = [1.0 + 0.001 * (i % 7) for i in range(100)]
    spiked = samples[:-3] + [50.0, 80.0, 120.0]  # three host hiccups
    assert _stderr(spiked) < 0.001  # the median barely moves; a standard deviation would say 14%


def test_a_second_call_over_ten_times_the_baselines_median_stops_the_timing() -> None:
    def slow_every(k: int) -> Callable[[int], None]:
        return lambda rep: time.sleep(0.02 if rep % k == k - 1 else 0.0005)

    policy = TimingPolicy(warmup_reps=1, warmup_s=0.0, min_reps=12, min_time_s=0.0, max_time_s=5.0)
    baseline = lambda rep: time.sleep(0.001)  # noqa: E731
    with pytest.raises(CallLimitExceeded, match="2 timed calls took longer than 10x the baseline"):
        time_rotated(
            {"baseline": baseline, "kernel": slow_every(3)}, device=torch.device("cpu"), policy=policy
        )
    # One slow call is forgiven (a hiccup); and the limit is the baseline's, not the kernel's own.
    stats = time_rotated(
        {"baseline": baseline, "kernel": slow_every(1000)}, device=torch.device("cpu"), policy=policy
    )
    assert stats["kernel"].n >= 12


def test_each_call_gets_its_rep_index_and_every_stratum_is_warmed_up() -> None:
    seen: dict[str, list[int]] = {"a": [], "b": []}
    policy = TimingPolicy(warmup_reps=1, warmup_s=0.0, min_reps=6, min_time_s=0.0, max_time_s=0.0)
    stats = time_rotated(
        {name: (lambda rep, name=name: seen[name].append(rep) or rep) for name in seen},
        device=torch.device("cpu"),
        policy=policy,
        strata=4,
    )
    assert seen["a"][:4] == [0, 1, 2, 3]  # warm-up: each of the 4 strata once
    assert seen["a"][4:] == seen["b"][4:] == list(range(stats["a"].n))  # then the same rep for both


def test_the_checked_reps_are_a_seeded_draw_of_the_asked_share() -> None:
    drawn = [rep for rep in range(10_000) if verified(42, 0.1, rep)]
    assert 800 < len(drawn) < 1200
    assert drawn == [rep for rep in range(10_000) if verified(42, 0.1, rep)]  # the same on both sides
    assert drawn != [rep for rep in range(10_000) if verified(43, 0.1, rep)]
    assert all(verified(42, 1.0, rep) for rep in range(100))


def _results(values: list[float]) -> list[dict[str, np.ndarray]]:
    return [{"revenue": np.array([v])} for v in values]


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ([1.0, 2.0, 1.0, 2.0], None),
        ([1.0, 2.0, 1.0, 2.5], "timed call 4 of 4 {'p': 1}: column 'revenue' differs"),
        ([1.0, 2.0, 2.0, 2.0], "timed call 3 of 4 {'p': 0}: column 'revenue' differs"),
    ],
)
def test_every_drawn_timed_call_is_checked_against_its_parameter_sets_answer(
    sf001: Path, values: list[float], problem: str | None
) -> None:
    timed = Timed({"seed": 1, "share": 1.0})
    timed.add(0, [0, 1], _results(values[:2]))  # a batch of two calls, then another
    timed.add(2, [0, 1], _results(values[2:]))
    answers = [{"revenue": np.array([1.0])}, {"revenue": np.array([2.0])}]
    found = timed.problem(QUERIES[6], sf001, [{"p": 0}, {"p": 1}], answers.__getitem__)
    assert (found is None) if problem is None else found.startswith(problem)


def test_equal_results_of_a_parameter_set_are_kept_once_and_every_differing_one(sf001: Path) -> None:
    timed = Timed({"seed": 1, "share": 1.0})
    values = [1.0, 2.0, 1.0, 2.0, 1.5, 2.0]  # call 4 differs from call 0 although both ran set 0
    timed.add(0, [0, 1, 0, 1, 0, 1], _results(values))
    assert sorted(rep for rep, _ in timed.kept.values()) == [0, 1, 4]
    answers = [{"revenue": np.array([1.0])}, {"revenue": np.array([2.0])}]
    found = timed.problem(QUERIES[6], sf001, [{"p": 0}, {"p": 1}], answers.__getitem__)
    assert found is not None and found.startswith("timed call 5 of 6")


def test_the_checked_calls_are_drawn_after_each_batch_and_the_last_is_always_checked(sf001: Path) -> None:
    timed = Timed({"seed": 3, "share": 0.1})
    for rep in range(0, 100, 10):
        timed.add(rep, [0] * 10, _results([1.0] * 9 + [7.0 if rep == 90 else 1.0]))
    drawn = {rep for rep in range(100) if verified(3, 0.1, rep)}
    assert {rep for rep, _ in timed.kept.values()} <= drawn  # equal results kept once
    answers = [{"revenue": np.array([1.0])}]
    assert timed.problem(QUERIES[6], sf001, [{"p": 0}], answers.__getitem__).startswith(
        "timed call 100 of 100"
    )


class ScriptedRemote:
    """A runner's handle whose timed answers take the seconds it is given, per command."""

    def __init__(self, seconds: dict[str, float]) -> None:
        self.seconds, self.sent = seconds, []

    def ask(self, command: dict, limit_s: float) -> tuple[dict, bytes]:
        self.sent.append(command["op"])
        return {}, b""

    def timed(self, command: dict, limit_s: float, reason: str | None = None) -> tuple[float, dict, bytes]:
        self.sent.append(command["op"])
        return self.seconds[command["op"]], {}, b""


def test_the_baselines_round_trip_is_taken_off_both_sides_and_the_kernels_never() -> None:
    sides = SimpleNamespace(runner_cores=None, query_timeout_s=60, device="cpu")
    trip = RoundTrip()
    baseline = ScriptedRemote({"ping": 0.0001, "batch": 0.0051})
    kernel = ScriptedRemote({"ping": 0.02, "batch": 0.0031})  # it slows its own ping to 20 ms
    for _ in range(3):
        seconds, _, _ = timed.timed_batch(baseline, "baseline", sides, trip, {"op": "batch"}, 60)
        assert seconds == pytest.approx(0.005)
        seconds, _, _ = timed.timed_batch(kernel, "kernel", sides, trip, {"op": "batch"}, 60)
        assert seconds == pytest.approx(0.003)
    assert baseline.sent == kernel.sent == ["arm", "ping", "batch"] * 3
    assert trip.describe() == {"baseline": 100.0, "kernel": 20000.0}


class Candidate:
    """The kernel's runner as timed.Beside sees it: what its freezer answers, and its CPU seconds, each
    read taken from `readings`; what happened to it, in order."""

    def __init__(self, readings: list[float | None], frozen: list[bool | None]) -> None:
        self.readings, self.frozen, self.seen = iter(readings), iter(frozen), []

    def freeze(self, frozen: bool) -> bool | None:
        self.seen.append("freeze" if frozen else "thaw")
        return next(self.frozen) if frozen else True

    def cpu_s(self) -> float | None:
        self.seen.append("cpu")
        return next(self.readings)


def test_the_kernel_is_frozen_and_its_cpu_time_counted_around_the_baselines_samples_only() -> None:
    kernel = Candidate([1.0, 1.004, 2.0, 2.5, 3.0, 3.0], frozen=[True, False])  # the second: not in time
    beside = timed.Beside(kernel)  # type: ignore[arg-type]
    sample = beside.watch(lambda rep, calls: time.sleep(0.01) or 1.0)
    assert sample(0, 1) == sample(1, 1) == sample(2, 1) == 1.0
    # Its CPU time is read once it is frozen: what it ran before the sample is not the baseline's. Once a
    # freeze ran past its wait, no more are tried.
    assert kernel.seen == ["freeze", "cpu", "cpu", "thaw"] * 2 + ["cpu", "cpu"]
    assert beside.cpu_s == pytest.approx(0.504) and 0.03 <= beside.wall_s < 0.5
    assert beside.share() == pytest.approx(0.504 / beside.wall_s)
    assert beside.frozen_share() == pytest.approx(1 / 3)
    assert beside.freezing_us() is not None and 0 <= beside.freezing_us() < 10_000  # the one frozen in time


def test_a_kernel_that_cannot_be_frozen_or_counted_is_left_as_it_is() -> None:
    kernel = Candidate([None, None], frozen=[None])  # a launcher that can do neither
    beside = timed.Beside(kernel)  # type: ignore[arg-type]
    beside.watch(lambda rep, calls: 1.0)(0, 1)
    assert kernel.seen == ["freeze", "cpu", "cpu"]  # never thawed: it was never frozen
    assert beside.share() is None and beside.frozen_share() is None and beside.freezing_us() is None


def test_a_frozen_kernel_is_thawed_when_the_baselines_sample_fails() -> None:
    kernel = Candidate([1.0], frozen=[True])

    def fails(rep: int, calls: int) -> float:
        raise RuntimeError("the baseline's runner is gone")

    with pytest.raises(RuntimeError):
        timed.Beside(kernel).watch(fails)(0, 1)  # type: ignore[arg-type]
    assert kernel.seen == ["freeze", "cpu", "thaw"]


def test_the_round_trip_taken_off_is_the_baselines_median_and_never_over_half_a_sample() -> None:
    trip = RoundTrip()
    assert trip.minus(0.004) == 0.004  # nothing measured yet
    for seconds in (0.0002, 0.0001, 0.0009):  # one slow ping does not move the median
        trip.add("baseline", seconds)
    assert trip.minus(0.004) == pytest.approx(0.0038)
    assert trip.minus(0.0002) == pytest.approx(0.0001)  # at most half
    trip.add("baseline", 0.0003)
    assert trip.median_s() == pytest.approx(0.00025)


class EchoingRemote:
    """The baseline's runner as `RoundTrip.echo` sees it: each echo takes the seconds given per side, told
    apart by the first column's name of the layout it holds for the side (`shape`)."""

    def __init__(self, seconds: dict[str, float]) -> None:
        self.seconds, self.sent, self.shapes = seconds, [], {}

    def ask(self, command: dict, limit_s: float) -> tuple[dict, bytes]:
        self.sent.append(command)
        self.shapes[command["side"]] = command["layout"]
        return {}, b""

    def timed(self, command: dict, limit_s: float) -> tuple[float, dict, bytes]:
        self.sent.append(command)
        return self.seconds[self.shapes[command["side"]][0][0][0]], {}, b""


def _layout(name: str, calls: int) -> list:
    return [[[name, "float64", 1, 8 * i]] for i in range(calls)]


def test_each_sides_echo_of_as_many_calls_is_taken_off_its_samples_the_kernels_at_most_the_baselines() -> (
    None
):
    trip = RoundTrip()
    trip.add("baseline", 0.00003)  # the round trip: all that comes off before any echo
    assert trip.minus(0.005, "kernel", 10) == pytest.approx(0.00497)
    calls = [[rep, rep % 5] for rep in range(10)]
    trip.keep("baseline", _layout("revenue", 10), calls)
    trip.keep("kernel", _layout("big", 10), calls)  # its results carry more bytes: a dearer echo
    remote = EchoingRemote({"revenue": 0.0001, "big": 0.0004})
    for _ in range(3):
        trip.echo(remote, 60)  # type: ignore[arg-type]
    # Each layout goes ahead once, untimed and without its offsets; each echo carries the batch's calls.
    assert [c["op"] for c in remote.sent] == ["shape", "echo", "shape", "echo"] + ["echo"] * 4
    assert remote.shapes == {
        "baseline": [[["revenue", "float64", 1]]] * 10,
        "kernel": [[["big", "float64", 1]]] * 10,
    }
    assert remote.sent[1] == {"op": "echo", "side": "baseline", "calls": calls}
    assert [c["side"] for c in remote.sent[4:]] == ["kernel", "baseline", "baseline", "kernel"]  # turns
    assert trip.minus(0.005, "baseline", 10) == pytest.approx(0.0049)
    assert trip.minus(0.005, "kernel", 10) == pytest.approx(0.0049)  # no more than the baseline's
    assert trip.minus(0.005, "kernel", 20) == pytest.approx(0.00497)  # no echo of 20 calls: the round trip
    assert trip.minus(0.00012, "baseline", 10) == pytest.approx(0.00006)  # at most half
    cheap = RoundTrip()
    cheap.keep("baseline", _layout("revenue", 10), calls)
    cheap.keep("kernel", _layout("small", 10), calls)  # fewer bytes (narrower types): its own, cheaper echo
    cheap.echo(EchoingRemote({"revenue": 0.0001, "small": 0.00005}), 60)  # type: ignore[arg-type]
    assert cheap.minus(0.005, "kernel", 10) == pytest.approx(0.00495)
    assert cheap.describe() == {"echo": {"baseline": 100.0, "kernel": 50.0}}


def test_a_sample_holds_several_calls_of_every_parameter_set_when_calls_are_short() -> None:
    policy = TimingPolicy(batch_ms=5.0)
    assert policy.calls_per_sample(3.0, strata=5) == 1  # over half the batch: one call a sample
    assert policy.calls_per_sample(0.5, strata=5) == 10
    assert policy.calls_per_sample(0.5, strata=7) == 7
    assert policy.calls_per_sample(0.001, strata=5) == 60  # at most max_calls
    assert TimingPolicy().calls_per_sample(0.5, strata=5) == 1  # in-process timing: one call


def test_on_a_gpu_a_call_of_a_millisecond_or_more_is_a_sample_by_itself() -> None:
    # Batched calls share one L2 flush (before the batch, outside the window); calls long enough for the
    # channel to be a small share go one a sample, each after its own flush, as the protocol says.
    policy = TimingPolicy.for_device("cuda")
    assert policy.calls_per_sample(2.1, strata=7) == 1  # the compiled Q1 plan at SF10 on an H100
    assert policy.calls_per_sample(1.0, strata=7) == 1
    assert policy.calls_per_sample(0.99, strata=7) == 7
    assert policy.calls_per_sample(0.5, strata=5) == 10
    assert TimingPolicy.for_device("cpu").calls_per_sample(2.1, strata=7) == 1


def test_the_loop_hands_each_sample_its_first_rep_and_call_count() -> None:
    seen: list[tuple[int, int]] = []
    policy = TimingPolicy(
        warmup_reps=1, warmup_s=0.0, min_reps=4, min_time_s=0.0, max_time_s=0.0, batch_ms=5.0
    )

    def run(rep: int, calls: int) -> float:
        seen.append((rep, calls))
        return 0.5 + 0.001 * (rep % 3)

    stats = time_rounds({"a": run}, policy=policy, strata=2)
    assert seen[:2] == [(0, 1), (1, 1)]  # warm-up: one call each, every stratum
    assert seen[2:] == [(10 * i, 10) for i in range(stats["a"].n)] and stats["a"].calls == 10


def test_the_paired_speedup_is_the_median_of_each_rounds_ratio() -> None:
    """Each round's two samples taken together: here the rounds' ratios are 3, 2 and 1.5 in turn (the
    middle one the median), while the medians' ratio mixes samples of different rounds."""
    policy = TimingPolicy(warmup_reps=1, warmup_s=0.0, min_reps=30, min_time_s=0.0, max_time_s=0.0)
    baseline_ms, kernel_ms = [3.0, 4.0, 6.0], [1.0, 2.0, 4.0]

    def side(values: list[float]) -> Callable[[int, int], float]:
        return lambda rep, calls: values[rep % 3] * (1 + 1e-4 * (rep % 7))

    stats = time_rounds({"baseline": side(baseline_ms), "kernel": side(kernel_ms)}, policy=policy)
    assert stats["baseline"].paired_speedup is None  # the baseline's own ratio means nothing
    assert stats["kernel"].paired_speedup == pytest.approx(2.0, rel=1e-3)
    assert stats["baseline"].median_ms / stats["kernel"].median_ms == pytest.approx(2.0, rel=1e-3)
    ratios = sorted(b / k for b, k in zip(baseline_ms, kernel_ms, strict=True))
    assert ratios == [1.5, 2.0, 3.0]
    assert stats["kernel"].paired_stderr_pct is not None and stats["kernel"].paired_stderr_pct > 0


class _SlowSpell:
    """A fake host for the timing loop: its probe and every call of a round run twice as long while
    the round falls in `slow` (rounds counted by probes taken)."""

    def __init__(self, slow: range, probe_s: float = 25e-6) -> None:
        self.slow, self.probe_s, self.round = slow, probe_s, -1

    def probe(self) -> float:
        self.round += 1
        return self.probe_s * (2.0 if self.round in self.slow else 1.0)

    def timed(self, fn: Callable[[], object], device: torch.device, flush: object) -> tuple[float, object]:
        base = 1.0 + 0.001 * (self.round % 5)  # a little spread, so the standard error is not zero
        return base * (2.0 if self.round in self.slow else 1.0), fn()


def _spell_policy(min_reps: int) -> TimingPolicy:
    return TimingPolicy(warmup_reps=1, warmup_s=0.0, min_reps=min_reps, min_time_s=0.0, max_time_s=60.0)


def _time_on(
    monkeypatch: pytest.MonkeyPatch, host: _SlowSpell, policy: TimingPolicy, *sides: str, strata: int = 1
) -> dict[str, TimingStats]:
    """`time_rotated` on a fake host: its probe, and its pace for every call of `sides` (the baseline)."""
    monkeypatch.setattr(timing, "host_probe", host.probe)
    monkeypatch.setattr(timing, "_timed", host.timed)
    calls = {side: (lambda rep: rep) for side in sides or ("baseline",)}
    return time_rotated(calls, device=torch.device("cpu"), policy=policy, strata=strata)


def test_rounds_timed_while_the_host_ran_slow_are_set_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    host = _SlowSpell(slow=range(10, 30))
    stats = _time_on(monkeypatch, host, _spell_policy(60), "baseline", "kernel", strata=5)
    for s in stats.values():
        assert s.set_aside == 20  # the spell, and only it
        assert s.n == host.round + 1 - 20 >= 60  # the stopping rule counted steady rounds only
        assert s.median_ms == pytest.approx(1.002) and s.min_ms == 1.0
        assert s.aside_median_ms == pytest.approx(2.004)  # and the rounds set aside did run slower
        assert s.host_probe_us == pytest.approx(25.0)
    # Without the probe's verdict a third of the first 60 rounds would have been twice as slow.


def test_a_host_slow_throughout_sets_nothing_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    stats = _time_on(monkeypatch, _SlowSpell(slow=range(0, 10**6)), _spell_policy(30))
    assert stats["baseline"].set_aside == 0 and stats["baseline"].aside_median_ms is None
    assert stats["baseline"].median_ms == pytest.approx(2.004)  # the slow host's median, said plainly:
    assert stats["baseline"].host_probe_us == pytest.approx(50.0)  # its probe is twice the usual 25 µs


def test_a_slow_spell_at_the_start_is_set_aside_once_the_usual_speed_is_the_median(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stats = _time_on(monkeypatch, _SlowSpell(slow=range(0, 40)), _spell_policy(100), strata=5)
    assert stats["baseline"].set_aside == 40
    assert stats["baseline"].n >= 100
    assert stats["baseline"].median_ms == pytest.approx(1.002)
    assert stats["baseline"].aside_median_ms == pytest.approx(2.004)


def test_a_spell_over_most_rounds_so_far_keeps_the_timing_going_until_it_is_the_minority(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # At 50 rounds the spell is the median: every round counts, and two speeds mixed are far from
    # settled. Only once the usual speed is the median again are the spell's rounds set aside.
    stats = _time_on(monkeypatch, _SlowSpell(slow=range(20, 80)), _spell_policy(50), strata=5)
    assert stats["baseline"].set_aside == 60
    assert stats["baseline"].n >= 60
    assert stats["baseline"].median_ms == pytest.approx(1.002)


def test_the_harnesss_faster_probe_sets_no_round_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    # The harness's usual is 0.2 s of probes in a row; a round's is one probe after the round's move.
    # On a lent H100 the first sat at 32-48 us where the rounds' own read 35-70 us at their 10th
    # percentile, and judged against it most rounds were set aside though the rest ran no slower.
    # It goes to the report; a session judges its rounds by its own probes.
    host = _SlowSpell(slow=range(0, 10**6))
    policy = replace(_spell_policy(30), host_usual_s=25e-6, host_wait_s=30.0)
    started = time.perf_counter()
    stats = _time_on(monkeypatch, host, policy)
    assert time.perf_counter() - started < 5.0  # not held until host_wait_s
    assert stats["baseline"].set_aside == 0 and stats["baseline"].n == host.round + 1
    assert stats["baseline"].host_probe_us == pytest.approx(50.0)  # the session's own usual, reported


class _SpreadProbes(_SlowSpell):
    """Lone probes spread as a lent H100's were (docs/benchmarks.md, session 22): from 1x to 1.45x
    the fastest, the calls no slower for it."""

    def probe(self) -> float:
        self.round += 1
        return self.probe_s * (1.0 + 0.05 * (self.round % 10))


def test_probes_spread_as_on_a_lent_h100_set_no_round_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    stats = _time_on(monkeypatch, _SpreadProbes(slow=range(0)), _spell_policy(60), strata=5)
    assert stats["baseline"].set_aside == 0  # against their 10th percentile, 1.05x, 30% would be
    assert stats["baseline"].n >= 60


def test_the_round_probe_is_taken_where_it_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness passes a probe that runs on the runners' core: the set-aside rounds are that probe's."""
    monkeypatch.setattr(timing, "host_probe", lambda: pytest.fail("the default probe ran"))
    host = _SlowSpell(slow=range(10, 30))
    policy = replace(_spell_policy(60), batch_ms=0.0)
    stats = time_rounds(
        {"baseline": lambda rep, calls: 1.0 + 0.001 * (rep % 5)}, policy=policy, probe=host.probe
    )
    assert stats["baseline"].set_aside == 20
    # Here the probe's spell did not slow the calls, and the rounds set aside say so.
    assert stats["baseline"].aside_median_ms == pytest.approx(stats["baseline"].median_ms, rel=0.002)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux's affinity calls")
def test_the_harness_probes_the_host_on_the_runners_core(monkeypatch: pytest.MonkeyPatch) -> None:
    before = os.sched_getaffinity(0)
    core = max(before)
    seen: list[set[int]] = []
    monkeypatch.setattr(timing, "host_probe", lambda: seen.append(os.sched_getaffinity(0)) or 25e-6)
    probe = timed.round_probe(SimpleNamespace(runner_cores=frozenset({core})))
    assert probe is not None and probe() == 25e-6
    assert seen == [{core}] and os.sched_getaffinity(0) == before  # there for the probe, then back
    assert timed.round_probe(SimpleNamespace(runner_cores=None)) is None  # no split: where the loop runs


def test_the_real_host_probe_times_its_python() -> None:
    probes = [timing.host_probe() for _ in range(50)]
    assert all(0 < p < 0.05 for p in probes)
    assert timing._steady_rounds(probes + [10 * max(probes)], TimingPolicy())[-1] < 50  # a 10x round is out
    assert 0 < timing.host_usual(0.01) < 0.05


def test_the_standard_error_of_a_subset_keeps_each_samples_parameter_set() -> None:
    # Rep r costs 1 ms on even parameter sets and 2 ms on odd ones; every third rep is left out, so the
    # samples' positions no longer tell their sets apart, their rep indices do.
    reps = [r for r in range(90) if r % 3]
    samples = [(1.0 if r % 2 == 0 else 2.0) + 0.001 * (r % 7) for r in reps]
    assert _stderr(samples, strata=2, reps=reps) < 0.001
    assert _stderr(samples, strata=2) > 0.01  # grouped by position, the two costs mix


def test_the_rounds_set_aside_are_checked_like_the_rest(monkeypatch: pytest.MonkeyPatch, sf001: Path) -> None:
    # A set-aside round was still timed, and its results are the kernel's: every drawn call is checked.
    host = _SlowSpell(slow=range(10, 30))
    monkeypatch.setattr(timing, "host_probe", host.probe)
    timed = Timed({"seed": 7, "share": 1.0})

    def kernel(rep: int, calls: int) -> float:
        timed.add(
            rep, [(rep + i) % 2 for i in range(calls)], _results([1.0 + (rep + i) % 2 for i in range(calls)])
        )
        return 1.0 + 0.001 * (host.round % 5)

    stats = time_rounds({"kernel": kernel}, policy=_spell_policy(60), strata=2)
    assert stats["kernel"].set_aside == 20
    assert timed.reps == stats["kernel"].n + 20  # every round, set aside or not
    answers = [{"revenue": np.array([1.0])}, {"revenue": np.array([2.0])}]
    assert timed.problem(QUERIES[6], sf001, [{"p": 0}, {"p": 1}], answers.__getitem__) is None


class DrainingRemote:
    """A runner's handle for `timed.time_both` on a GPU: the baseline's `arm` answers with the device's
    waits it is given (its runner's `drain`, evaluator/runner/commands.py), every batch at once with
    empty results; the kernel's runner can be frozen and uses no CPU."""

    def __init__(self, waits: list[dict] | None = None, call_s: float = 0.001, trip_s: float = 0.001) -> None:
        self.waits, self.sent, self.stopped = iter(waits or []), [], False
        self.call_s, self.trip_s = call_s, trip_s  # a timed call's seconds; a ping's or an echo's

    def ask(self, command: dict, limit_s: float, reason: str | None = None) -> tuple[dict, bytes]:
        self.sent.append(command)
        return (next(self.waits) if command.get("drain") else {}), b""

    def timed(self, command: dict, limit_s: float, reason: str | None = None) -> tuple[float, dict, bytes]:
        self.sent.append(command)
        calls = command.get("calls", [])
        seconds = self.call_s * len(calls) if command["op"] == "batch" else self.trip_s
        return seconds, {"layout": [[] for _ in calls]}, b""

    def freeze(self, frozen: bool) -> bool:
        return True

    def cpu_s(self) -> float:
        return 0.0

    def stop(self) -> None:
        self.stopped = True


def _time_both(
    device: str,
    waits: list[dict],
    policy: TimingPolicy | None = None,
    call_s: float = 0.001,
    trip_s: float = 0.001,
) -> tuple[Outcome, DrainingRemote, DrainingRemote]:
    sides = Sides(
        query=QUERIES[6], folders=[], device=device, params=[{}], baseline_mode="compiled",
        timing=policy or TimingPolicy(warmup_s=0.0, min_reps=12, min_time_s=0.0, max_time_s=5.0),
        query_timeout_s=60, compile_limit_s=60, verify={"seed": 1, "share": 0.0},
    )  # fmt: skip
    baseline, kernel = DrainingRemote(waits, call_s, trip_s), DrainingRemote(call_s=call_s, trip_s=trip_s)
    outcome = Outcome()
    checks = {"baseline": Timed(sides.verify), "kernel": Timed(sides.verify)}
    timed.time_both(baseline, kernel, sides, checks, RoundTrip(), outcome)  # type: ignore[arg-type]
    return outcome, baseline, kernel


def test_a_kernel_that_leaves_the_device_busy_after_answering_is_rejected() -> None:
    """Before each of its batches the baseline's runner waits for the device to run nothing else: a kernel
    whose work was still running there, over 1 ms after it answered, before most of them is rejected."""
    left = [{"busy_s": 0.004, "probes": 3, "idle": True}] * 100
    outcome, baseline, kernel = _time_both("cuda", left)
    assert outcome.status == "rejected" and "still busy with the kernel's work" in outcome.reason
    beside = outcome.stats["device_busy"]["beside"]
    assert beside["samples"] == beside["busy"] == beside["over_limit"] >= 12 and beside["median_ms"] == 4.0
    arms = [c for c in baseline.sent if c["op"] == "arm"]
    assert arms and all(c.get("drain") == 10.0 for c in arms)  # its limit: 10 s, under half the query's 60
    assert not any(c.get("drain") for c in kernel.sent)  # the kernel's runner's word would mean nothing


def test_a_device_busy_now_and_then_is_drained_and_not_held_against_the_kernel() -> None:
    waits = (
        [{"busy_s": 0.0, "probes": 1, "idle": True}] * 2 + [{"busy_s": 0.003, "probes": 2, "idle": True}]
    ) * 50
    outcome, _, _ = _time_both("cuda", waits)
    assert outcome.status == "passed", outcome.reason
    beside = outcome.stats["device_busy"]["beside"]
    assert 0 < beside["over_limit"] < beside["samples"] / 2 and beside["max_ms"] == 3.0


def test_a_device_that_never_drains_ends_the_kernels_timing() -> None:
    waits = [{"busy_s": 0.0, "probes": 1, "idle": True}] * 3 + [
        {"busy_s": 10.2, "probes": 900, "idle": False}
    ]
    waits += [{"busy_s": 0.0, "probes": 1, "idle": True}] * 100
    outcome, baseline, kernel = _time_both("cuda", waits)
    assert (
        outcome.status == "rejected"
        and "still busy 10.2 s after the kernel's runner answered" in outcome.reason
    )
    assert kernel.stopped and outcome.stats["device_busy"]["beside"]["max_ms"] == 10200.0
    # The baseline is then timed alone (no drain), echoing only its own batches.
    alone = next(i for i, c in enumerate(baseline.sent) if c["op"] == "arm" and "drain" not in c)
    assert {c.get("side") for c in baseline.sent[alone:] if c["op"] == "echo"} == {"baseline"}


def test_a_cpu_evaluation_drains_nothing() -> None:
    outcome, baseline, _ = _time_both("cpu", [])
    assert outcome.status == "passed" and "device_busy" not in outcome.stats
    assert not any(c.get("drain") or c.get("prime") for c in baseline.sent)


def test_on_a_gpu_both_runners_make_one_untimed_call_before_each_timed_batch() -> None:
    """`prime` (0.6.15): every `arm` of either side carries it on a GPU, so no sample's first call pays
    for the other runner's turn (the runner primes after the baseline's drain: tests/evaluator/
    test_runner.py)."""
    idle = [{"busy_s": 0.0, "probes": 1, "idle": True}] * 400
    outcome, baseline, kernel = _time_both("cuda", idle)
    assert outcome.status == "passed", outcome.reason
    for remote in (baseline, kernel):
        ops = [c["op"] for c in remote.sent]
        arms = [c for c in remote.sent if c["op"] == "arm"]
        assert ops.count("batch") == len(arms) > 12 and all(c.get("prime") is True for c in arms)


def test_on_a_gpu_each_call_of_a_millisecond_follows_its_own_flush_and_shorter_calls_share_one() -> None:
    """0.6.16: `arm` (the L2 flush, outside the window) comes before every timed batch; a call of 1 ms
    or more is a batch by itself, so it is flushed before each call, as the protocol says."""
    policy = replace(
        TimingPolicy.for_device("cuda"), warmup_s=0.0, min_reps=12, min_time_s=0.0, max_time_s=5.0
    )
    idle = [{"busy_s": 0.0, "probes": 1, "idle": True}] * 400
    for call_s, calls in ((0.0011, 1), (0.00055, 10)):  # a 20 us round trip comes off: 1.08, 0.53 ms
        outcome, baseline, kernel = _time_both("cuda", idle, policy, call_s, trip_s=0.00002)
        assert outcome.status == "passed", outcome.reason
        for remote in (baseline, kernel):
            timed_batches = [c for c in remote.sent if c["op"] == "batch"][policy.warmup_reps :]
            assert timed_batches and {len(c["calls"]) for c in timed_batches} == {calls}
            ops = " ".join(c["op"] for c in remote.sent)
            assert ops.count("batch") == ops.count("arm")  # every batch armed, so flushed, first


def test_the_baselines_runner_echoes_both_sides_last_batches_between_arm_and_ping() -> None:
    outcome, baseline, kernel = _time_both("cpu", [])
    ops = [c["op"] for c in baseline.sent]
    # Nothing to echo before its first batch, then its own last batch (its warm-up runs first), and once
    # the kernel has answered one, the kernel's too, each time between `arm` and `ping`.
    assert ops[:9] == ["arm", "ping", "batch", "arm", "shape", "echo", "ping", "batch", "arm"]
    assert " ".join(ops).count("arm echo echo ping batch") > 10  # the layouts sent once, as they stay
    assert [c.get("calls") for c in baseline.sent[-4:-2]] == [[[ANY, 0]], [[ANY, 0]]]  # the last batches'
    assert "echo" not in [c["op"] for c in kernel.sent]  # the kernel's runner's word would mean nothing
