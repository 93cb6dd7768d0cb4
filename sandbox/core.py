"""The sandbox: every untrusted runner of an evaluation starts inside it, under hard limits.

The trusted harness (evaluator/harness/core.py) runs here, in the worker: it computes the expected answers
and judges. Each query's runner, the only process that imports a kernel, is started by a launcher of
this module: under bubblewrap, or as a plain child process when that weaker backend is chosen.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import evaluator
from evaluator.errors import EvaluatorError
from evaluator.harness.launch import Launch, Launcher, Outcome, Started, start_process
from sandbox.cgroup import Cgroup
from sandbox.limits import Limits

BACKENDS = ("bubblewrap", "docker", "process")
# The runner sees the evaluator package here; the project around it (database, other submissions) never.
PACKAGE_INSIDE = Path("/sandbox/lib")
# The few files from /etc that a Python process, gcc (Triton's launcher build) and CUDA need; binding
# all of /etc would show secrets root-owned files hold (the sandbox's uid maps onto the caller's).
ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "nsswitch.conf",
    "passwd",
    "group",
    "localtime",
)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64")


class SandboxError(EvaluatorError):
    """The evaluation could not be run or did not finish; ours to retry, not the submitter's fault."""


class SandboxTimeout(SandboxError):
    pass


class SandboxUnavailable(SandboxError):
    pass


def launcher(backend: str, *, device: str, deadline: float, limits: Limits | None = None) -> Launcher:
    """The launcher of `backend` for one evaluation that must end by `deadline` (time.monotonic())."""
    if backend not in BACKENDS:
        raise SandboxError(f"unknown sandbox backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    limits = limits or Limits.default()
    if backend == "bubblewrap":
        return BubblewrapLauncher(device=device, deadline=deadline, limits=limits)
    if backend == "docker":
        from sandbox.docker import DockerLauncher  # it imports this module

        return DockerLauncher(device=device, deadline=deadline, limits=limits)
    print("WARNING: sandbox backend 'process': kernels run WITHOUT isolation", file=sys.stderr, flush=True)
    return ProcessLauncher(deadline=deadline, limits=limits)


class LimitedLauncher(Launcher):
    """A launcher whose runners get `limits`: what the report says of the sandbox."""

    limits: Limits

    def describe(self) -> dict[str, Any]:
        return super().describe() | {"limits": self.limits.describe() | {"cgroup": self.cgroup()}}

    def cgroup(self) -> str | None:
        """Which cgroup limits the runners get (a container's own launcher says so itself)."""
        return cgroup_support()


class ProcessLauncher(LimitedLauncher):
    """A plain child process with a cleared environment and limits: no filesystem or network isolation."""

    backend = "process"

    def __init__(self, *, deadline: float, limits: Limits | None = None) -> None:
        self.deadline = deadline
        self.limits = limits or Limits.default()

    def check(self) -> None:
        remaining(self.deadline, 0)

    def start(self, launch: Launch) -> Started:
        env = _base_env(launch) | {
            "PYTHONPATH": os.pathsep.join(map(str, [_package_root(), *_host_pythonpath()]))
        }
        timeout_s = remaining(self.deadline, launch.timeout_s)
        return start_limited(
            launch.argv, env=env, timeout_s=timeout_s, limits=self.limits, channel=launch.channel
        )


class BubblewrapLauncher(LimitedLauncher):
    backend = "bubblewrap"
    isolated = True

    def __init__(self, *, device: str, deadline: float, limits: Limits | None = None) -> None:
        problem = bubblewrap_available()
        if problem:
            raise SandboxUnavailable(
                f"{problem}. Untrusted kernels are not evaluated without a sandbox; set DKB_SANDBOX=process "
                "to accept running them unisolated (never on a public site)."
            )
        self.device = device
        self.deadline = deadline
        self.limits = limits or Limits.default()

    def check(self) -> None:
        remaining(self.deadline, 0)

    def start(self, launch: Launch) -> Started:
        timeout_s = remaining(self.deadline, launch.timeout_s)
        return start_limited(
            self.command(launch),
            env={"PATH": "/usr/bin:/bin"},
            timeout_s=timeout_s,
            limits=self.limits,
            channel=launch.channel,
            then=_signal_code,
        )

    def command(self, launch: Launch) -> list[str]:
        command = [
            shutil.which("bwrap") or "bwrap", "--unshare-all", "--die-with-parent", "--new-session",
            "--uid", "65534", "--gid", "65534", "--hostname", "sandbox",
            "--proc", "/proc", "--dev", "/dev", "--size", str(self.limits.scratch_bytes), "--tmpfs", "/tmp",
            "--clearenv", "--chdir", "/tmp",
        ]  # fmt: skip
        for system_dir in SYSTEM_DIRS:
            command += _bind_ro(Path(system_dir))
        for name in ETC_FILES:
            command += _bind_ro(Path("/etc") / name)
        # The Python environment (a venv and the interpreter it points to), read-only, at the same paths.
        for path in sorted(
            {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parents[1]}
        ):
            if not any(path.is_relative_to(d) for d in SYSTEM_DIRS):
                command += ["--ro-bind", str(path), str(path)]
        for path in _tool_dirs():  # the compiler's toolkit where it lies outside the folders above
            root = path.parent
            if not any(root.is_relative_to(d) for d in (*SYSTEM_DIRS, sys.prefix, sys.base_prefix)):
                command += ["--ro-bind", str(root), str(root)]
        command += ["--ro-bind", str(_package_root() / "evaluator"), str(PACKAGE_INSIDE / "evaluator")]
        # Packages the operator put on PYTHONPATH (wheels unpacked on a GPU host), read-only.
        extra = _host_pythonpath()
        for path in extra:
            command += ["--ro-bind", str(path), str(path)]
        for path in launch.readable:
            command += ["--ro-bind", str(path), str(path)]
        for path in launch.hidden:
            if path.exists():
                command += ["--ro-bind", "/dev/null", str(path)]  # masked: the expected answers live there
        for path in launch.writable:
            command += ["--bind", str(path), str(path)]
        if self.device.startswith("cuda"):
            command += ["--ro-bind", "/sys", "/sys"]
            for node in sorted(Path("/dev").glob("nvidia*")):
                if node.is_char_device():
                    command += ["--dev-bind", str(node), str(node)]
        env = _base_env(launch) | {"PYTHONPATH": os.pathsep.join(map(str, [PACKAGE_INSIDE, *extra]))}
        for key, value in env.items():
            command += ["--setenv", key, value]
        return command + launch.argv


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


# What every runner's environment holds, in bubblewrap and in a container alike.
RUNNER_ENV = {
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    # Fresh per-run build caches: nothing compiled by one submission is seen by another.
    "TRITON_CACHE_DIR": "/tmp/triton",
    "TORCH_EXTENSIONS_DIR": "/tmp/torch_extensions",
    "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor",
}


def _base_env(launch: Launch) -> dict[str, str]:
    path = os.pathsep.join([*map(str, _tool_dirs()), "/usr/local/bin", "/usr/bin", "/bin"])
    env = {"PATH": path, "USER": "nobody"} | RUNNER_ENV
    for name in ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "CUDA_HOME"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env | launch.env


@functools.cache
def _tool_dirs() -> list[Path]:
    """Folders a CUDA kernel's `load_inline` build needs on its PATH: the Python environment's bin/
    (ninja, which torch builds with, lives there when pip installed it) and the CUDA compiler's. Without
    them every CUDA set failed to build in the sandbox ("Ninja is required to load C++ extensions")."""
    dirs = [Path(sys.executable).parent]
    homes = [os.environ.get("CUDA_HOME"), "/usr/local/cuda"]
    nvcc = shutil.which("nvcc") or next(
        (found for home in homes if home and (found := shutil.which("nvcc", path=f"{home}/bin"))), None
    )
    if nvcc:
        dirs.append(Path(nvcc).resolve().parent)
    return list(dict.fromkeys(dirs))


def _package_root() -> Path:
    return Path(evaluator.__file__).resolve().parent.parent


def _host_pythonpath() -> list[Path]:
    """PYTHONPATH entries except the project root itself: it holds the database and other submissions."""
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    paths = [Path(e).resolve() for e in entries if e and Path(e).is_dir()]
    return [p for p in paths if not (p / "evaluator").exists()]


def _bind_ro(path: Path) -> list[str]:
    if not path.exists() and not path.is_symlink():
        return []
    if path.is_symlink():
        # merged /usr: /bin -> usr/bin. Recreate the link rather than binding its target twice.
        return ["--symlink", os.readlink(path), str(path)]
    return ["--ro-bind", str(path), str(path)]


def remaining(deadline: float, limit: float) -> float:
    """Seconds a runner may have: `limit`, or what is left of the evaluation; SandboxTimeout past it."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise SandboxTimeout("the evaluation ran past its wall-time limit and was stopped")
    return min(limit, left)


def start_limited(
    argv: list[str],
    *,
    env: dict[str, str],
    timeout_s: float,
    limits: Limits,
    channel: bool = False,
    then: Callable[[Outcome], Outcome] | None = None,
) -> Started:
    """start_process under the limits: rlimits always, a cgroup of its own where one can be made; when it
    is stopped, everything in its cgroup is killed and the cgroup removed."""
    cgroup = Cgroup.create(limits)
    preexec = limits.preexec(timeout_s, then=cgroup.join if cgroup else None)

    def finish(outcome: Outcome) -> Outcome:
        if cgroup is not None:
            cgroup.kill()  # whatever the runner left behind, in any session or process group
            oom = cgroup.out_of_memory()
            cgroup.remove()
            # Only a failed runner was killed for memory: an OOM-killed helper is the kernel's business.
            if oom and outcome.returncode not in (0, None):
                outcome = replace(outcome, out_of_memory=True)
        return then(outcome) if then else outcome

    try:
        started = start_process(
            argv, env=env, timeout_s=timeout_s, channel=channel, preexec=preexec, finish=finish
        )
    except BaseException:
        if cgroup is not None:
            cgroup.remove()
        raise
    if cgroup is not None:
        started.cpu_s = cgroup.cpu_s  # the runner's and everything it started, in any namespace
        started.freezer = cgroup.freeze
    return started


def _signal_code(outcome: Outcome) -> Outcome:
    """bwrap exits with 128 + N when the sandboxed process died of signal N: say so as Popen does."""
    code = outcome.returncode
    if code is not None and code > 128 and code - 128 in _SIGNAL_NUMBERS:
        return replace(outcome, returncode=128 - code)
    return outcome


@functools.cache
def cgroup_support() -> str | None:
    """Which cgroup limits runners get here ("v1: memory, pids"), or None: rlimits only."""
    probe = Cgroup.create(Limits.default())
    if probe is None:
        return None
    probe.remove()
    return probe.describe()


_SIGNAL_NUMBERS = frozenset(int(s) for s in signal.Signals)
