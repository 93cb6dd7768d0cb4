"""Evaluate a kernel set: the trusted side (docs/evaluation.md).

This process never imports a kernel. Per query it checks admission, computes the expected answers with
DuckDB, starts an untrusted runner (evaluator/runner/commands.py) through a `Launcher` (a plain child process,
or the sandbox's), and judges what the runner wrote: result columns against the expected answers,
timings against the bandwidth floor. A runner that crashes or hangs costs only its own query.
"""

from __future__ import annotations

import random
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from importlib.metadata import version
from math import inf
from pathlib import Path
from typing import Any

from evaluator import HARNESS_VERSION
from evaluator import hardware as hw
from evaluator.attribution import attribute, fallback_reason, own_kernels
from evaluator.errors import EvaluatorError
from evaluator.harness import admission, cores, fresh
from evaluator.harness.baselines import compile_env
from evaluator.harness.judge import MEMORY_LIMIT, Answers, Database, answer_threads
from evaluator.harness.launch import Launcher
from evaluator.harness.remote import CallFailed, RunnerFailed
from evaluator.harness.session import Runners, Sides, open_runners, run_session
from evaluator.kernelset import KernelSet, Manifest
from evaluator.queries import QUERIES, Query
from evaluator.report import QueryResult, Report, Status
from evaluator.timing import TimingPolicy, host_usual
from evaluator.tpch.generate import prepare
from evaluator.tpch.load import column_bytes, scale_factor, scan_bytes


@dataclass(frozen=True)
class Draw:
    """One query's secret draws for one evaluation: its parameter sets, which timed reps are checked,
    and the fresh sets sent after timing with the rolls of their new table content
    (evaluator/harness/fresh.py)."""

    params: list[dict[str, Any]]
    verify: dict[str, Any]
    fresh: list[dict[str, Any]]
    rolls: list[tuple[float, float]]

    @classmethod
    def of(cls, query: Query, options: Options, seed: int, with_fresh: bool) -> Draw:
        params = query.parameter_sets(options.trials - 1, seed)
        verify = {
            "seed": random.Random(f"{seed}:{query.number}:verify").getrandbits(32),
            "share": _verify_share(options),
        }
        sets = fresh.fresh_sets(query, params, seed) if with_fresh else []
        return cls(params, verify, sets, fresh.rolls(seed, query, len(sets)))


@dataclass(frozen=True)
class Progress:
    """What an evaluation tells its caller as it goes: a query's runner started, or a query ended."""

    done: int  # queries ended so far, of those that get a runner
    total: int  # queries that get a runner: the set's own
    query: int
    phase: str  # "started" or "ended"
    status: str = ""  # the ended query's


@dataclass(frozen=True)
class Options:
    sf_folder: Path
    device: str = "cpu"
    # "recorded": per query, the mode its calibration chose (`baselines`; evaluator/harness/baselines.py), or
    # without one compiled on CUDA and eager on a CPU; or "compiled", "eager", "best" (the faster of the
    # two, probed per query and evaluation: for experiments, never the site's way)
    baseline: str = "recorded"
    baselines: dict[int, dict[str, Any]] = field(default_factory=dict)  # the calibration's, per query
    trials: int = 5  # the spec's default parameters plus trials - 1 seeded random parameter sets
    seed: int | None = None  # None: a fresh secret seed per evaluation
    timing: TimingPolicy = field(default_factory=TimingPolicy)
    query_timeout_s: float = 180  # one runner's start-up, build and trials; timing comes on top
    compile_limit_s: float = 120  # importing the kernel file and what it builds there
    queries: tuple[int, ...] = tuple(sorted(QUERIES))  # reported
    # Started: the others are reported as missing, at 1.0, with no runner. None: all of `queries`.
    run_queries: tuple[int, ...] | None = None
    # Further scale factors' folders (smaller ones, say SF1 beside SF10): the correctness trials run
    # there too, in the same runner, before the main scale factor's trials; timing is at the main one.
    check_sf_folders: tuple[Path, ...] = ()
    verify_share: float | None = None  # share of timed reps whose results are checked; None: by SF
    # A compile cache a trusted process filled (the calibration, evaluator/harness/baselines.py): each
    # baseline runner starts from a private copy of its query's folder, so its torch.compile is a cache
    # hit and nothing a runner writes reaches another.
    compile_cache: Path | None = None
    # When the next query's runners start (evaluator/harness/session.py): "trials", once this query's
    # runners have loaded what they run, on DuckDB's cores and with torch.compile's imports and the
    # profiler's set-up done in their start; or "tail", once this query's timed calls are over (harness
    # 0.6.1), with neither. docs/benchmarks.md has the A/B of the two on the H200.
    ahead: str = "trials"
    # DuckDB's memory limit for the expected answers (evaluator/harness/judge.py); None: DuckDB's own
    # default, 80% of the host's memory.
    duckdb_memory: str | None = MEMORY_LIMIT

    def __post_init__(self) -> None:
        if self.ahead not in ("trials", "tail"):
            raise ValueError(f"ahead must be 'trials' or 'tail', not {self.ahead!r}")
        # Runners start in a temporary folder: a relative data path (var/data/sf10) would not resolve
        # there (seen on the H200: every runner failed to find its data).
        object.__setattr__(self, "sf_folder", Path(self.sf_folder).resolve())
        object.__setattr__(self, "check_sf_folders", tuple(Path(f).resolve() for f in self.check_sf_folders))
        if self.compile_cache is not None:
            object.__setattr__(self, "compile_cache", Path(self.compile_cache).resolve())

    def __or__(self, changes: dict[str, Any]) -> Options:
        return replace(self, **changes)


def evaluate(
    kernel_set: KernelSet,
    kernel_dir: Path,
    options: Options,
    launch: Launcher | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> Report:
    """Evaluate the set's queries one after the other; `progress` hears of each as it starts and ends
    (a run cut short still says how far it got). Callers go through evaluator/evaluation.py."""
    launch = launch or Launcher()
    seed = options.seed if options.seed is not None else secrets.randbits(32)
    started = time.perf_counter()
    report = _evaluate(kernel_set, kernel_dir, options, launch, progress, seed)
    report.wall_s = round(time.perf_counter() - started, 3)
    return report.aggregate()


def _evaluate(
    kernel_set: KernelSet,
    kernel_dir: Path,
    options: Options,
    launch: Launcher,
    progress: Callable[[Progress], None] | None,
    seed: int,
) -> Report:
    """`evaluate`'s queries, with the seed settled."""
    manifest = kernel_set.manifest
    results: list[QueryResult] = []
    hardware: dict[str, Any] = {}
    # The roofline's inputs come from this side: the runner's report of its GPU and of the bytes it
    # loaded is written by the process that imported the kernel.
    gpu = hw.gpu_state(options.device) if options.device.startswith("cuda") else None
    peak_gbs = hw.peak_bandwidth_gbs(gpu["name"]) if gpu else None
    copy_gbs = hw.measured_copy_gbs(options.device) if options.device.startswith("cuda") else None
    # The harness's, the runners' and DuckDB's cores (evaluator/harness/cores.py).
    split = cores.split(options.device)
    # The fastest usual host probe on the runners' core so far (evaluator/timing.py).
    usual: float | None = None
    run = set(options.queries if options.run_queries is None else options.run_queries)
    numbers = [number for number in options.queries if number in run]
    following = dict(zip(numbers[:-1], numbers[1:], strict=True))  # the next query with a runner, per query
    ahead: dict[int, Prepared] = {}  # the next query, prepared and its runners started during this one
    database = Database(
        answer_threads(split.answers if split else None),
        options.duckdb_memory,
        cores=split.answers if split else None,
    )

    def prepare(number: int, start_runners: bool, warm: bool = False) -> Prepared:
        nonlocal usual
        query = QUERIES[number]
        if split:
            with cores.pinned(split.runners):
                usual = min(host_usual(), usual or float("inf"))
        kernel_path = (
            Path(kernel_dir).resolve() / f"{query.slug}.py" if number in kernel_set.kernels else None
        )
        query_options = replace(options, timing=replace(options.timing, host_usual_s=usual))
        return _prepare(
            query, kernel_path, manifest, query_options, seed, launch, split, database, start_runners, warm
        )

    def start_ahead(number: int) -> None:
        """Called during the previous query's session: `number`'s draws, answers and runners get going.
        Started before that query's timed calls, the runners start on DuckDB's cores, away from the
        harness's and the timed runners' (evaluator/harness/cores.py), and they inherit them."""
        early = options.ahead == "trials"
        try:
            with cores.pinned(split.answers if split and early else None):
                ahead[number] = prepare(number, start_runners=True, warm=early)
        except Exception:  # prepared again in its turn, where the error is its own query's
            pass

    done = 0
    try:
        with cores.pinned(split.harness if split else None):
            for number in options.queries:
                if number not in run:
                    results.append(_not_run(QUERIES[number], options))
                    continue
                launch.check()
                if progress is not None:
                    progress(Progress(done, len(numbers), number, "started"))
                prepared = ahead.pop(number, None) or prepare(number, start_runners=False)
                start_next = partial(start_ahead, following[number]) if number in following else None
                result, described = _run(prepared, options, launch, peak_gbs, database, start_next)
                results.append(result)
                hardware = hardware or described
                done += 1
                if progress is not None:
                    progress(Progress(done, len(numbers), number, "ended", result.status))
    finally:
        for prepared in ahead.values():  # the evaluation ended before their turn
            prepared.close()
        database.close()
    if usual is not None:
        for result in results:
            mark_slow_host(result, usual, options.timing.host_slack)
    # DuckDB answers on this side: its version is the harness's to say.
    hardware = {"device": options.device.split(":")[0]} | hardware
    hardware |= {"duckdb": version("duckdb"), "duckdb_memory_limit": options.duckdb_memory}
    if split:
        hardware = hardware | {"cores": split.describe()}
    if gpu:
        end = hw.gpu_state(options.device)
        hardware = hardware | {
            "gpu_start": gpu,
            "gpu_end": end,
            "roofline_peak_gbs": peak_gbs,
            "measured_copy_gbs": copy_gbs,
        }
    return Report(
        harness_version=HARNESS_VERSION,
        hardware=hardware,
        scale_factor=scale_factor(options.sf_folder),
        check_scale_factors=[scale_factor(f) for f in options.check_sf_folders],
        language=manifest.language,
        scope=manifest.scope,
        baseline=options.baseline,
        sandbox=launch.describe(),
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


@dataclass
class Prepared:
    """One query before its session: its result so far (a refusal, say), the kernel's source, the
    session's inputs with their secret draws, DuckDB's answers under way and, when started ahead of
    their turn, its runners (evaluator/harness/session.py)."""

    query: Query
    result: QueryResult
    source: str
    kernel: tuple[Path, str] | None  # (file, scope) when the kernel runs
    sides: Sides
    answers: Answers | None
    setup_s: float
    runners: Runners | None = None

    def close(self) -> None:
        """Stop what a query never run holds."""
        if self.runners is not None:
            self.runners.stack.close()
        if self.answers is not None:
            self.answers.close()


def _prepare(
    query: Query,
    kernel_path: Path | None,
    manifest: Manifest,
    options: Options,
    seed: int,
    launch: Launcher,
    split: cores.Split | None,
    database: Database,
    start_runners: bool = False,
    warm: bool = False,
) -> Prepared:
    """Admission, the draws, DuckDB's answers set going and, with `start_runners`, the runners (`warm`:
    see `open_runners`)."""
    started = time.perf_counter()
    result = QueryResult(query=query.number, status=Status.MISSING)
    source = kernel_path.read_text() if kernel_path else ""
    refusals = admission.check(source, kernel_path.name, language=manifest.language) if kernel_path else []
    run_kernel = False
    if kernel_path is None:
        result.reason = "no kernel in the set: the baseline stands in"
    elif refusals:
        result.status, result.reason = Status.REFUSED, "; ".join(str(v) for v in refusals[:5])
    elif manifest.language == "cuda" and not options.device.startswith("cuda"):
        result.status, result.reason = Status.NEEDS_GPU, "CUDA kernel admitted; it runs only on a GPU"
    else:
        run_kernel = True
    draw = Draw.of(query, options, seed, with_fresh=run_kernel)
    # The same parameter sets at every scale factor; DuckDB answers them while the runners start.
    folders = _folders(options, query if run_kernel else None)
    answers = (
        Answers(
            query,
            folders,
            draw.params,
            database,
            draw.fresh,
            cores=split.answers if split else None,
            seed=seed,
        )
        if run_kernel
        else None
    )
    sides = Sides(
        query=query,
        folders=folders,
        device=options.device,
        params=draw.params,
        timing=_session_timing(options),
        baseline_mode=baseline_mode(query, options),
        query_timeout_s=options.query_timeout_s,
        compile_limit_s=options.compile_limit_s,
        verify=draw.verify,
        fresh=draw.fresh,
        rolls=draw.rolls,
        build_env=lambda folder, baseline: _build_env(folder, options, query, baseline),
        runner_cores=split.runners if split else None,
    )
    kernel = (kernel_path, manifest.scope) if run_kernel and kernel_path else None
    prepared = Prepared(query, result, source, kernel, sides, answers, 0.0)
    if start_runners:
        try:
            prepared.runners = open_runners(sides, kernel, launch, warm)
        except BaseException:
            prepared.close()
            raise
    prepared.setup_s = time.perf_counter() - started
    return prepared


def _run(
    prepared: Prepared,
    options: Options,
    launch: Launcher,
    peak_gbs: float | None,
    database: Database,
    start_next: Callable[[], None] | None = None,
) -> tuple[QueryResult, dict[str, Any]]:
    """The query's session, and its result from what the session found."""
    started = time.perf_counter()
    query, result, answers = prepared.query, prepared.result, prepared.answers
    try:
        found = run_session(
            prepared.sides,
            prepared.kernel,
            answers,
            launch,
            prepared.runners,
            start_next,
            options.ahead,
            database,
        )
    except (RunnerFailed, CallFailed) as exc:  # only the baseline's runner's failures come out
        raise EvaluatorError(f"Q{query.number}: the baseline's runner failed: {exc}") from exc
    finally:
        if answers:
            answers.close()
    if prepared.kernel:
        result.status, result.reason, result.trials = found.status, found.reason, found.trials
    result.stats = found.stats
    if options.baseline == "recorded":
        result.stats["baseline_mode"] = prepared.sides.baseline_mode
        result.stats["baseline_calibration"] = options.baselines.get(query.number)
    host_usual_s = prepared.sides.timing.host_usual_s
    if host_usual_s is not None:  # the harness's usual host probe, the sessions' reference
        result.stats["host_usual_us"] = round(host_usual_s * 1e6, 2)
    # A query prepared ahead spent its setup inside the previous query's "ahead" phase.
    setup_s = 0.0 if prepared.runners else prepared.setup_s
    result.stats["started_ahead"] = prepared.runners is not None
    result.stats["wall_s"] = {
        "setup": round(prepared.setup_s, 3),
        **found.stats.get("wall_s", {}),
        "query": round(setup_s + time.perf_counter() - started, 3),
    }
    result.baseline_ms = found.stats["baseline"]["median_ms"]
    _attribute(result, found.profile, prepared.source)
    if result.status == Status.PASSED and "kernel" in found.stats:
        result.kernel_ms = found.stats["kernel"]["median_ms"]
        result.speedup = result.baseline_ms / result.kernel_ms
        columns, folder = query.columns(), options.sf_folder
        _roofline(result, column_bytes(folder, columns), scan_bytes(folder, columns), peak_gbs)
    return result, found.hardware


def baseline_mode(query: Query, options: Options) -> str:
    """The mode the query's baseline is timed in: the calibration's choice, or without one compiled
    on CUDA and eager on a CPU (where Triton's interpreter is timed and compiling only costs time)."""
    if options.baseline != "recorded":
        return options.baseline
    record = options.baselines.get(query.number)
    if record:
        return record["mode"]
    return "compiled" if options.device.startswith("cuda") else "eager"


def _not_run(query: Query, options: Options) -> QueryResult:
    """A query the set has no kernel for: it scores 1.0 by the fallback rule and gets no runner. Its
    baseline time, where the hardware was calibrated, is the calibration's (for the overall speedup)."""
    result = QueryResult(
        query=query.number, status=Status.MISSING, reason="no kernel in the set: scores 1.0, not timed"
    )
    record = options.baselines.get(query.number) if options.baseline == "recorded" else None
    if record:
        mode = record["mode"]
        result.baseline_ms = record[f"{mode}_ms"]
        result.stats = {"baseline_mode": mode, "baseline_calibration": record}
    return result


def _attribute(result: QueryResult, profile: dict[str, Any], source: str) -> None:
    """Device time share and launches from the runners' profiled calls; the framework-fallback label."""
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


def _build_env(out: Path, options: Options, query: Query, baseline: bool) -> dict[str, str]:
    """Fresh build caches for one runner, under its scratch folder (nothing built by one submission is
    seen by another); the baseline's seeded with a copy of the trusted compile cache's folder for this
    query (the calibration's, evaluator/harness/baselines.py) when there is one."""
    build = out / "build"
    env = compile_env(build, query) | {"TORCH_EXTENSIONS_DIR": str(build / "torch_extensions")}
    # OpenMP's threads sleep once a parallel region ends rather than spin for milliseconds: the runners
    # are timed in turn, and a waiting runner's spinning threads take the cores from the timed one (on
    # the CPU, an honest kernel's runner held 62% of a core while the baseline was timed: timed.Beside).
    env["OMP_WAIT_POLICY"] = "PASSIVE"
    if options.compile_cache and baseline:
        cache = Path(options.compile_cache) / query.slug
        for name in ("inductor", "triton"):
            if (cache / name).is_dir():
                shutil.copytree(cache / name, build / name, symlinks=True)
        # The baseline's compiles are cache hits: no pool of compile workers (torch starts one per
        # core, each importing torch, on the CPU the timed launches need).
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    return env | ({"TRITON_INTERPRET": "1"} if options.device == "cpu" else {})


def _session_timing(options: Options) -> TimingPolicy:
    """No per-call limit off the GPU: Triton's interpreter is orders of magnitude slower than torch."""
    return options.timing if options.device.startswith("cuda") else replace(options.timing, call_limit=inf)


def _verify_share(options: Options) -> float:
    """Share of the timed reps whose results are checked: all at a small main SF, a tenth above."""
    if options.verify_share is not None:
        return options.verify_share
    return 1.0 if scale_factor(options.sf_folder) < 1 else 0.1


def _folders(options: Options, query: Query | None = None) -> list[Path]:
    """Every scale factor's folder, in the order the runner visits them: the main one last. For a query
    whose trials have nothing to check at these scale factors (`Query.coverage_scale_factor`), its own
    scale factor first, generated here if missing."""
    folders = [Path(f) for f in options.check_sf_folders] + [Path(options.sf_folder)]
    wanted = query.coverage_scale_factor if query else None
    if wanted and all(scale_factor(f) < wanted for f in folders):
        folders.insert(0, prepare(Path(options.sf_folder).parent, wanted, progress=False))
    return folders


def _roofline(result: QueryResult, nbytes: int, scan_nbytes: int, peak_gbs: float | None) -> None:
    """The roofline fraction: the query's columns read once at peak bandwidth over the kernel's time. A
    kernel whose filter drops most rows may skip the other columns' bytes for them and beat that; only
    under one pass over the largest table's narrowest column (`scan_bytes`) is its time impossible."""
    if peak_gbs is None or not result.kernel_ms:
        return
    floor_ms, scan_ms = hw.floor_ms(nbytes, peak_gbs), hw.floor_ms(scan_nbytes, peak_gbs)
    result.roofline_fraction = floor_ms / result.kernel_ms
    result.stats |= {"roofline_floor_ms": floor_ms, "scan_floor_ms": scan_ms}
    if result.kernel_ms < scan_ms:
        result.status = Status.REJECTED
        result.reason = (
            f"timed at {result.kernel_ms:.3f} ms, under the {scan_ms:.3f} ms it takes to read one column "
            "of the largest table once at peak bandwidth: physically impossible, so the measurement or "
            "the kernel is wrong"
        )
    elif result.roofline_fraction > 1.0:
        result.stats["flagged"] = (
            f"faster than reading the query's columns once at peak bandwidth ({floor_ms:.3f} ms): it skips "
            "bytes of them, as a kernel may for rows its filters drop, or its timing is wrong; "
            "flagged for review"
        )
    elif result.roofline_fraction > 0.9 or (result.speedup or 0) > 10:
        result.stats["flagged"] = "near the bandwidth floor or > 10x faster: flagged for review"
