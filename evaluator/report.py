"""The evaluation report: a versioned JSON document (docs/report-schema.md)."""

from __future__ import annotations

import math
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any

SCHEMA_VERSION = 3

# A passed query's timing is ranked only where both medians are this sure: at most this relative
# standard error (%) and at least this many samples each (docs/evaluation.md, "Scores").
MAX_STDERR_PCT = 2.0
MIN_SAMPLES = 10
# Where the hardware was calibrated, a baseline timed this much slower than the calibration's median for
# its mode ran on a disturbed machine: its query's timing is not ranked. Calibrated evaluations on the H200
# timed their baselines at 0.99-1.11x the calibration (docs/benchmarks.md, session 18).
CALIBRATION_SLOWER = 1.5
UNCALIBRATED = "baselines not calibrated on this hardware"


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
    REFUSED = (
        "refused"  # admission: the file uses a forbidden tool (evaluator/harness/admission.py); never run
    )

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
    # The median per call over the rounds set aside (None where none was): beside `median_ms`, over the
    # rounds counted, it shows whether the rounds the host probe set aside did run slower.
    aside_median_ms: float | None = None
    host_probe_us: float | None = None  # the session's usual host probe: the host CPU's speed then
    calls: int = 1  # calls per timed sample: the median is of each sample's time per call
    # The kernel's only: the median over the counted rounds of the baseline's time over this one's, each
    # round's two samples taken back to back (what a slow spell of the host does to both cancels there).
    paired_speedup: float | None = None
    paired_stderr_pct: float | None = None


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

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> QueryResult:
        """One query of a stored report, of this schema or an older one (`Report.from_dict`)."""
        return cls(**_known(cls, row))


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
    # {"ranked": bool, "reason": str, ...}: whether the speed scores may be ranked (`aggregate`)
    timing: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION
    overall_speedup: float | None = None
    geomean_speedup: float | None = None
    pass_rate: float = 0.0
    fast_1: float = 0.0
    fast_2: float = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """A stored report (`to_dict`'s, of this schema or an older one: docs/report-schema.md) as
        written, its scores not recomputed; keys it does not know are left out, missing ones empty."""
        empty: dict[str, Any] = {
            "harness_version": "",
            "hardware": {},
            "scale_factor": 0.0,
            "language": "",
            "scope": "",
            "baseline": "",
            "sandbox": {},
        }
        known = empty | _known(cls, data)
        return cls(**known | {"queries": [QueryResult.from_dict(row) for row in data.get("queries") or []]})

    def aggregate(self) -> Report:
        """Fill the set-level scores the way the paper defines them (docs/evaluation.md)."""
        results = self.queries
        total = len(results)
        self.pass_rate = sum(r.passed for r in results) / total if total else 0.0
        self.fast_1 = sum(r.passed and (r.speedup or 0) > 1 for r in results) / total if total else 0.0
        self.fast_2 = sum(r.passed and (r.speedup or 0) > 2 for r in results) / total if total else 0.0
        self.timing = self._timing()
        baseline_sum = 0.0
        chosen_sum = 0.0
        logs: list[float] = []
        for r in results:
            if r.baseline_ms is None and r.status == Status.MISSING:
                logs.append(0.0)  # no kernel: 1.0, and no time to add where the hardware has no calibration
                continue
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

    def _timing(self) -> dict[str, Any]:
        """Ranked, or why not: a CPU's timings only show a kernel runs (Triton's interpreter), a passed
        query's baseline must come from the hardware's calibration, and a passed query whose medians are
        unsure (`MAX_STDERR_PCT`, `MIN_SAMPLES`, `CALIBRATION_SLOWER`) is labelled so."""
        bounds = {"max_stderr_pct": MAX_STDERR_PCT, "min_samples": MIN_SAMPLES}
        if self.hardware.get("device", "cpu") == "cpu":
            return {"ranked": False, "reason": "correctness only: timed on a CPU"} | bounds
        unstable = []
        for r in self.queries:
            why = unstable_reason(r) if r.passed else None
            if why:
                r.stats["unstable"] = why
                unstable.append(f"Q{r.query}")
        # The baseline's mode, and its compiled kernels' configurations, come from a trusted calibration on
        # an idle machine; compiled in the evaluation, they were chosen beside whatever ran then.
        uncalibrated = [
            f"Q{r.query}" for r in self.queries if r.passed and not r.stats.get("baseline_calibration")
        ]
        if uncalibrated:
            reason = f"{UNCALIBRATED}: {', '.join(uncalibrated)}"
            return {"ranked": False, "reason": reason} | bounds
        if unstable:
            return {"ranked": False, "reason": f"unstable timing: {', '.join(unstable)}"} | bounds
        return {"ranked": True, "reason": ""} | bounds

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def disturbed_reason(result: QueryResult) -> str | None:
    """Why a query's baseline cannot be trusted, or None: it ran over `CALIBRATION_SLOWER` times the
    median the hardware's calibration measured on an idle machine (harness 0.6.9)."""
    record, mode = result.stats.get("baseline_calibration"), result.stats.get("baseline_mode")
    calibrated = record.get(f"{mode}_ms") if isinstance(record, dict) else None
    if calibrated and result.baseline_ms and result.baseline_ms > CALIBRATION_SLOWER * calibrated:
        return (
            f"the baseline ran {result.baseline_ms / calibrated:.2f}x its calibration's median "
            f"({result.baseline_ms:.3f} ms against {calibrated:.3f} ms): the machine was disturbed"
        )
    return None


def disturbed_timing(report: dict[str, Any]) -> str:
    """`disturbed_reason` over a stored report's passed queries, as a timing reason ("unstable timing:
    Q16: the baseline ran 1.98x ..."), or "" where none ran that slow. Reports of harnesses before 0.6.9
    were ranked without this rule; a leaderboard that ranks them by it reads them with this."""
    found = []
    for row in report.get("queries") or []:
        result = QueryResult.from_dict(row)
        why = disturbed_reason(result) if result.passed else None
        if why:
            found.append(f"Q{result.query}: {why}")
    return f"unstable timing: {'; '.join(found)}" if found else ""


def unstable_reason(result: QueryResult) -> str | None:
    """Why a query's timing is too unsure to rank, or None."""
    if why := disturbed_reason(result):
        return why
    for name in ("baseline", "kernel"):
        stats = result.stats.get(name)
        if not isinstance(stats, dict):
            continue
        if stats.get("n", 0) < MIN_SAMPLES:
            return f"the {name} was timed {stats.get('n', 0)} times, fewer than {MIN_SAMPLES}"
        if stats.get("stderr_pct", 0) > MAX_STDERR_PCT:
            error = stats["stderr_pct"]
            return f"the {name}'s median has a {error:.1f}% standard error, over {MAX_STDERR_PCT:g}%"
    return None


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """`data`'s values of `cls`'s fields (a dataclass); a null where the field's default is a value (a
    list, 0, "") is left to that default."""
    found = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        defaulted = f.default is not MISSING or f.default_factory is not MISSING
        if data[f.name] is None and defaulted and f.default is not None:
            continue
        found[f.name] = data[f.name]
    return found
