"""The trusted compile cache: filled by `warm`, copied into each runner's private build folder."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from evaluator.__main__ import main
from evaluator.harness import Options, _build_env, _warmed, evaluate
from evaluator.kernelset import kernel_set_from_dir
from evaluator.queries import QUERIES
from evaluator.report import Status
from evaluator.timing import TimingPolicy
from evaluator.warm import warm


def test_each_runner_builds_in_its_own_folder(tmp_path: Path, sf001: Path) -> None:
    env = _build_env(tmp_path, Options(sf_folder=sf001), QUERIES[6], baseline=False)
    assert env["TORCH_EXTENSIONS_DIR"] == str(tmp_path / "build" / "torch_extensions")
    assert env["TRITON_CACHE_DIR"] == str(tmp_path / "build" / "triton")
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "build" / "inductor")
    assert env["TRITON_INTERPRET"] == "1"  # a CPU run


def test_a_runner_starts_from_a_private_copy_of_its_querys_cache(tmp_path: Path, sf001: Path) -> None:
    cache = tmp_path / "cache"
    for query, text in (("q06", "compiled"), ("q01", "another query's")):
        (cache / query / "inductor" / "fxgraph").mkdir(parents=True)
        (cache / query / "inductor" / "fxgraph" / "entry").write_text(text)
        (cache / query / "triton").mkdir()
    out = tmp_path / "out"
    out.mkdir()
    env = _build_env(out, Options(sf_folder=sf001, compile_cache=cache), QUERIES[6], baseline=True)
    copy = Path(env["TORCHINDUCTOR_CACHE_DIR"]) / "fxgraph" / "entry"
    assert copy.read_text() == "compiled"  # Q6's own folder only
    copy.write_text("poisoned")  # what a runner writes stays in its copy
    assert (cache / "q06" / "inductor" / "fxgraph" / "entry").read_text() == "compiled"
    # The kernel's runner compiles no baseline: it gets no copy of the trusted cache at all.
    kernel = tmp_path / "kernel"
    kernel.mkdir()
    env = _build_env(kernel, Options(sf_folder=sf001, compile_cache=cache), QUERIES[6], baseline=False)
    assert not Path(env["TORCHINDUCTOR_CACHE_DIR"]).exists()


def test_warm_compiles_each_baseline_into_its_querys_folder(tmp_path: Path, sf001: Path) -> None:
    lines = warm(tmp_path / "cache", sf001, "cpu", [6, 14], trials=2, seed=3, jobs=2)
    assert lines[0].startswith("Q06 compiled in ") and lines[1].startswith("Q14 compiled in "), lines
    for query in ("q06", "q14"):  # each query's generated code in its own folder
        assert any((tmp_path / "cache" / query / "inductor").rglob("*.py"))


def test_runners_share_the_warm_steps_compile_job_and_start_no_compile_pool(
    tmp_path: Path, sf001: Path
) -> None:
    # The job id keeps torch's dynamic-shape profile: without the warm step's, a runner compiles twice.
    cold = _build_env(tmp_path, Options(sf_folder=sf001), QUERIES[6], baseline=True)
    (tmp_path / "cache" / "q06").mkdir(parents=True)
    cached = Options(sf_folder=sf001, compile_cache=tmp_path / "cache")
    warm_env = _build_env(tmp_path, cached, QUERIES[6], baseline=True)
    assert cold["TORCH_COMPILE_JOB_ID"] == warm_env["TORCH_COMPILE_JOB_ID"] == "dkb-q06"
    assert "TORCHINDUCTOR_COMPILE_THREADS" not in cold  # compiling cold: the pool pays for itself
    assert warm_env["TORCHINDUCTOR_COMPILE_THREADS"] == "1"


def test_a_runner_times_the_baseline_the_warm_step_chose_for_the_same_draw(
    tmp_path: Path, sf001: Path, make_set
) -> None:
    cache = tmp_path / "cache"
    (line,) = warm(cache, sf001, "cpu", [6], trials=2, seed=7)
    record = json.loads((cache / "q06" / "baseline.json").read_text())
    assert record["mode"] in line and record["eager_ms"] > 0 and record["compiled_ms"] > 0
    kernels = make_set("triton-q06-full")
    timing = TimingPolicy(warmup_reps=1, warmup_s=0.0, min_reps=3, min_time_s=0.0, max_time_s=0.3)

    def q06(seed: int) -> dict:
        options = Options(sf_folder=sf001, compile_cache=cache, baseline="best", trials=2, seed=seed,
                          queries=(6,), timing=timing)  # fmt: skip
        (result,) = evaluate(kernel_set_from_dir(kernels), kernels, options).queries
        assert result.status == Status.PASSED, result.reason
        return result.stats

    same = q06(seed=7)
    assert same["baseline_mode"] == record["mode"]
    assert same["baseline_probe"] == {"eager_ms": record["eager_ms"], "compiled_ms": record["compiled_ms"],
                                      "by": "warm"}  # fmt: skip
    other = q06(seed=8)  # other parameters: the runner probes for itself
    assert "by" not in other["baseline_probe"] and other["baseline_probe"]["eager_ms"] != record["eager_ms"]
    assert {"start", "trials", "timing", "query"} <= set(other["wall_s"])  # the harness's phases


def test_an_evaluation_warms_a_cache_of_its_own_for_its_secret_draw(
    tmp_path: Path, sf001: Path, make_set, monkeypatch
) -> None:
    # A cache warmed for a fixed seed misses under a fresh secret one: with warm_jobs the evaluation
    # warms for its own draw, so its runner times the warm step's choice without probing again.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    kernels = make_set("triton-q06-full")
    timing = TimingPolicy(warmup_reps=1, warmup_s=0.0, min_reps=3, min_time_s=0.0, max_time_s=0.3)
    options = Options(sf_folder=sf001, baseline="best", trials=2, queries=(6,), timing=timing, warm_jobs=1)
    report = evaluate(kernel_set_from_dir(kernels), kernels, options)
    (result,) = report.queries
    assert result.status == Status.PASSED, result.reason
    assert result.stats["baseline_probe"]["by"] == "warm"
    assert 0 < report.warm_s < report.wall_s
    assert not list((tmp_path / "tmp").glob("dkb-warm-*"))  # the cache went with the evaluation


def test_nothing_is_warmed_for_an_eager_baseline_or_beside_a_given_cache(tmp_path: Path, sf001: Path) -> None:
    options = Options(sf_folder=sf001, warm_jobs=4)
    with _warmed(options, "eager", seed=1) as (given, warm_s):
        assert given == options and warm_s is None
    cached = options | {"compile_cache": tmp_path}
    with _warmed(cached, "best", seed=1) as (given, warm_s):
        assert given == cached and warm_s is None
    with _warmed(options | {"warm_jobs": 0}, "best", seed=1) as (given, warm_s):
        assert given.compile_cache is None and warm_s is None


def test_a_negative_warm_jobs_is_a_usage_error_before_anything_runs(tmp_path: Path, make_set, capsys) -> None:
    out = tmp_path / "report.json"
    code = main(["run", str(make_set()), "--warm-jobs", "-1", "--data-dir", str(tmp_path / "data"),
                 "--out", str(out)])  # fmt: skip
    assert code == 2
    assert "--warm-jobs is 0 or more" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "data").exists()
