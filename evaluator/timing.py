"""Timing: host clock around sync -> call -> sync, candidates interleaved (docs/evaluation.md)."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

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

    @classmethod
    def for_device(cls, device_type: str, max_time_s: float | None = None) -> TimingPolicy:
        """The protocol's policy on a GPU; on a CPU a short one: those timings only show a kernel runs."""
        if device_type == "cuda":
            return (
                cls() if max_time_s is None else cls(max_time_s=max_time_s, min_time_s=min(1.0, max_time_s))
            )
        budget = 2.0 if max_time_s is None else max_time_s
        return cls(min_time_s=min(0.2, budget), max_time_s=budget)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_interleaved(
    candidates: dict[str, Callable[[], object]],
    *,
    device: torch.device,
    policy: TimingPolicy = TimingPolicy(),
) -> dict[str, TimingStats]:
    """Time each candidate A/B/A/B in one session until the medians are stable; stats per name."""
    flush = (
        torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device) if device.type == "cuda" else None
    )
    started = time.perf_counter()
    for fn in candidates.values():
        reps = 0
        warm_start = time.perf_counter()
        while reps < policy.warmup_reps or time.perf_counter() - warm_start < policy.warmup_s:
            fn()
            reps += 1
        _sync(device)
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    started = time.perf_counter()
    while True:
        for name, fn in candidates.items():
            if flush is not None:
                flush.fill_(0)  # evict L2 so no rep is served from the previous rep's cache
            _sync(device)
            t0 = time.perf_counter()
            fn()
            _sync(device)
            samples[name].append((time.perf_counter() - t0) * 1e3)
        elapsed = time.perf_counter() - started
        n = len(next(iter(samples.values())))
        if elapsed >= policy.max_time_s and n >= 5:
            break
        if n >= policy.min_reps and elapsed >= policy.min_time_s:
            if all(_stderr(s) <= policy.target_stderr for s in samples.values()):
                break
    return {name: _stats(s) for name, s in samples.items()}


def _stderr(samples: list[float]) -> float:
    """Relative standard error of the median (sqrt(pi/2) * sd / sqrt(n), normal approximation)."""
    median = statistics.median(samples)
    if len(samples) < 2 or median <= 0:
        return math.inf
    return math.sqrt(math.pi / 2) * statistics.stdev(samples) / math.sqrt(len(samples)) / median


def _stats(samples: list[float]) -> TimingStats:
    q1, _, q3 = statistics.quantiles(samples, n=4) if len(samples) >= 2 else (samples[0],) * 3
    return TimingStats(
        median_ms=statistics.median(samples),
        min_ms=min(samples),
        iqr_ms=q3 - q1,
        n=len(samples),
        stderr_pct=100 * _stderr(samples),
    )
