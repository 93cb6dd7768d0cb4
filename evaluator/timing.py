"""Timing: candidates interleaved A/B/A/B, samples until the median is stable (docs/evaluation.md).

`time_rounds` is the loop and its statistics, whoever holds the clock: the harness around a command to
a runner (evaluator/harness/timed.py), or this process around a call of trusted code (`time_rotated`).
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from evaluator.report import TimingStats

if TYPE_CHECKING:  # the harness times over a channel and never imports torch (its worker's memory)
    import torch

L2_FLUSH_BYTES = 256 * 1024 * 1024  # >= 2x the H100/H200 L2 (50/60 MB)
HOST_PROBE_STEPS = 1000  # about 25 µs of pure Python on the H200 host's CPU at its usual speed


@dataclass(frozen=True)
class TimingPolicy:
    warmup_reps: int = 3
    warmup_s: float = 0.1
    min_reps: int = 30
    min_time_s: float = 1.0
    max_time_s: float = 15.0  # per query, both candidates together
    target_stderr: float = 0.005  # standard error of the median, relative
    probe_reps: int = 5  # baseline "best": timed reps of eager and of compiled before choosing
    pool: int = 3  # pre-made clones of the input tables, rotated round-robin between reps
    # A timed call of a candidate over this many times the baseline's median so far is over the limit;
    # the second such call stops the timing (one is forgiven: a host hiccup, not the kernel).
    call_limit: float = 10.0
    # A round whose host probe took longer than this many times the median of the session's round
    # probes was timed on a slowed host and is set aside (`_steady_rounds`). `host_usual_s`, the
    # harness's own probes on the runner's cores before the runner started (`host_usual`), only goes
    # to the report: a session slow from start to end is marked, not judged by it (`mark_slow_host`).
    host_slack: float = 1.25
    host_usual_s: float | None = None
    # After this many seconds of timing, all rounds together meeting the stopping rule stop it too: a
    # slow spell can outlast a query's timing (seen on the H200 host), and 22 queries must fit in 10
    # minutes. The statistics then count the steady rounds there are, or every round if under 5.
    host_wait_s: float = 6.0
    # A timed sample's calls last about this long (0: one call a sample). Timed from outside the runner,
    # each sample pays one command round trip and one copy of the results: several short calls a sample
    # share that cost (docs/sandbox.md, "The cost of timing from outside").
    batch_ms: float = 0.0
    max_calls: int = 60
    # A call at least this long is one sample by itself, the L2 cache flushed before it (`arm`, outside
    # the window) as the protocol says. A batch's later calls find the previous call's lines in the
    # cache (the compiled Q1 plan ran 4-5% faster so on an H100, docs/benchmarks.md, session 30), and a
    # flush inside a batch would run in the kernel's process, inside the window, where it could be
    # skipped while the channel's share taken off still counted it. So only calls short enough for the
    # channel to be a large share of a one-call sample are batched (0.6.16). The channel is taken off
    # each sample (evaluator/harness/timed.py, `RoundTrip`): 150-260 us for a one-call sample of Q01 or
    # Q03 on a lent H100, 7-12% of the call (docs/benchmarks.md, session 31).
    single_ms: float = 0.0

    @classmethod
    def for_device(cls, device_type: str, max_time_s: float | None = None) -> TimingPolicy:
        """The protocol's policy on a GPU; on a CPU a short one: those timings only show a kernel runs."""
        if device_type == "cuda":
            # Half a second of warm-up per candidate, not the minimum 0.1 s: the GPU idles between queries
            # (DuckDB, start-up), and its clocks come back up over the first calls.
            policy = cls(warmup_s=0.5, batch_ms=5.0, single_ms=1.0)
            return policy if max_time_s is None else replace(policy, max_time_s=max_time_s,
                                                             min_time_s=min(1.0, max_time_s))  # fmt: skip
        budget = 2.0 if max_time_s is None else max_time_s
        return cls(min_time_s=min(0.2, budget), max_time_s=budget)

    def calls_per_sample(self, call_ms: float, strata: int) -> int:
        """Calls in one timed sample: one, or where a call is shorter than `single_ms` and half of
        `batch_ms`, a multiple of `strata` that lasts about `batch_ms` (at most `max_calls`)."""
        if self.batch_ms <= 0 or call_ms <= 0 or 2 * call_ms > self.batch_ms or 0 < self.single_ms <= call_ms:
            return 1
        wanted = min(self.max_calls, math.ceil(self.batch_ms / call_ms))
        return max(strata, strata * round(wanted / strata))

    def for_probe(self) -> TimingPolicy:
        """The baseline "best" probe's: `probe_reps` timed reps of each, no time floor or budget."""
        return replace(self, min_reps=self.probe_reps, min_time_s=0.0, max_time_s=0.0)


_now = time.perf_counter
BASELINE = "baseline"  # the candidate whose median sets the per-call limit


class CallLimitExceeded(Exception):
    """A candidate's timed calls ran past the per-call limit (TimingPolicy.call_limit)."""


def _synchronizer(device: torch.device) -> Callable[[], object]:
    """torch's synchronize for a CUDA device, looked up before the clock starts; nothing on a CPU."""
    if device.type != "cuda":
        return lambda: None
    import torch

    return partial(torch.cuda.synchronize, device)


def time_interleaved(
    candidates: Mapping[str, Callable[[], object]],
    *,
    device: torch.device,
    policy: TimingPolicy = TimingPolicy(),
) -> dict[str, TimingStats]:
    """Time each candidate A/B/A/B in one session until the medians are stable; stats per name."""
    return time_rotated({name: _any_rep(fn) for name, fn in candidates.items()}, device=device, policy=policy)


def _any_rep(fn: Callable[[], object]) -> Callable[[int], object]:
    return lambda _rep: fn()


def time_rotated(
    candidates: Mapping[str, Callable[[int], object]],
    *,
    device: torch.device,
    policy: TimingPolicy = TimingPolicy(),
    strata: int = 1,
) -> dict[str, TimingStats]:
    """Time trusted code in this process (the TorchPlans: bench, warm, the baseline's mode probe), each
    call by itself: sync -> call -> sync on the host clock, L2 flushed before. Each call gets the rep's
    index to pick its inputs. Kernels are never timed here: the harness times them from outside their
    process (evaluator/harness/timed.py), through `time_rounds` as well."""
    import torch

    flush = (
        torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device) if device.type == "cuda" else None
    )

    def one_call(fn: Callable[[int], object]) -> Callable[[int, int], float]:
        return lambda rep, calls: _timed(partial(fn, rep), device, flush)[0]

    return time_rounds({name: one_call(fn) for name, fn in candidates.items()}, policy=policy, strata=strata)


def time_rounds(
    candidates: Mapping[str, Callable[[int, int], float]],
    *,
    policy: TimingPolicy = TimingPolicy(),
    strata: int = 1,
    probe: Callable[[], float] | None = None,
) -> dict[str, TimingStats]:
    """Time each candidate A/B/A/B in one session. `candidates[name](rep, calls)` runs `calls` calls,
    reps `rep` .. `rep + calls - 1`, and returns the milliseconds per call as the caller's clock saw them.

    Every candidate gets the same reps in a round, so all see the same inputs. Rep `i` belongs to
    stratum `i % strata` (the parameter set it rotates through); the standard error pools the spread
    within strata, since round-robin fixes each stratum's share. Warm-up runs single calls and visits
    every stratum. A sample is one round's calls of a candidate: one call, or (`policy.batch_ms`) as
    many as last about that long, a multiple of `strata` so that every sample holds the same mix.

    Before each round a host probe times a fixed piece of Python (`probe`, by default `host_probe` on
    this thread's cores; the harness's runs it on the runners' core); the rounds whose probe ran well
    over the session's median probe are set aside (`_steady_rounds`): the stopping rule and the
    statistics count the others, and each candidate's `set_aside` says how many there were.
    """
    probe = probe or host_probe
    warm_ms: list[float] = []
    for run in candidates.values():
        reps = 0
        warm_start = _now()
        while reps < max(policy.warmup_reps, strata) or _now() - warm_start < policy.warmup_s:
            warm_ms.append(run(reps, 1))
            reps += 1
    calls = policy.calls_per_sample(min(warm_ms) if warm_ms else 0.0, strata)
    if calls > 1:
        strata = 1  # every sample holds each parameter set equally often
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    probes: list[float] = []  # per round: the host probe taken just before it
    over_limit: dict[str, int] = {name: 0 for name in candidates}
    started = _now()
    rounds = next_check = 0
    while True:
        probes.append(probe())
        for name, run in candidates.items():
            samples[name].append(run(rounds * calls, calls))
            _check_call_limit(name, samples, over_limit, policy.call_limit)
        rounds += 1
        elapsed = _now() - started
        if elapsed >= policy.max_time_s and rounds >= 5:
            break
        if rounds >= max(policy.min_reps, next_check) and elapsed >= policy.min_time_s:
            # The check sorts and groups every round so far: at most every 5% more rounds, not each one.
            next_check = rounds + rounds // 20
            steady = _steady_rounds(probes, policy)
            if len(steady) >= policy.min_reps and _settled(samples, steady, strata, policy):
                break
            if elapsed >= policy.host_wait_s and _settled(samples, list(range(rounds)), strata, policy):
                break
    steady = _steady_rounds(probes, policy)
    if len(steady) < 5:  # too few to stand alone: every round counts, and `set_aside` says none was
        steady = list(range(rounds))
    aside = sorted(set(range(rounds)) - set(steady))
    usual_us = 1e6 * _usual(probes)  # this session's own: beside the harness's, it shows a slow session
    return {
        name: _paired(
            replace(
                _stats([s[i] for i in steady], strata, steady),
                set_aside=len(aside),
                aside_median_ms=statistics.median(s[i] for i in aside) if aside else None,
                host_probe_us=usual_us,
                calls=calls,
            ),
            samples,
            name,
            steady,
            strata,
        )
        for name, s in samples.items()
    }


def _paired(
    stats: TimingStats, samples: dict[str, list[float]], name: str, rounds: list[int], strata: int
) -> TimingStats:
    """`stats` with, beside the baseline, the median of its per-round ratios to `name` and that
    median's standard error (TimingStats.paired_speedup)."""
    if name == BASELINE or BASELINE not in samples:
        return stats
    ratios = [samples[BASELINE][i] / samples[name][i] for i in rounds if samples[name][i] > 0]
    if len(ratios) != len(rounds) or not ratios:
        return stats
    return replace(
        stats,
        paired_speedup=statistics.median(ratios),
        paired_stderr_pct=100 * _stderr(ratios, strata, rounds),
    )


def _settled(samples: dict[str, list[float]], rounds: list[int], strata: int, policy: TimingPolicy) -> bool:
    """Whether every candidate's median over `rounds` has its standard error under the target."""
    return all(
        _stderr([s[i] for i in rounds], strata, rounds) <= policy.target_stderr for s in samples.values()
    )


def host_probe() -> float:
    """Seconds a fixed piece of pure Python takes now: the speed of the host's CPU at this moment.

    On the lent H200 hosts the same Python ran at half speed for seconds at a time, on any core, and
    the host's share of a sub-millisecond call (launches, synchronize) grew with it: 0.68 ms became
    0.83 ms for the Triton Q14 example (docs/benchmarks.md, session 6).
    """
    started = _now()
    total = 0
    for i in range(HOST_PROBE_STEPS):
        total += i & 7
    return _now() - started


def _usual(probes: list[float]) -> float:
    """The usual of a series of probes: its 10th percentile (the host at its own speed, not one lucky
    run)."""
    return sorted(probes)[len(probes) // 10]


def host_usual(seconds: float = 0.2) -> float:
    """The usual probe over `seconds` of probes one after another, on this thread's cores: the harness
    measures it on the runner's cores before each runner; the fastest so far goes to the report
    (`stats.host_usual_us`) and marks a session slow from start to end (`mark_slow_host`)."""
    probes: list[float] = []
    started = _now()
    while _now() - started < seconds or len(probes) < 10:
        probes.append(host_probe())
    return _usual(probes)


def _steady_rounds(probes: list[float], policy: TimingPolicy) -> list[int]:
    """The rounds whose probe, taken before any candidate of the round ran, was within `host_slack`
    times the median of the session's probes: the host ran at its usual speed. Judged against the
    whole session's probes, so rounds timed before a slow spell ended are judged like the rest.

    The median, not a fast probe, is the bar: a round's probe is one probe after the round's move, and
    on a lent H100 those read up to 1.35x a fast probe at their median (docs/benchmarks.md, sessions 21
    and 22). Against the fastest probes most rounds were set aside, and the few left gave speedups
    that moved 1.6-8.1% between runs where the rounds set aside moved 0.6-1.3%. A spell that slows most
    of a session mixes two speeds, whose spread keeps the stopping rule waiting until the usual speed
    is the median again."""
    limit = policy.host_slack * statistics.median(probes)
    return [i for i, probe in enumerate(probes) if probe <= limit]


def _check_call_limit(
    name: str, samples: dict[str, list[float]], over: dict[str, int], factor: float
) -> None:
    if name == BASELINE or not samples.get(BASELINE):
        return
    limit_ms = factor * statistics.median(samples[BASELINE])
    if samples[name][-1] > limit_ms:
        over[name] += 1
        if over[name] >= 2:
            raise CallLimitExceeded(
                f"{over[name]} timed calls took longer than {factor:g}x the baseline's median "
                f"({samples[name][-1]:.3f} ms against a limit of {limit_ms:.3f} ms)"
            )


def verified(seed: int, share: float, rep: int) -> bool:
    """Whether timed rep `rep` is one whose result is checked: a seeded draw, the same on both sides."""
    return share >= 1.0 or random.Random(f"{seed}:{rep}").random() < share


def _stderr(samples: list[float], strata: int = 1, reps: list[int] | None = None) -> float:
    """Relative standard error of the median: sqrt(pi/2) * spread / sqrt(n), the spread being the
    interquartile range / 1.349 (the standard deviation of a normal distribution with that IQR).

    The IQR, not the standard deviation: GPU timings have a narrow core and a long tail (a host hiccup,
    a clock step), and the tail moves the median little but the standard deviation a lot. With strata
    the spread is pooled within them: the parameter sets' different costs are a fixed mix, not noise.
    `reps[j]` is sample j's rep index, which fixes its stratum (default: sample j is rep j).
    """
    median = statistics.median(samples)
    n = len(samples)
    if n < 4 or median <= 0:
        return math.inf
    if strata > 1:
        reps = list(range(n)) if reps is None else reps
        groups = [[v for v, r in zip(samples, reps, strict=True) if r % strata == k] for k in range(strata)]
    else:
        groups = [samples]
    if any(len(g) < 4 for g in groups):
        groups = [samples]
    spread = math.sqrt(sum(len(g) * _iqr(g) ** 2 for g in groups) / sum(len(g) for g in groups)) / 1.349
    return math.sqrt(math.pi / 2) * spread / math.sqrt(n) / median


def _iqr(samples: list[float]) -> float:
    q1, _, q3 = statistics.quantiles(samples, n=4)
    return q3 - q1


def _stats(samples: list[float], strata: int = 1, reps: list[int] | None = None) -> TimingStats:
    q1, _, q3 = statistics.quantiles(samples, n=4) if len(samples) >= 2 else (samples[0],) * 3
    return TimingStats(
        median_ms=statistics.median(samples),
        min_ms=min(samples),
        iqr_ms=q3 - q1,
        n=len(samples),
        stderr_pct=100 * _stderr(samples, strata, reps),
    )


def _timed(
    fn: Callable[[], object], device: torch.device, flush: torch.Tensor | None
) -> tuple[float, object]:
    sync = _synchronizer(device)
    if flush is not None:
        flush.fill_(0)  # evict L2 so no call is served from the previous call's cache
    sync()
    t0 = _now()
    result = fn()
    sync()
    return (_now() - t0) * 1e3, result
