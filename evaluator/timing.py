"""Timing: host clock around sync -> call -> sync, candidates interleaved (docs/evaluation.md)."""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial

import torch

from evaluator.report import TimingStats

L2_FLUSH_BYTES = 256 * 1024 * 1024  # >= 2x the H100/H200 L2 (50/60 MB)


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

    @classmethod
    def for_device(cls, device_type: str, max_time_s: float | None = None) -> TimingPolicy:
        """The protocol's policy on a GPU; on a CPU a short one: those timings only show a kernel runs."""
        if device_type == "cuda":
            # Half a second of warm-up per candidate, not the minimum 0.1 s: the GPU idles between queries
            # (DuckDB, start-up), and its clocks come back up over the first calls.
            policy = cls(warmup_s=0.5)
            return policy if max_time_s is None else replace(policy, max_time_s=max_time_s,
                                                             min_time_s=min(1.0, max_time_s))  # fmt: skip
        budget = 2.0 if max_time_s is None else max_time_s
        return cls(min_time_s=min(0.2, budget), max_time_s=budget)


# Bound when the runner imports this module, before it imports a kernel: a kernel that rebinds
# time.perf_counter or torch.cuda.synchronize past admission does not reach the timer (seen on the H200:
# a patched synchronize hid 20 ms of queued work, docs/sandbox.md).
_now = time.perf_counter
_synchronize = torch.cuda.synchronize
BASELINE = "baseline"  # the candidate whose median sets the per-call limit


class CallLimitExceeded(Exception):
    """A candidate's timed calls ran past the per-call limit (TimingPolicy.call_limit)."""


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        _synchronize(device)


def time_interleaved(
    candidates: Mapping[str, Callable[[], object]],
    *,
    device: torch.device,
    policy: TimingPolicy = TimingPolicy(),
) -> dict[str, TimingStats]:
    """Time each candidate A/B/A/B in one session until the medians are stable; stats per name."""
    return time_rotated(
        {name: (lambda _rep, fn=fn: fn()) for name, fn in candidates.items()}, device=device, policy=policy
    )


def time_rotated(
    candidates: Mapping[str, Callable[[int], object]],
    *,
    device: torch.device,
    policy: TimingPolicy = TimingPolicy(),
    strata: int = 1,
    keep: Callable[[str, int, object], None] | None = None,
) -> dict[str, TimingStats]:
    """Time each candidate A/B/A/B in one session; each call gets the rep's index to pick its inputs.

    Every candidate gets the same index in a round, so all see the same inputs. Rep `i` belongs to
    stratum `i % strata` (the parameter set it rotates through); the standard error pools the spread
    within strata, since round-robin fixes each stratum's share. `keep(name, rep, result)` sees each
    timed call's result after the clock stopped. Warm-up visits every stratum at least once.
    """
    flush = (
        torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device) if device.type == "cuda" else None
    )
    for fn in candidates.values():
        reps = 0
        warm_start = _now()
        while reps < max(policy.warmup_reps, strata) or _now() - warm_start < policy.warmup_s:
            fn(reps)
            reps += 1
        _sync(device)
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    over_limit: dict[str, int] = {name: 0 for name in candidates}
    started = _now()
    rep = 0
    while True:
        for name, fn in candidates.items():
            ms, result = _timed(partial(fn, rep), device, flush)
            samples[name].append(ms)
            _check_call_limit(name, samples, over_limit, policy.call_limit)
            if keep is not None:
                keep(name, rep, result)
            del result
        rep += 1
        elapsed = _now() - started
        if elapsed >= policy.max_time_s and rep >= 5:
            break
        if rep >= policy.min_reps and elapsed >= policy.min_time_s:
            if all(_stderr(s, strata) <= policy.target_stderr for s in samples.values()):
                break
    return {name: _stats(s, strata) for name, s in samples.items()}


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


def _stderr(samples: list[float], strata: int = 1) -> float:
    """Relative standard error of the median: sqrt(pi/2) * spread / sqrt(n), the spread being the
    interquartile range / 1.349 (the standard deviation of a normal distribution with that IQR).

    The IQR, not the standard deviation: GPU timings have a narrow core and a long tail (a host hiccup,
    a clock step), and the tail moves the median little but the standard deviation a lot. With strata
    the spread is pooled within them: the parameter sets' different costs are a fixed mix, not noise.
    """
    median = statistics.median(samples)
    n = len(samples)
    if n < 4 or median <= 0:
        return math.inf
    groups = [samples[k::strata] for k in range(strata)] if strata > 1 else [samples]
    if any(len(g) < 4 for g in groups):
        groups = [samples]
    spread = math.sqrt(sum(len(g) * _iqr(g) ** 2 for g in groups) / sum(len(g) for g in groups)) / 1.349
    return math.sqrt(math.pi / 2) * spread / math.sqrt(n) / median


def _iqr(samples: list[float]) -> float:
    q1, _, q3 = statistics.quantiles(samples, n=4)
    return q3 - q1


def _stats(samples: list[float], strata: int = 1) -> TimingStats:
    q1, _, q3 = statistics.quantiles(samples, n=4) if len(samples) >= 2 else (samples[0],) * 3
    return TimingStats(
        median_ms=statistics.median(samples),
        min_ms=min(samples),
        iqr_ms=q3 - q1,
        n=len(samples),
        stderr_pct=100 * _stderr(samples, strata),
    )


def time_call(fn: Callable[[], object], *, device: torch.device) -> tuple[float, object]:
    """One call, timed as a timed rep is (L2 flushed, sync -> call -> sync): (ms, its result)."""
    flush = (
        torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device) if device.type == "cuda" else None
    )
    return _timed(fn, device, flush)


def _timed(
    fn: Callable[[], object], device: torch.device, flush: torch.Tensor | None
) -> tuple[float, object]:
    if flush is not None:
        flush.fill_(0)  # evict L2 so no call is served from the previous call's cache
    _sync(device)
    t0 = _now()
    result = fn()
    _sync(device)
    return (_now() - t0) * 1e3, result
