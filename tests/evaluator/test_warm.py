"""The trusted compile cache: filled by `warm`, copied into each runner's private build folder."""

from __future__ import annotations

from pathlib import Path

from evaluator.harness import Options, _build_env
from evaluator.queries import QUERIES


def test_each_runner_builds_in_its_own_folder(tmp_path: Path, sf001: Path) -> None:
    env = _build_env(tmp_path, Options(sf_folder=sf001), QUERIES[6])
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
    env = _build_env(out, Options(sf_folder=sf001, compile_cache=cache), QUERIES[6])
    copy = Path(env["TORCHINDUCTOR_CACHE_DIR"]) / "fxgraph" / "entry"
    assert copy.read_text() == "compiled"  # Q6's own folder only
    copy.write_text("poisoned")  # what a runner writes stays in its copy
    assert (cache / "q06" / "inductor" / "fxgraph" / "entry").read_text() == "compiled"


def test_warm_compiles_each_baseline_into_its_querys_folder(tmp_path: Path, sf001: Path) -> None:
    from evaluator.warm import warm

    lines = warm(tmp_path / "cache", sf001, "cpu", [6, 14], trials=2, seed=3, jobs=2)
    assert lines[0].startswith("Q06 compiled in ") and lines[1].startswith("Q14 compiled in "), lines
    for query in ("q06", "q14"):  # each query's generated code in its own folder
        assert any((tmp_path / "cache" / query / "inductor").rglob("*.py"))
