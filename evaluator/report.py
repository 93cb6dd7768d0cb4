"""The evaluation report: a versioned JSON document (docs/report-schema.md)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA_VERSION = 2


class Status:
    """Per-query outcome codes; stable, shown to users and stored by the leaderboard."""

    PASSED = "passed"
    WRONG_ANSWER = "wrong_answer"
    BUILD_ERROR = "build_error"  # import, compile or signature problem
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"  # past its wall-time (or CPU-time) limit: stopped
    OUT_OF_MEMORY = "out_of_memory"  # past its memory limit, host or GPU: an allocation failed, or killed
    CRASHED = "crashed"  # killed by a signal (segfault, abort) or a CUDA fault (illegal memory access)
    NEEDS_GPU = "needs_gpu"  # a CUDA kernel evaluated where no GPU exists: admitted, not run
    MISSING = "missing"  # the set has no kernel for this query: the baseline stands in
    # correct, but its timing cannot stand: faster than physics allows (roofline fraction > 1), or its
    # timed reps measured look-ups (much slower on fresh parameter sets), or it took the fresh sets
    REJECTED = "rejected"
    REFUSED = "refused"  # admission: the file uses a forbidden tool (evaluator/admission.py); never run

    ALL = (PASSED, WRONG_ANSWER, BUILD_ERROR, RUNTIME_ERROR, TIMEOUT, OUT_OF_MEMORY, CRASHED, NEEDS_GPU,
           MISSING, REJECTED, REFUSED)  # fmt: skip


@dataclass
class TimingStats:
    median_ms: float
    min_ms: float
    iqr_ms: float
    n: int
    stderr_pct: float
    set_aside: int = 0  # rounds timed while the host ran slow, not counted (evaluator/timing.py)
    host_probe_us: float | None = None  # the session's usual host probe: the host CPU's speed then
    calls: int = 1  # calls per timed sample: the median is of each sample's time per call


@dataclass
class QueryResult:
    query: int
    status: str
    reason: str = ""
    baseline_ms: float | None = None
    kernel_ms: float | None = None
    speedup: float | None = None
    roofline_fraction: float | None = None
    kernel_time_share: float | None = None
    launches: int | None = None
    trials: int = 0
    stats: dict[str, Any] = field(default_factory=dict)  # {"baseline": TimingStats, "kernel": ...}

    @property
    def passed(self) -> bool:
        return self.status == Status.PASSED


@dataclass
class Report:
    harness_version: str
    hardware: dict[str, Any]
    scale_factor: float  # the main one: correctness trials and timing
    language: str
    scope: str
    baseline: str  # "compiled", "eager" or "best" (then each query's stats say which one was timed)
    sandbox: dict[str, Any]
    queries: list[QueryResult]
    manifest: dict[str, Any] = field(default_factory=dict)
    check_scale_factors: list[float] = field(default_factory=list)  # further SFs of correctness trials
    wall_s: float = 0.0
    warm_s: float | None = None  # of wall_s, compiling the baselines before the runners (harness 0.4.1)
    schema_version: int = SCHEMA_VERSION
    overall_speedup: float | None = None
    geomean_speedup: float | None = None
    pass_rate: float = 0.0
    fast_1: float = 0.0
    fast_2: float = 0.0

    def aggregate(self) -> Report:
        """Fill the set-level scores the way the paper defines them (docs/evaluation.md)."""
        results = self.queries
        total = len(results)
        self.pass_rate = sum(r.passed for r in results) / total if total else 0.0
        self.fast_1 = sum(r.passed and (r.speedup or 0) > 1 for r in results) / total if total else 0.0
        self.fast_2 = sum(r.passed and (r.speedup or 0) > 2 for r in results) / total if total else 0.0
        baseline_sum = 0.0
        chosen_sum = 0.0
        logs: list[float] = []
        for r in results:
            if r.baseline_ms is None:
                # No baseline time: the set cannot be scored honestly (CPU runs of CUDA sets, say).
                self.overall_speedup = self.geomean_speedup = None
                return self
            # A failing or slower kernel falls back to the baseline, as in the paper's headline.
            chosen = min(r.kernel_ms, r.baseline_ms) if r.passed and r.kernel_ms else r.baseline_ms
            baseline_sum += r.baseline_ms
            chosen_sum += chosen
            logs.append(math.log(r.baseline_ms / chosen))
        self.overall_speedup = baseline_sum / chosen_sum if chosen_sum else None
        self.geomean_speedup = math.exp(sum(logs) / len(logs)) if logs else None
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
