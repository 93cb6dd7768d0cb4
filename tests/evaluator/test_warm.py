"""The trusted compile cache: filled by `warm`, copied into each runner's private build folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.harness import Options, _build_env


def test_each_runner_builds_in_its_own_folder(tmp_path: Path, sf001: Path) -> None:
    env = _build_env(tmp_path, Options(sf_folder=sf001))
    assert env["TORCH_EXTENSIONS_DIR"] == str(tmp_path / "build" / "torch_extensions")
    assert env["TRITON_CACHE_DIR"] == str(tmp_path / "build" / "triton")
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "build" / "inductor")
    assert env["TRITON_INTERPRET"] == "1"  # a CPU run


def test_a_runner_starts_from_a_private_copy_of_the_trusted_cache(tmp_path: Path, sf001: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "inductor" / "fxgraph").mkdir(parents=True)
    (cache / "inductor" / "fxgraph" / "entry").write_text("compiled")
    (cache / "triton").mkdir()
    out = tmp_path / "out"
    out.mkdir()
    env = _build_env(out, Options(sf_folder=sf001, compile_cache=cache))
    copy = Path(env["TORCHINDUCTOR_CACHE_DIR"]) / "fxgraph" / "entry"
    assert copy.read_text() == "compiled"
    copy.write_text("poisoned")  # what a runner writes stays in its copy
    assert (cache / "inductor" / "fxgraph" / "entry").read_text() == "compiled"


def test_warm_compiles_the_baselines_into_the_cache(
    tmp_path: Path, sf001: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.warm import warm

    for name in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)  # restored after the test: warm sets them
    lines = warm(tmp_path / "cache", sf001, "cpu", [6], trials=2, seed=3)
    assert lines[0].startswith("Q06 compiled in ")
    assert any((tmp_path / "cache" / "inductor").rglob("*.py"))  # inductor's generated code is there
