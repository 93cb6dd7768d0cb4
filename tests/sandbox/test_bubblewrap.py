"""The real bubblewrap sandbox: kernels run, and what they try against the host fails."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest

import sandbox
from evaluator.evaluation import Job, evaluate
from sandbox.core import bubblewrap_available

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# A kernel that looks around at import time and reports what it saw through its build error. Admission
# would refuse it (os, json, reflection): it is switched off here, since the sandbox is the wall.
PROBE = """
import json, os
_builtins = __builtins__ if isinstance(__builtins__, dict) else vars(__builtins__)
socket = _builtins["__imp" + "ort__"]("socket")
seen = {"uid": os.getuid(), "project_visible": os.path.exists(%(root)r), "cwd_files": os.listdir(".")}
try:
    with open(%(answers)r, "rb") as answers:
        seen["answers"] = len(answers.read())
except OSError as exc:
    seen["answers"] = exc.strerror
try:
    socket.create_connection(("127.0.0.1", 5432), timeout=2)
    seen["network"] = "connected"
except OSError as exc:
    seen["network"] = type(exc).__name__
for target in (%(kernels)r + "/x", "/usr/x", %(data)r + "/x"):
    try:
        open(target, "w")
        seen[target] = "written"
    except OSError as exc:
        seen[target] = exc.strerror
seen["home"] = os.environ.get("HOME")
seen["secrets_in_env"] = sorted(k for k in os.environ if "SECRET" in k or "DATABASE" in k)
raise RuntimeError("PROBE" + json.dumps(seen))
"""


def job(kernel_dir: Path, data_root: Path, **kw) -> Job:
    kw.setdefault("max_time_per_query_s", 0.3)
    kw.setdefault("trials", 2)
    kw.setdefault("queries", (6,))
    return Job(kernel_dir=kernel_dir, data_dir=data_root, scale_factor=0.01, **kw)


def probe_set(tmp_path: Path, data: Path) -> Path:
    kernel_dir = tmp_path / "probe"
    shutil.copytree(EXAMPLES / "triton-q06-full", kernel_dir)
    paths = {
        "root": str(ROOT / "pyproject.toml"),
        "answers": str(data / "tpch.duckdb"),
        "kernels": str(kernel_dir),
        "data": str(data),
    }
    (kernel_dir / "q06.py").write_text(PROBE % paths)
    return kernel_dir


def test_bubblewrap_is_installed_and_works_here() -> None:
    assert bubblewrap_available() is None


def test_the_example_set_passes_inside_bubblewrap(tpch_data: Path) -> None:
    report = evaluate(job(EXAMPLES / "triton-q06-core", tpch_data), backend="bubblewrap")
    assert report["sandbox"]["backend"] == "bubblewrap" and report["sandbox"]["isolated"] is True
    (q06,) = report["queries"]
    assert q06["status"] == "passed", q06["reason"]
    assert q06["kernel_ms"] > 0


def test_a_kernel_cannot_reach_the_network_the_project_or_write_outside_scratch(
    tpch_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.harness import admission

    monkeypatch.setattr(admission, "check", lambda source, filename="", **_: [])
    monkeypatch.setenv("DATABASE_URL", "postgres://secret@127.0.0.1/dkb")
    socket.create_connection(("127.0.0.1", 5432), timeout=2).close()  # PostgreSQL is there, outside
    data = tpch_data / "sf0.01"
    kernel_dir = probe_set(tmp_path, data)
    report = evaluate(job(kernel_dir, tpch_data), backend="bubblewrap")
    (q06,) = report["queries"]
    assert q06["status"] == "build_error"
    seen = json.loads(q06["reason"].split("PROBE", 1)[1].rsplit("}", 1)[0] + "}")
    assert seen["uid"] == 65534
    assert seen["network"] == "ConnectionRefusedError"  # its own loopback, where nothing listens
    assert seen["project_visible"] is False
    assert seen["answers"] == "Permission denied"  # DuckDB's file, the expected answers' source, is masked
    assert seen[f"{kernel_dir}/x"] == "Read-only file system"
    assert seen[f"{data}/x"] == "Read-only file system"
    assert seen["/usr/x"] == "Read-only file system"
    assert seen["home"] == "/tmp" and seen["secrets_in_env"] == []


def test_the_process_backend_runs_but_says_it_is_not_isolated(
    tpch_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = evaluate(job(EXAMPLES / "triton-q06-full", tpch_data), backend="process")
    assert report["sandbox"] == report["sandbox"] | {"backend": "process", "isolated": False}
    assert report["queries"][0]["status"] == "passed"
    assert "WITHOUT isolation" in capsys.readouterr().err


def endless_set(tmp_path: Path) -> Path:
    kernel_dir = tmp_path / "slow"
    shutil.copytree(EXAMPLES / "triton-q06-full", kernel_dir)
    (kernel_dir / "q06.py").write_text("def run_query(tables, **params):\n    while True:\n        pass\n")
    return kernel_dir


def test_a_hanging_kernel_times_out_and_the_rest_of_the_set_is_evaluated(
    tpch_data: Path, tmp_path: Path
) -> None:
    report = evaluate(job(endless_set(tmp_path), tpch_data, queries=(6, 14), query_timeout_s=10))
    statuses = {q["query"]: q for q in report["queries"]}
    assert statuses[6]["status"] == "timeout" and statuses[6]["baseline_ms"] > 0
    assert statuses[14]["status"] == "missing" and statuses[14]["baseline_ms"] > 0


def test_an_evaluation_past_its_wall_time_is_stopped(tpch_data: Path, tmp_path: Path) -> None:
    with pytest.raises(sandbox.SandboxTimeout, match="ran past its wall-time limit"):
        evaluate(job(endless_set(tmp_path), tpch_data, timeout_s=12), backend="bubblewrap")


def test_without_bubblewrap_it_refuses_rather_than_run_unisolated(
    tpch_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH on which no bwrap exists
    bubblewrap_available.cache_clear()
    try:
        with pytest.raises(sandbox.SandboxUnavailable, match="DKB_SANDBOX=process"):
            evaluate(job(EXAMPLES / "triton-q06-full", tpch_data), backend="bubblewrap")
    finally:
        bubblewrap_available.cache_clear()


def test_an_unknown_backend_is_refused(tpch_data: Path) -> None:
    with pytest.raises(sandbox.SandboxError, match="unknown sandbox backend"):
        evaluate(job(EXAMPLES / "triton-q06-full", tpch_data), backend="chroot")
