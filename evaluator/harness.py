"""Evaluate a kernel set: the trusted side (docs/evaluation.md).

This process never imports a kernel. Per query it checks admission, computes the expected answers with
DuckDB, starts an untrusted runner (evaluator/runner.py) through a `Launcher` (a plain child process,
or the sandbox's), and judges what the runner wrote: result columns against the expected answers,
timings against the bandwidth floor. A runner that crashes or hangs costs only its own query.
"""

from __future__ import annotations

import contextlib
import json
import random
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from evaluator import HARNESS_VERSION, admission, cores, fresh
from evaluator import hardware as hw
from evaluator.attribution import attribute, fallback_reason, own_kernels
from evaluator.errors import EvaluatorError
from evaluator.judge import Answers, compare_file, timed_problem
from evaluator.kernelset import KernelSet
from evaluator.launch import Launch, Launcher, death, error_status
from evaluator.queries import QUERIES, Query
from evaluator.report import QueryResult, Report, Status
from evaluator.timing import TimingPolicy, host_usual
from evaluator.tpch.load import column_bytes, read_meta
from evaluator.validate import parameter_sets
from evaluator.warm import compile_env, recorded_choice, warm


@dataclass(frozen=True)
class Draw:
    """One query's secret draws for one evaluation: its parameter sets, which timed reps are checked,
    and the fresh sets its runner reads after timing (evaluator/fresh.py)."""

    params: list[dict[str, Any]]
    verify: dict[str, Any]
    fresh: list[dict[str, Any]]
    stdin: bytes = b""

    @classmethod
    def of(cls, query: Query, options: Options, seed: int, with_fresh: bool) -> Draw:
        params = parameter_sets(query, options.trials - 1, seed)
        verify = {"seed": random.Random(f"{seed}:{query.number}:verify").getrandbits(32),
                  "share": _verify_share(options)}  # fmt: skip
        sets = fresh.fresh_sets(query, params, seed) if with_fresh else []
        return cls(params, verify, sets, fresh.payload(sets, seed, query) if sets else b"")

    def baseline_alone(self) -> Draw:
        return replace(self, fresh=[], stdin=b"")


@dataclass(frozen=True)
class Options:
    sf_folder: Path
    device: str = "cpu"
    # "compiled" (torch.compile), "eager", "best" (the faster of the two, per query), or "auto": best on
    # CUDA, eager on CPU (where Triton's interpreter is timed and compiling would only cost time)
    baseline: str = "auto"
    trials: int = 5  # the spec's default parameters plus trials - 1 seeded random parameter sets
    seed: int | None = None  # None: a fresh secret seed per evaluation
    timing: TimingPolicy = field(default_factory=TimingPolicy)
    query_timeout_s: float = 180  # one runner's start-up, build and trials; timing comes on top
    compile_limit_s: float = 120  # importing the kernel file and what it builds there
    queries: tuple[int, ...] = tuple(sorted(QUERIES))
    # Further scale factors' folders (smaller ones, say SF1 beside SF10): the correctness trials run
    # there too, in the same runner, before the main scale factor's trials; timing is at the main one.
    check_sf_folders: tuple[Path, ...] = ()
    verify_share: float | None = None  # share of timed reps whose results are checked; None: by SF
    # A compile cache a trusted process filled (`python -m evaluator warm`): each runner starts from a
    # private copy of it, so the baselines' torch.compile is a cache hit and nothing a runner writes
    # reaches another.
    compile_cache: Path | None = None
    # Without a compile cache, and where a compiled baseline may be timed: compile the baselines first,
    # `warm_jobs` queries at a time, in trusted processes, for this evaluation's own draw (its secret
    # seed), into a cache that lives as long as the evaluation. 0: each runner compiles its own.
    warm_jobs: int = 0

    def __post_init__(self) -> None:
        # Runners start in a temporary folder: a relative data path (var/data/sf10) would not resolve
        # there (seen on the H200: every runner failed to find its data).
        object.__setattr__(self, "sf_folder", Path(self.sf_folder).resolve())
        object.__setattr__(self, "check_sf_folders", tuple(Path(f).resolve() for f in self.check_sf_folders))
        if self.compile_cache is not None:
            object.__setattr__(self, "compile_cache", Path(self.compile_cache).resolve())

    def __or__(self, changes: dict[str, Any]) -> Options:
        return replace(self, **changes)


def check_scale_factors(spec: str, scale_factor: float) -> tuple[float, ...]:
    """The scale factors of further correctness trials, from a command line's `--check-sf`.

    `auto`: a tenth of the main one when it is at least 1 (SF1 beside SF10), none below (CPU runs at
    SF0.01 stay quick); `none`; or a comma-separated list, e.g. `1,0.1`.
    """
    spec = spec.strip().lower()
    if spec == "auto":
        return (scale_factor / 10,) if scale_factor >= 1 else ()
    if spec in ("none", ""):
        return ()
    try:
        values = tuple(float(part) for part in spec.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"{spec!r}: give auto, none or scale factors such as 1,0.1") from None
    if any(v <= 0 for v in values):
        raise ValueError(f"{spec!r}: scale factors are positive")
    return values


def evaluate(
    kernel_set: KernelSet,
    kernel_dir: Path,
    options: Options,
    launch: Launcher | None = None,
    progress: Callable[[QueryResult, int, int], None] | None = None,
) -> Report:
    """Evaluate the set's queries one after the other (after warming a compile cache for them, with
    `options.warm_jobs`); `progress(result, done, total)` hears of each as it ends (a run cut short
    still says how far it got)."""
    launch = launch or Launcher()
    baseline_mode = options.baseline
    if baseline_mode == "auto":
        baseline_mode = "best" if options.device.startswith("cuda") else "eager"
    seed = options.seed if options.seed is not None else secrets.randbits(32)
    started = time.perf_counter()
    with _warmed(options, baseline_mode, seed) as (options, warm_s):
        report = _evaluate(kernel_set, kernel_dir, options, launch, progress, baseline_mode, seed)
    report.warm_s = warm_s
    report.wall_s = round(time.perf_counter() - started, 3)
    return report.aggregate()


@contextlib.contextmanager
def _warmed(options: Options, baseline_mode: str, seed: int) -> Iterator[tuple[Options, float | None]]:
    """The options the runners get, with the seconds spent warming: a compile cache filled here for
    this evaluation's draw (`Options.warm_jobs`), removed when the evaluation ends; or as they were.

    A cache warmed once for a fixed seed misses under a fresh secret one (the parameter sets differ,
    and with them the warm step's probe and the graphs that depend on their values), so it is warmed
    per evaluation. Trusted: no kernel is imported, and each runner still gets a private copy.
    """
    if not options.warm_jobs or options.compile_cache or baseline_mode == "eager":
        yield options, None
        return
    with tempfile.TemporaryDirectory(prefix="dkb-warm-") as cache:
        started = time.perf_counter()
        warm(Path(cache), options.sf_folder, options.device, list(options.queries), options.trials, seed,
             jobs=options.warm_jobs, echo=None)  # fmt: skip
        yield options | {"compile_cache": Path(cache)}, round(time.perf_counter() - started, 3)


def _evaluate(
    kernel_set: KernelSet,
    kernel_dir: Path,
    options: Options,
    launch: Launcher,
    progress: Callable[[QueryResult, int, int], None] | None,
    baseline_mode: str,
    seed: int,
) -> Report:
    """`evaluate`'s queries, with the runners' options, the baseline mode and the seed settled."""
    manifest = kernel_set.manifest
    results, hardware = [], {}
    # The roofline's inputs come from this side: the runner's report of its GPU and of the bytes it
    # loaded is written by the process that imported the kernel.
    gpu = hw.gpu_state(options.device) if options.device.startswith("cuda") else None
    peak_gbs = hw.peak_bandwidth_gbs(gpu["name"]) if gpu else None
    copy_gbs = hw.measured_copy_gbs(options.device) if options.device.startswith("cuda") else None
    split = cores.split(options.device)  # (the runners' cores, DuckDB's): evaluator/cores.py
    usual = None  # the fastest usual host probe on the runners' cores so far (evaluator/timing.py)
    with cores.pinned(split[0] if split else None):
        for number in options.queries:
            query = QUERIES[number]
            kernel_path = (
                Path(kernel_dir).resolve() / f"{query.slug}.py" if number in kernel_set.kernels else None
            )
            if options.device.startswith("cuda"):
                usual = min(host_usual(), usual or float("inf"))
            timing = replace(options.timing, host_usual_s=usual)
            result, described = _evaluate_query(query, kernel_path, manifest.language, manifest.scope,
                                                replace(options, timing=timing), baseline_mode, seed,
                                                launch, peak_gbs, split[1] if split else None)  # fmt: skip
            results.append(result)
            hardware = hardware or described
            if progress is not None:
                progress(result, len(results), len(options.queries))
    if usual is not None:
        for result in results:
            mark_slow_host(result, usual, options.timing.host_slack)
    if split:
        hardware = hardware | {"cores": {"runner": sorted(split[0]), "answers": sorted(split[1])}}
    if gpu:
        end = hw.gpu_state(options.device)
        hardware = hardware | {"gpu_start": gpu, "gpu_end": end, "roofline_peak_gbs": peak_gbs,
                               "measured_copy_gbs": copy_gbs}  # fmt: skip
    return Report(
        harness_version=HARNESS_VERSION,
        hardware=hardware,
        scale_factor=_scale_factor(options.sf_folder),
        check_scale_factors=[_scale_factor(f) for f in options.check_sf_folders],
        language=manifest.language,
        scope=manifest.scope,
        baseline=baseline_mode,
        sandbox={"backend": launch.backend},
        queries=results,
        manifest=manifest.to_dict() | {"seed": seed},
    )


def mark_slow_host(result: QueryResult, usual_s: float, slack: float) -> None:
    """`stats.slow_host` on a query whose timing session ran on a slowed host from start to end: its
    own usual probe over `slack` times the evaluation's fastest (known only once all queries ran, so
    the first queries could not be told while they were timed; evaluator/timing.py)."""
    own_us = (result.stats.get("baseline") or {}).get("host_probe_us")
    if own_us is not None and own_us > slack * usual_s * 1e6:
        result.stats["slow_host"] = True


def _evaluate_query(
    query: Query,
    kernel_path: Path | None,
    language: str,
    scope: str,
    options: Options,
    baseline_mode: str,
    seed: int,
    launch: Launcher,
    peak_gbs: float | None = None,
    answer_cores: frozenset[int] | None = None,
) -> tuple[QueryResult, dict[str, Any]]:
    started = time.perf_counter()
    result = QueryResult(query=query.number, status=Status.MISSING)
    refusals = admission.check(kernel_path.read_text(), kernel_path.name) if kernel_path else []
    run_kernel = False
    if kernel_path is None:
        result.reason = "no kernel in the set: the baseline stands in"
    elif refusals:
        result.status, result.reason = Status.REFUSED, "; ".join(str(v) for v in refusals[:5])
    elif language == "cuda" and not options.device.startswith("cuda"):
        result.status, result.reason = Status.NEEDS_GPU, "CUDA kernel admitted; it runs only on a GPU"
    else:
        run_kernel = True
    draw = Draw.of(query, options, seed, with_fresh=run_kernel)
    recorded = None
    if baseline_mode == "best" and options.compile_cache:
        # The warm step timed eager against compiled on these inputs: time its winner, skip the probe.
        recorded = recorded_choice(options.compile_cache, query, options.sf_folder, options.device, seed,
                                   options.trials)  # fmt: skip
    baseline = {"mode": recorded["mode"], "probe": recorded} if recorded else {"mode": baseline_mode}
    # The same parameter sets at every scale factor; DuckDB answers them while the runner works.
    answers = (
        Answers(query, _folders(options), draw.params, draw.fresh, cores=answer_cores) if run_kernel else None
    )
    setup_s = time.perf_counter() - started
    try:
        with tempfile.TemporaryDirectory(prefix=f"dkb-{query.slug}-") as scratch:
            out = Path(scratch)
            response, problem = _run(query, kernel_path if run_kernel else None, scope, options,
                                     baseline, draw if run_kernel else draw.baseline_alone(), out,
                                     launch)  # fmt: skip
            ran = time.perf_counter()
            alone = False  # time the baseline again, without the kernel
            if problem and run_kernel:
                # The kernel took its runner down: judge it, then time the baseline alone.
                result.status, result.reason = problem
                alone = True
            elif answers:
                _judge(result, query, options, draw, response, out, answers)
                spoiled = _shared_session_problem(query, options, draw, response, out, answers)
                if spoiled:  # the kernel spoiled the baseline's half of the session
                    if result.status == Status.PASSED:
                        result.status, result.reason = Status.WRONG_ANSWER, spoiled
                    alone = True
            if alone:
                response, problem = _run(query, None, scope, options, baseline, draw.baseline_alone(),
                                         out, launch)  # fmt: skip
                if not problem and response.get("timed_inputs_changed"):
                    problem = (Status.WRONG_ANSWER, "the baseline modified its input tensors")
            if problem:
                raise EvaluatorError(f"Q{query.number}: the baseline's runner failed: {problem[1]}")
    finally:
        if answers:
            answers.close()
    timing = response.get("timing") or {}
    result.stats = dict(timing)
    if options.timing.host_usual_s is not None:  # the harness's usual host probe, the runner's reference
        result.stats["host_usual_us"] = round(options.timing.host_usual_s * 1e6, 2)
    # Where the query's time went: setting up here (admission, the draws), the runner's process
    # (copying its compile cache, starting, exiting) and its phases, then judging here, mostly waiting
    # for DuckDB's answers.
    result.stats["wall_s"] = {"setup": round(setup_s, 3), "runner": round(ran - started - setup_s, 3),
                              "judge": round(time.perf_counter() - ran, 3),
                              "runner_process": response.get("process_s"),
                              "runner_phases": response.get("phases_s")}  # fmt: skip
    if response.get("fresh"):
        result.stats["fresh"] = response["fresh"] | {"slowdown": fresh.slowdown(timing, response["fresh"])}
    result.baseline_ms = timing["baseline"]["median_ms"]
    _attribute(result, response, kernel_path.read_text() if kernel_path else "")
    if result.status == Status.PASSED and "kernel" in timing:
        result.kernel_ms = timing["kernel"]["median_ms"]
        result.speedup = result.baseline_ms / result.kernel_ms
        _roofline(result, column_bytes(options.sf_folder, query.columns()), peak_gbs)
    return result, response.get("hardware") or {}


def _attribute(result: QueryResult, response: dict[str, Any], source: str) -> None:
    """Device time share and launches from the runner's profiled calls; the framework-fallback label."""
    profile = response.get("profile") or {}
    found = {}
    for name, own in (("baseline", frozenset()), ("kernel", own_kernels(source))):
        if name in profile:
            found[name] = attribute((profile[name] or {}).get("activity"), own)
    if not found:
        return
    result.stats["attribution"] = {name: a.to_dict() for name, a in found.items()}
    result.stats["baseline_launches"] = found["baseline"].launches if "baseline" in found else None
    if "kernel" in found:
        result.kernel_time_share = found["kernel"].share
        result.launches = found["kernel"].launches
        reason = fallback_reason(found["kernel"])
        if reason:
            result.stats["framework_fallback"] = reason


def _run(
    query: Query,
    kernel_path: Path | None,
    scope: str,
    options: Options,
    baseline: dict[str, Any],
    draw: Draw,
    out: Path,
    launch: Launcher,
) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """Start one runner; returns (its response, None) or ({}, (status, reason)) when it failed.

    `baseline`: {"mode": eager|compiled|best} and, where the warm step chose the mode, its "probe"."""
    for stale in out.iterdir():
        shutil.rmtree(stale) if stale.is_dir() and not stale.is_symlink() else stale.unlink()
    request = {
        "query": query.number, "sf_folder": str(options.sf_folder), "device": options.device,
        "kernel_path": str(kernel_path) if kernel_path else None, "scope": scope,
        "baseline": baseline["mode"], "baseline_probe": baseline.get("probe"),
        "param_sets": draw.params, "out": str(out),
        "timing": asdict(options.timing), "checks": [str(f) for f in options.check_sf_folders],
        "verify": draw.verify, "fresh": len(draw.fresh), "compile_limit_s": options.compile_limit_s,
    }  # fmt: skip
    (out / "request.json").write_text(json.dumps(request))
    folders = _folders(options)
    readable = folders + ([kernel_path.parent] if kernel_path else [])
    # Start-up, build and trials get query_timeout_s; the timed reps get four times their budget on top
    # (warm-up and the last rep may outlast the budget itself).
    limit = options.query_timeout_s + options.timing.max_time_s * 4
    copying = time.time()
    env = _build_env(out, options, query)
    launched = time.time()
    outcome = launch(Launch(
        argv=[sys.executable, "-m", "evaluator.runner", str(out / "request.json")],
        readable=readable, writable=[out], hidden=[f / "tpch.duckdb" for f in folders],
        env=env, timeout_s=limit, stdin=draw.stdin,
    ))  # fmt: skip
    exited = time.time()
    response_path = out / "response.json"
    if outcome.returncode is None:
        return {}, (Status.TIMEOUT, f"ran past the {limit:.0f} s limit and was stopped")
    if outcome.out_of_memory:
        return {}, (Status.OUT_OF_MEMORY, f"the runner was killed at its memory limit: {outcome.log[-500:]}")
    if outcome.returncode != 0 or not response_path.exists():
        status, how = death(outcome.returncode, outcome.log)
        return {}, (status, f"the runner {how}: {outcome.log[-500:]}")
    try:
        response = json.loads(response_path.read_text())
    except ValueError:
        return {}, (Status.RUNTIME_ERROR, "the runner's response is not JSON")
    # The runner's own clock readings (wall clock: one host, two processes); diagnostics only.
    clock = response.get("clock") or {}
    if isinstance(clock.get("started"), float) and isinstance(clock.get("ended"), float):
        response["process_s"] = {"cache_copy": round(launched - copying, 3),
                                 "start": round(clock["started"] - launched, 3),
                                 "exit": round(exited - clock["ended"], 3)}  # fmt: skip
    return response, None


def _build_env(out: Path, options: Options, query: Query) -> dict[str, str]:
    """Fresh build caches for one runner, under its scratch folder (nothing built by one submission is
    seen by another), seeded with a copy of the trusted compile cache's folder for this query
    (evaluator/warm.py) when there is one."""
    build = out / "build"
    env = compile_env(build, query) | {"TORCH_EXTENSIONS_DIR": str(build / "torch_extensions")}
    if options.compile_cache:
        cache = Path(options.compile_cache) / query.slug
        for name in ("inductor", "triton"):
            if (cache / name).is_dir():
                shutil.copytree(cache / name, build / name, symlinks=True)
        # The baseline's compiles are cache hits: no pool of compile workers (torch starts one per
        # core, each importing torch, on the CPU the timed launches need).
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    return env | ({"TRITON_INTERPRET": "1"} if options.device == "cpu" else {})


def _judge(
    result: QueryResult,
    query: Query,
    options: Options,
    draw: Draw,
    response: dict[str, Any],
    out: Path,
    answers: Answers,
) -> None:
    """Compare what the runner wrote with DuckDB's answers; set the status and reason."""
    if response.get("build_error"):
        result.status, result.reason = Status.BUILD_ERROR, response["build_error"]
        return
    folders, params = _folders(options), draw.params
    # Trials in the order the runner runs them: each scale factor in turn, every parameter set.
    expected = [(phase, index) for phase in range(len(folders)) for index in range(len(params))]
    trials = response.get("trials", [])
    for count, (trial, (phase, index)) in enumerate(zip(trials, expected, strict=False), start=1):
        result.trials = count
        where = f"trial {index + 1} at SF{_scale_factor(folders[phase]):g} {params[index]}"
        if not trial.get("ok"):
            result.status = error_status(str(trial.get("error")))
            result.reason = f"{where}: {trial.get('error')}"
            return
        if trial.get("inputs_changed"):
            result.status = Status.WRONG_ANSWER
            result.reason = f"{where}: the kernel modified its input tensors"
            return
        path = out / f"trial-{phase}-{index + 1}.npz"
        problem = compare_file(query, folders[phase], path, answers.get(phase, index))
        if problem:
            result.status, result.reason = Status.WRONG_ANSWER, f"{where}: {problem}"
            return
    if len(trials) < len(expected):
        result.status, result.reason = Status.RUNTIME_ERROR, "the runner stopped before every trial ran"
        return
    if response.get("timing_error"):
        error = str(response["timing_error"])
        result.status = Status.TIMEOUT if error.startswith("CallLimitExceeded") else Status.RUNTIME_ERROR
        result.reason = f"while being timed: {error}"
        return
    error = ((response.get("timed") or {}).get("kernel") or {}).get("error")
    if error:
        result.status, result.reason = Status.RUNTIME_ERROR, f"while being timed: {error}"
        return
    if response.get("timed_inputs_changed"):  # the cause, before the wrong results it leads to
        result.status = Status.WRONG_ANSWER
        result.reason = "the kernel modified its input tensors while being timed"
        return
    main = len(folders) - 1
    problem = timed_problem(query, folders[main], out, "kernel", response, draw.verify, params,
                            lambda index: answers.get(main, index))  # fmt: skip
    if problem:
        result.status = Status.WRONG_ANSWER
        result.reason = f"the result returned while being timed is wrong: {problem}"
        return
    failed = fresh.problem(query, folders[main], out, response, draw.fresh, answers.fresh)
    if failed:
        result.status, result.reason = failed
        return
    if draw.fresh:
        looked_up = fresh.cached(response["timing"], response["fresh"], options.device)
        if looked_up:
            result.status, result.reason = Status.REJECTED, looked_up
            return
    result.status = Status.PASSED


def _shared_session_problem(
    query: Query,
    options: Options,
    draw: Draw,
    response: dict[str, Any],
    out: Path,
    answers: Answers,
) -> str | None:
    """Why the baseline's timing beside this kernel cannot stand (then it is timed again, alone).

    The baseline's timed reps get the same checks as the kernel's: a kernel that changes what the
    baseline reads (its inputs, shared state) would otherwise make itself look fast.
    """
    if "kernel" not in (response.get("timing") or {}):
        return None
    if response.get("timed_inputs_changed"):
        return "the kernel modified its input tensors while being timed"
    main = len(_folders(options)) - 1
    problem = timed_problem(query, _folders(options)[main], out, "baseline", response, draw.verify,
                            draw.params, lambda index: answers.get(main, index))  # fmt: skip
    return f"the baseline's result went wrong while timed beside this kernel: {problem}" if problem else None


def _verify_share(options: Options) -> float:
    """Share of the timed reps whose results are checked: all at a small main SF, a tenth above."""
    if options.verify_share is not None:
        return options.verify_share
    return 1.0 if _scale_factor(options.sf_folder) < 1 else 0.1


def _folders(options: Options) -> list[Path]:
    """Every scale factor's folder, in the order the runner visits them: the main one last."""
    return [Path(f) for f in options.check_sf_folders] + [Path(options.sf_folder)]


def _scale_factor(sf_folder: Path) -> float:
    return float(read_meta(sf_folder)["scale_factor"])


def _roofline(result: QueryResult, nbytes: int, peak_gbs: float | None) -> None:
    """Bytes the query must read over peak bandwidth: no kernel can beat that time."""
    if peak_gbs is None or not result.kernel_ms:
        return
    floor_ms = nbytes / (peak_gbs * 1e9) * 1e3
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
