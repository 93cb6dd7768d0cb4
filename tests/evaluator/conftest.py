"""The SF0.01 folder and a kernel-set builder for the evaluator's tests."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from evaluator.tpch.generate import prepare

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="session")
def data_root(tpch_data: Path) -> Path:
    return tpch_data


@pytest.fixture(scope="session")
def sf001(tpch_data: Path) -> Path:
    """The SF0.01 folder of the session's data (tests/conftest.py generates it)."""
    return prepare(tpch_data, 0.01, progress=False)


@pytest.fixture(scope="session")
def sf0005(tpch_data: Path) -> Path:
    """A second, smaller scale factor for the correctness trials (half a second to generate)."""
    return prepare(tpch_data, 0.005, progress=False)


@pytest.fixture(scope="session")
def sf01(tpch_data: Path) -> Path:
    """The SF0.1 folder (about 10 s to generate), for the TorchPlans' second scale factor."""
    return prepare(tpch_data, 0.1, progress=False)


@pytest.fixture
def make_set(tmp_path: Path) -> Callable[..., Path]:
    """A kernel-set folder: an example's files, with q06.py rewritten or replaced when asked."""

    def build(example: str = "triton-q06-full", *, q06: str | None = None, edit=None, **manifest) -> Path:
        target = tmp_path / "set"
        shutil.copytree(EXAMPLES / example, target)
        if manifest:
            data = json.loads((target / "manifest.json").read_text()) | manifest
            (target / "manifest.json").write_text(json.dumps(data))
        if q06 is not None:
            (target / "q06.py").write_text(q06)
        if edit is not None:
            old, new = edit
            source = (target / "q06.py").read_text()
            assert old in source, f"{old!r} is not in the example"
            (target / "q06.py").write_text(source.replace(old, new))
        return target

    return build


@pytest.fixture
def no_admission(monkeypatch: pytest.MonkeyPatch) -> None:
    """Admission switched off: for test kernels that reach for the TorchPlans, `os` or `time` to play a
    part (a Triton set may not import them: evaluator/harness/admission.py), not to attack."""
    from evaluator.harness import admission

    monkeypatch.setattr(admission, "check", lambda source, filename="", **_: [])


@pytest.fixture
def own_data(tmp_path: Path, tpch_data: Path) -> Path:
    """A data folder of this test's own around the session's SF0.01 tables: what a test records there
    (a baseline calibration, a compile cache) reaches no other test."""
    root = tmp_path / "data"
    root.mkdir()
    (root / "sf0.01").symlink_to(tpch_data / "sf0.01")
    return root
