"""One way in: evaluate a kernel set as the site does.

The worker's task, `python -m evaluator run`, `python -m sandbox` and scripts/gpu all call `evaluate`
with a `Job`: the data is prepared here, the options settled here (the recorded baseline modes, the
persistent compile cache, the set's own queries), and the runners started by the sandbox's launcher
for the chosen backend. Nothing else builds `harness.Options` for an evaluation, so a figure measured
by a script is one the site would have produced.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.harness import baselines
from evaluator.harness.core import Options, Progress
from evaluator.harness.core import evaluate as evaluate_set
from evaluator.harness.judge import MEMORY_LIMIT
from evaluator.kernelset import kernel_set_from_dir
from evaluator.queries import QUERIES
from evaluator.timing import TimingPolicy
from evaluator.tpch.generate import prepare

__all__ = ["Job", "Progress", "evaluate"]


@dataclass(frozen=True)
class Job:
    kernel_dir: Path
    data_dir: Path  # the data root; the scale factors' folders are generated there if missing
    scale_factor: float
    device: str = "cpu"
    timeout_s: float = 1800  # the whole evaluation
    query_timeout_s: float = 180  # one query's runner: start-up, build and trials (timing on top)
    compile_limit_s: float = 120  # importing the kernel file and what it builds there
    max_time_per_query_s: float | None = None  # None: the protocol's default for the device
    trials: int = 5
    # Empty: every benchmark query is reported, and only the set's own get a runner (a missing query
    # scores 1.0 and needs no timing). Given: only these are reported (a feedback run, `--queries`).
    queries: tuple[int, ...] = ()
    check_scale_factors: tuple[float, ...] = ()  # further (smaller) SFs for the correctness trials
    seed: int | None = None  # the draws' seed; None: a fresh secret one (the leaderboard's way)
    # Per query, the mode its baseline is timed in ("eager"/"compiled") and the calibration's medians;
    # None: the calibration recorded in the data folder for this hardware (evaluator/harness/baselines.py).
    baselines: dict[int, dict[str, Any]] | None = None
    baseline: str = "recorded"  # or "eager", "compiled", "best" (probed per query: experiments only)
    ahead: str = "trials"  # when the next query's runners start (evaluator/harness/core.py, Options)
    duckdb_memory: str | None = MEMORY_LIMIT  # DuckDB's, for the expected answers; None: its own default


def evaluate(
    job: Job,
    *,
    backend: str = "bubblewrap",
    limits: Any = None,
    progress: Callable[[Progress], None] | None = None,
) -> dict[str, Any]:
    """Evaluate the job's kernel set, every runner started by `backend`'s launcher (sandbox/); returns
    the report as a dict. Raises `sandbox.SandboxError` when ours failed (retryable), `SubmissionError`
    when the set cannot be read."""
    from sandbox import launcher  # the launchers live in the sandbox package; it imports the evaluator

    started = launcher(backend, device=job.device, deadline=time.monotonic() + job.timeout_s, limits=limits)
    kernel_dir = Path(job.kernel_dir).resolve()
    kernel_set = kernel_set_from_dir(kernel_dir)
    sf_folder = prepare(job.data_dir, job.scale_factor, progress=False)
    recorded = job.baselines
    if recorded is None:
        recorded = baselines.recorded(job.data_dir, job.scale_factor, job.device)
    cache = baselines.cache_dir(job.data_dir, job.scale_factor, job.device)
    options = Options(
        sf_folder=sf_folder,
        device=job.device,
        baseline=job.baseline,
        baselines=recorded,
        trials=job.trials,
        seed=job.seed,
        timing=TimingPolicy.for_device(job.device.split(":")[0], job.max_time_per_query_s),
        query_timeout_s=job.query_timeout_s,
        compile_limit_s=job.compile_limit_s,
        queries=job.queries or tuple(sorted(QUERIES)),
        run_queries=job.queries or tuple(sorted(kernel_set.kernels)),
        check_sf_folders=tuple(prepare(job.data_dir, sf, progress=False) for sf in job.check_scale_factors),
        compile_cache=cache if cache.is_dir() else None,
        ahead=job.ahead,
        duckdb_memory=job.duckdb_memory,
    )
    report = evaluate_set(kernel_set, kernel_dir, options, started, progress).to_dict()
    report["sandbox"] = started.describe()
    return report
