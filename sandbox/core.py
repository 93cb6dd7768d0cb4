"""The sandbox: run `python -m evaluator run` on an untrusted kernel set under hard limits."""

from __future__ import annotations

import functools
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import evaluator
from evaluator.errors import EvaluatorError
from evaluator.tpch.generate import prepare, sf_dir

BACKENDS = ("bubblewrap", "process")
REPORT_MAX_BYTES = 16 * 1024 * 1024
LOG_TAIL_CHARS = 4000
# Inside the sandbox everything sits at fixed paths, so nothing about the host leaks into reports.
INSIDE = Path("/sandbox")
# The few files from /etc that a Python process, gcc (Triton's launcher build) and CUDA need; binding
# all of /etc would show secrets root-owned files hold (the sandbox's uid maps onto the caller's).
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "nsswitch.conf", "passwd", "group",
             "localtime")  # fmt: skip
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64")


class SandboxError(EvaluatorError):
    """The evaluation could not be run or did not finish; ours to retry, not the submitter's fault."""


class SandboxTimeout(SandboxError):
    pass


class SandboxUnavailable(SandboxError):
    pass


@dataclass(frozen=True)
class Job:
    kernel_dir: Path
    data_dir: Path  # the data root; the scale factor's folder is generated there if missing
    scale_factor: float
    device: str = "cpu"
    timeout_s: int = 1800
    max_time_per_query_s: float | None = None  # None: the evaluator's default for the device
    trials: int = 5
    queries: tuple[int, ...] = ()  # empty: every benchmark query


def evaluate(job: Job, *, backend: str = "bubblewrap") -> dict[str, Any]:
    """Evaluate the job's kernel set in the chosen sandbox and return the report (a dict)."""
    if backend not in BACKENDS:
        raise SandboxError(f"unknown sandbox backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    # Trusted side: make sure the data exists before anything untrusted runs (it is mounted read-only).
    data = prepare(job.data_dir, job.scale_factor, progress=False)
    with _scratch() as scratch:
        out = scratch / "out"
        out.mkdir()
        if backend == "bubblewrap":
            command, env = _bubblewrap_command(job, data, out)
            report_path = out / "report.json"
        else:
            print("WARNING: sandbox backend 'process': kernels run WITHOUT isolation", flush=True)
            command, env = _process_command(job, data, out)
            report_path = out / "report.json"
        log = _run(command, env=env, cwd=scratch, timeout_s=job.timeout_s)
        if not report_path.exists():
            raise SandboxError(f"the evaluator wrote no report; its output ended with:\n{log}")
        if report_path.stat().st_size > REPORT_MAX_BYTES:
            raise SandboxError("the evaluator's report is larger than the limit")
        try:
            report = json.loads(report_path.read_text())
        except json.JSONDecodeError as exc:
            raise SandboxError(f"the evaluator's report is not JSON: {exc}") from exc
    report["sandbox"] = {"backend": backend, "isolated": backend == "bubblewrap", "log_tail": log}
    return report


def _evaluator_args(kernels: Path, data_root: Path, report: Path, job: Job) -> list[str]:
    return [
        "-m", "evaluator", "run", str(kernels),
        "--sf", f"{job.scale_factor:g}", "--data-dir", str(data_root), "--device", job.device,
        "--out", str(report), "--no-prepare", "--trials", str(job.trials),
    ] + (["--max-time", str(job.max_time_per_query_s)] if job.max_time_per_query_s else []) + (
        ["--queries", ",".join(map(str, job.queries))] if job.queries else []
    )  # fmt: skip


def _base_env(device: str) -> dict[str, str]:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "USER": "nobody",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        # Fresh per-run build caches: nothing compiled by one submission is seen by another.
        "TRITON_CACHE_DIR": "/tmp/triton",
        "TORCH_EXTENSIONS_DIR": "/tmp/torch_extensions",
        "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor",
    }
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    for name in ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "CUDA_HOME"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@functools.cache
def bubblewrap_available() -> str | None:
    """Why bubblewrap cannot be used here, or None when it works."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed: `apt-get install bubblewrap`"
    probe = subprocess.run(
        [bwrap, "--ro-bind", "/", "/", "--unshare-all", "--uid", "65534", "--gid", "65534", "true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"bubblewrap cannot create a sandbox here: {probe.stderr.strip()}"
    return None


def _bubblewrap_command(job: Job, data: Path, out: Path) -> tuple[list[str], dict[str, str]]:
    problem = bubblewrap_available()
    if problem:
        raise SandboxUnavailable(
            f"{problem}. Untrusted kernels are not evaluated without a sandbox; set DKB_SANDBOX=process "
            "to accept running them unisolated (never on a public site)."
        )
    package = Path(evaluator.__file__).resolve().parent
    inside_data = INSIDE / "data" / sf_dir(Path("."), job.scale_factor).name
    command = [
        shutil.which("bwrap") or "bwrap", "--unshare-all", "--die-with-parent", "--new-session",
        "--uid", "65534", "--gid", "65534", "--hostname", "sandbox",
        "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        "--clearenv", "--chdir", "/tmp",
    ]  # fmt: skip
    for path in SYSTEM_DIRS:
        command += _bind_ro(Path(path))
    for name in ETC_FILES:
        command += _bind_ro(Path("/etc") / name)
    # The Python environment (a venv and the interpreter it points to), read-only, at the same paths.
    for path in sorted(
        {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent}
    ):
        if not any(path.is_relative_to(d) for d in SYSTEM_DIRS):
            command += ["--ro-bind", str(path), str(path)]
    command += ["--ro-bind", str(package), str(INSIDE / "lib" / "evaluator")]
    # Packages the operator put on PYTHONPATH (wheels unpacked on a GPU host) are visible read-only;
    # the project's own root is not: it holds the database and other submissions.
    extra = [p for p in _host_pythonpath() if not (p / "evaluator").exists()]
    for path in extra:
        command += ["--ro-bind", str(path), str(path)]
    command += ["--ro-bind", str(Path(job.kernel_dir).resolve()), str(INSIDE / "kernels")]
    command += ["--ro-bind", str(data), str(inside_data)]
    command += ["--bind", str(out), str(INSIDE / "out")]
    if job.device == "cuda":
        command += ["--ro-bind", "/sys", "/sys"]
        for node in sorted(Path("/dev").glob("nvidia*")):
            if node.is_char_device():
                command += ["--dev-bind", str(node), str(node)]
    env = _base_env(job.device) | {"PYTHONPATH": os.pathsep.join(map(str, [INSIDE / "lib", *extra]))}
    for key, value in env.items():
        command += ["--setenv", key, value]
    command += [
        sys.executable,
        *_evaluator_args(INSIDE / "kernels", INSIDE / "data", INSIDE / "out/report.json", job),
    ]
    return command, {"PATH": "/usr/bin:/bin"}


def _host_pythonpath() -> list[Path]:
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return [Path(e).resolve() for e in entries if e and Path(e).is_dir()]


def _bind_ro(path: Path) -> list[str]:
    if not path.exists() and not path.is_symlink():
        return []
    if path.is_symlink():
        # merged /usr: /bin -> usr/bin. Recreate the link rather than binding its target twice.
        return ["--symlink", os.readlink(path), str(path)]
    return ["--ro-bind", str(path), str(path)]


def _process_command(job: Job, data: Path, out: Path) -> tuple[list[str], dict[str, str]]:
    package_root = Path(evaluator.__file__).resolve().parent.parent
    pythonpath = os.pathsep.join(map(str, [package_root, *_host_pythonpath()]))
    env = _base_env(job.device) | {"PYTHONPATH": pythonpath, "HOME": str(out.parent)}
    for name in ("TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "TORCHINDUCTOR_CACHE_DIR"):
        env[name] = str(out.parent / name.lower())
    args = _evaluator_args(Path(job.kernel_dir).resolve(), data.parent, out / "report.json", job)
    return [sys.executable, *args], env


def _limits() -> None:
    """rlimits for the child (runs between fork and exec)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))


def _run(command: list[str], *, env: dict[str, str], cwd: Path, timeout_s: int) -> str:
    proc = subprocess.Popen(
        command,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, so a timeout kills every child it started
        preexec_fn=_limits,
    )
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        output, _ = proc.communicate()
        raise SandboxTimeout(
            f"the evaluation ran past its {timeout_s} s limit and was stopped:\n{_tail(output)}"
        ) from None
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    log = _tail(output)
    if proc.returncode != 0:
        raise SandboxError(f"the evaluator exited with status {proc.returncode}:\n{log}")
    return log


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _tail(output: bytes | None) -> str:
    text = (output or b"").decode("utf-8", errors="replace")
    return text[-LOG_TAIL_CHARS:]


@contextmanager
def _scratch() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="dkb-run-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
