"""The one way in (evaluator/evaluation.py): the set's own queries get runners, the rest are reported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evaluator import evaluation
from evaluator.harness import baselines
from evaluator.harness.core import Progress
from evaluator.queries import QUERIES
from evaluator.report import Status

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_one_kernel_set_starts_one_query_and_reports_all_22(tpch_data: Path) -> None:
    heard: list[Progress] = []
    job = evaluation.Job(
        kernel_dir=EXAMPLES / "triton-q06-full",
        data_dir=tpch_data,
        scale_factor=0.01,
        trials=2,
        max_time_per_query_s=0.3,
        seed=3,
    )
    report = evaluation.evaluate(job, backend="process", progress=heard.append)
    assert [q["query"] for q in report["queries"]] == sorted(QUERIES)
    assert heard == [Progress(0, 1, 6, "started"), Progress(1, 1, 6, "ended", Status.PASSED)]
    for result in report["queries"]:
        if result["query"] != 6:
            assert result["status"] == Status.MISSING and result["stats"] == {}  # no runner, no timing
    assert report["sandbox"]["backend"] == "process" and report["sandbox"]["isolated"] is False
    assert report["timing"]["ranked"] is False  # a CPU: correctness only


def test_the_calibration_in_the_data_folder_chooses_the_mode(own_data: Path) -> None:
    row = {"query": 6, "mode": "compiled", "eager_ms": 9.0, "compiled_ms": 8.0}
    data = own_data
    baselines.store(data, 0.01, "cpu", [row])
    job = evaluation.Job(
        kernel_dir=EXAMPLES / "triton-q06-full",
        data_dir=data,
        scale_factor=0.01,
        trials=2,
        max_time_per_query_s=0.3,
        seed=3,
        queries=(6,),
    )
    report = evaluation.evaluate(job, backend="process")
    (result,) = report["queries"]
    assert result["status"] == Status.PASSED, result["reason"]
    assert result["stats"]["baseline_mode"] == "compiled" and result["stats"]["baseline_calibration"] == row


def test_an_unknown_backend_is_refused(tpch_data: Path) -> None:
    from sandbox import SandboxError

    job = evaluation.Job(kernel_dir=EXAMPLES / "triton-q06-full", data_dir=tpch_data, scale_factor=0.01)
    with pytest.raises(SandboxError, match="unknown sandbox backend 'chroot'"):
        evaluation.evaluate(job, backend="chroot")


def test_the_command_line_and_the_sandbox_alias_take_the_same_way_in(
    tpch_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from evaluator.__main__ import main as evaluator_main
    from sandbox.__main__ import main as sandbox_main

    common = ["--data-dir", str(tpch_data), "--trials", "2", "--max-time", "0.3", "--seed", "3"]
    assert (
        evaluator_main(["run", str(EXAMPLES / "triton-q06-full"), *common, "--out", str(tmp_path / "a")]) == 0
    )
    # The closing line counts the set's own kernels, beside the pass rate over the whole benchmark.
    assert f"1 of 1 kernels passed (pass rate 5% of the {len(QUERIES)} queries)" in capsys.readouterr().err
    assert sandbox_main([str(EXAMPLES / "triton-q06-full"), *common, "--out", str(tmp_path / "b")]) == 0
    direct, sandboxed = (json.loads((tmp_path / name).read_text()) for name in "ab")
    assert (direct["sandbox"]["backend"], sandboxed["sandbox"]["backend"]) == ("process", "bubblewrap")
    for report in (direct, sandboxed):
        assert report["schema_version"] == 3 and report["manifest"]["seed"] == 3
        assert [q["status"] for q in report["queries"] if q["query"] == 6] == [Status.PASSED]


def test_the_trusted_side_evaluates_without_importing_torch(tpch_data: Path) -> None:
    """Only the runners import torch: the worker's memory holds the harness and DuckDB (issue 14), not
    torch's libraries (about 0.3 GB resident, more with CUDA's)."""
    script = f"""
import sys
import subprocess
import sys
from pathlib import Path
from evaluator import evaluation
job = evaluation.Job(kernel_dir=Path({str(EXAMPLES / "triton-q06-full")!r}),
                     data_dir=Path({str(tpch_data)!r}), scale_factor=0.01, trials=2,
                     max_time_per_query_s=0.3, seed=3, queries=(6,))
report = evaluation.evaluate(job, backend="process")
assert report["queries"][0]["status"] == "passed", report["queries"][0]["reason"]
print(sorted(name for name in sys.modules if name == "torch" or name.startswith("torch.")))
"""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
