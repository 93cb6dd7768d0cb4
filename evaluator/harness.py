"""Evaluate a kernel set: correctness against DuckDB, then timing against the TorchPlan baseline.

The walking skeleton runs the kernels in this process; the whole evaluation is meant to run inside the
sandbox (sandbox/), which is what keeps the host safe. Splitting trusted comparison from the untrusted
runner into two processes is the next step of the protocol (docs/evaluation.md).
"""

from __future__ import annotations

import importlib.util
import os
import random
import secrets
import signal
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from evaluator import HARNESS_VERSION, admission, hardware
from evaluator.compare import compare
from evaluator.errors import EvaluatorError
from evaluator.kernelset import KernelSet
from evaluator.queries import QUERIES, Query
from evaluator.report import QueryResult, Report, Status
from evaluator.timing import TimingPolicy, time_interleaved
from evaluator.tpch.load import Tables, load_tables, read_meta
from evaluator.tpch.reference import reference_answer
from evaluator.validate import decode_result


@dataclass(frozen=True)
class Options:
    sf_folder: Path
    device: str = "cpu"
    baseline: str = "auto"  # "compiled" (torch.compile), "eager", or "auto": compiled on CUDA, eager on CPU
    trials: int = 5  # the spec's default parameters plus trials - 1 seeded random parameter sets
    seed: int | None = None  # None: a fresh secret seed per evaluation
    timing: TimingPolicy = field(default_factory=TimingPolicy)
    query_timeout_s: int = 180
    queries: tuple[int, ...] = tuple(sorted(QUERIES))

    def __or__(self, changes: dict[str, Any]) -> Options:
        return replace(self, **changes)


class KernelBuildError(Exception):
    pass


def evaluate(kernel_set: KernelSet, kernel_dir: Path, options: Options) -> Report:
    device = torch.device(options.device)
    if device.type == "cpu":
        _use_triton_interpreter()
    baseline_mode = options.baseline
    if baseline_mode == "auto":
        baseline_mode = "compiled" if device.type == "cuda" else "eager"
    seed = options.seed if options.seed is not None else secrets.randbits(32)
    started = time.perf_counter()
    hw = hardware.describe(device)
    manifest = kernel_set.manifest
    results = []
    for number in options.queries:
        query = QUERIES[number]
        kernel_path = kernel_dir / f"{query.slug}.py" if number in kernel_set.kernels else None
        results.append(
            _evaluate_query(query, kernel_path, manifest.language, manifest.scope, options, device,
                            baseline_mode, random.Random(f"{seed}:{number}"), hw.get("peak_bandwidth_gbs"))
        )  # fmt: skip
    report = Report(
        harness_version=HARNESS_VERSION,
        hardware=hw,
        scale_factor=_scale_factor(options.sf_folder),
        language=manifest.language,
        scope=manifest.scope,
        baseline=baseline_mode,
        sandbox={"backend": os.environ.get("DKB_SANDBOX_BACKEND", "none")},
        queries=results,
        manifest=manifest.to_dict() | {"seed": seed},
    )
    report.wall_s = round(time.perf_counter() - started, 3)
    return report.aggregate()


def _use_triton_interpreter() -> None:
    """Triton kernels run through its interpreter on machines without a GPU.

    Triton reads TRITON_INTERPRET when its own library functions are defined, at import: imported
    earlier without it, every `tl.sum` fails inside the interpreter, and the kernel would be blamed.
    """
    if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
        raise EvaluatorError(
            "Triton was imported before TRITON_INTERPRET=1 was set; evaluate on the CPU in a fresh "
            "process (python -m evaluator run), or set TRITON_INTERPRET=1 before importing triton"
        )
    os.environ["TRITON_INTERPRET"] = "1"


def _evaluate_query(
    query: Query,
    kernel_path: Path | None,
    language: str,
    scope: str,
    options: Options,
    device: torch.device,
    baseline_mode: str,
    rng: random.Random,
    peak_gbs: float | None,
) -> QueryResult:
    tables = load_tables(options.sf_folder, query.columns(), device)
    baseline = _baseline_fn(query, baseline_mode)
    result = QueryResult(query=query.number, status=Status.MISSING)
    kernel = None
    refusals = admission.check(kernel_path.read_text(), kernel_path.name) if kernel_path else []
    if kernel_path is None:
        result.reason = "no kernel in the set: the baseline stands in"
    elif refusals:
        result.status = Status.REFUSED
        result.reason = "; ".join(str(v) for v in refusals[:5])
    elif language == "cuda" and device.type != "cuda":
        result.status, result.reason = Status.NEEDS_GPU, "CUDA kernel admitted; it runs only on a GPU"
    else:
        try:
            kernel = _load_kernel(query, kernel_path, scope)
            result.status, result.trials = _check(query, kernel, tables, options, rng)
        except KernelBuildError as exc:
            result.status, result.reason = Status.BUILD_ERROR, str(exc)
        except _Failure as exc:
            result.status, result.reason, result.trials = exc.status, exc.reason, exc.trials
    params = dict(query.defaults)
    candidates: dict[str, Callable[[], object]] = {"baseline": lambda: baseline(tables, **params)}
    if result.status == Status.PASSED:
        candidates["kernel"] = lambda: kernel(tables, **params)
    try:
        with _time_limit(options.query_timeout_s):
            stats = time_interleaved(candidates, device=device, policy=options.timing)
    except Exception as exc:  # the baseline is ours: a failure here is the harness's, not the kernel's
        if "kernel" not in candidates:
            raise
        result.status, result.reason = Status.RUNTIME_ERROR, f"failed while being timed: {_short(exc)}"
        stats = time_interleaved({"baseline": candidates["baseline"]}, device=device, policy=options.timing)
    result.stats = {name: asdict(s) for name, s in stats.items()}
    result.baseline_ms = stats["baseline"].median_ms
    if "kernel" in stats and result.status == Status.PASSED:
        result.kernel_ms = stats["kernel"].median_ms
        result.speedup = result.baseline_ms / result.kernel_ms
        _roofline(result, query, tables, peak_gbs)
    return result


def _baseline_fn(query: Query, mode: str) -> Callable[..., Any]:
    run_query = query.plan().run_query
    return torch.compile(run_query) if mode == "compiled" else run_query


def _load_kernel(query: Query, path: Path, scope: str) -> Callable[..., Any]:
    """Import the kernel file; full scope returns its run_query, core scope the TorchPlan running it."""
    spec = importlib.util.spec_from_file_location(f"dkb_kernel_{query.slug}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise KernelBuildError(f"importing {path.name} failed: {_short(exc, path.name)}") from exc
    name = "run_query" if scope == "full" else "_query_core"
    fn = getattr(module, name, None)
    if not callable(fn):
        raise KernelBuildError(f"{path.name} defines no function {name}() (scope '{scope}')")
    if scope == "full":
        return fn
    plan_run = query.plan().run_query
    # The TorchPlan's own run_query, with its module globals seeing the submitted _query_core.
    globals_ = dict(plan_run.__globals__, _query_core=fn)
    return types.FunctionType(plan_run.__code__, globals_, plan_run.__name__, plan_run.__defaults__)


class _Failure(Exception):
    def __init__(self, status: str, reason: str, trials: int) -> None:
        super().__init__(reason)
        self.status, self.reason, self.trials = status, reason, trials


def _check(query: Query, kernel: Callable[..., Any], tables: Tables, options: Options, rng: random.Random):
    """Run the kernel on the default and on random parameter sets; every trial must match DuckDB."""
    param_sets = [dict(query.defaults)] + [query.random_params(rng) for _ in range(options.trials - 1)]
    for trial, params in enumerate(param_sets, start=1):
        expected = reference_answer(options.sf_folder, query, params)
        fresh = tables.clone()
        try:
            with _time_limit(options.query_timeout_s):
                actual = decode_result(query, kernel(fresh, **params), options.sf_folder)
        except TimeoutError:
            raise _Failure(
                Status.TIMEOUT, f"trial {trial} ran past {options.query_timeout_s} s", trial
            ) from None
        except Exception as exc:
            raise _Failure(Status.RUNTIME_ERROR, f"trial {trial} {params}: {_short(exc)}", trial) from exc
        if not _unchanged(fresh, tables):
            raise _Failure(
                Status.WRONG_ANSWER, f"trial {trial}: the kernel modified its input tensors", trial
            )
        problem = compare(actual, expected, query.order_by)
        if problem:
            raise _Failure(Status.WRONG_ANSWER, f"trial {trial} {params}: {problem}", trial)
    return Status.PASSED, len(param_sets)


def _unchanged(used: Tables, original: Tables) -> bool:
    return all(torch.equal(used[t][c], original[t][c]) for t in original for c in original[t])


def _roofline(result: QueryResult, query: Query, tables: Tables, peak_gbs: float | None) -> None:
    """Bytes the query must read over peak bandwidth: no kernel can beat that time."""
    if peak_gbs is None or not result.kernel_ms:
        return
    floor_ms = tables.nbytes() / (peak_gbs * 1e9) * 1e3
    result.roofline_fraction = floor_ms / result.kernel_ms
    result.stats["roofline_floor_ms"] = floor_ms
    if result.roofline_fraction > 1.0:
        result.status = Status.REJECTED
        result.reason = (
            f"timed at {result.kernel_ms:.3f} ms, under the {floor_ms:.3f} ms bandwidth floor: "
            "physically impossible, so the measurement or the kernel is wrong"
        )
    elif result.roofline_fraction > 0.9 or (result.speedup or 0) > 10:
        result.stats["flagged"] = "near the bandwidth floor or > 10x faster: flagged for review"


@contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    """SIGALRM-based limit for Python-level hangs; the sandbox's wall-time limit backs it up."""

    def _raise(signum, frame):  # noqa: ARG001
        raise TimeoutError(f"ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _short(exc: BaseException, filename: str | None = None) -> str:
    """The exception, with the kernel file's own line number when the traceback has one."""
    where = ""
    if filename:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(filename)]
        if frames:
            where = f" (line {frames[-1].lineno})"
        elif isinstance(exc, SyntaxError) and exc.lineno:
            where = f" (line {exc.lineno})"
    text = f"{type(exc).__name__}: {exc}".strip()
    return (text[:500] + " ...") if len(text) > 500 else text + where


def _scale_factor(sf_folder: Path) -> float:
    return float(read_meta(sf_folder)["scale_factor"])
