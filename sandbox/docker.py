"""The container backend: every runner in a fresh container of the evaluator image (production GPU hosts).

`docker run` (or `podman run`: the same flags) with one pinned GPU, no network, a read-only root, a tmpfs
/tmp (where the runner builds), no capabilities, no new privileges, pids / memory / ulimits from `Limits`,
a non-root user, the image pinned by digest and never pulled at run time, and only the data and the
kernel set bound in, read-only (the DuckDB file masked). The container is named, so that after it ends
`inspect` can tell an out-of-memory kill from a crash and a runner's exit status from the engine's own
failure, and so that a runner past its time limit can be killed: killing the `run` client does not stop
its container.
While the baseline is timed the kernel's container is frozen through the engine's cgroup for it, where
the worker sees it (`Cgroup.of`), and its CPU time read there (evaluator/harness/timed.py).

The engine is DKB_CONTAINER_ENGINE (`docker` or `podman`), else podman where it is installed (it needs no
daemon), else docker. The command and how it maps outcomes are tested against a fake `docker`
(tests/sandbox/test_docker.py); the adversarial suite runs on a real podman 4.3 with runc
(tests/sandbox/test_attacks.py, where an engine and the evaluator image are present).
"""

from __future__ import annotations

import functools
import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluator.harness.launch import Launch, Outcome, Started, start_process
from sandbox.cgroup import Cgroup, worker_gone
from sandbox.core import RUNNER_ENV, LimitedLauncher, SandboxError, SandboxUnavailable, remaining
from sandbox.limits import Limits

# Inside the container: the image's own interpreter, with the evaluator package installed in it.
PYTHON = "python"
USER = "65534:65534"  # nobody: not root, and no user of the host's
# RLIMIT_NPROC counts every process of a uid on the host, and every container runs as USER: set at one
# runner's `processes`, one container's fork bomb held at its own --pids-limit stopped every other
# container forking (docs/sandbox.md). Each container's pids cgroup is its process limit; the rlimit,
# shared by all of them, leaves room for this many containers at theirs.
NPROC_CONTAINERS = 16
# By digest (name@sha256:...), or by image id (sha256:..., a local build's own content hash).
PINNED = re.compile(r"([^@\s]+@)?sha256:[0-9a-f]{64}")
ENGINES = ("podman", "docker")  # podman first: a docker client may be installed with no daemon
# `docker run` answers these itself when the container could not be made or its command not started.
DOCKER_FAILURES = (125, 126, 127)
NEVER_STARTED = "0001-01-01T00:00:00Z"
# Each container runner's cgroup, noted while the harness may freeze it (timed.Beside): a frozen container
# never sees that its client is gone, so a worker killed meanwhile would leave it frozen for good, where an
# idle one ends. The next launcher on this host thaws what dead workers left (`_thaw_left`).
CGROUP_NOTES = Path(tempfile.gettempdir()) / "dkb-container-cgroups"


class DockerLauncher(LimitedLauncher):
    backend = "docker"
    isolated = True

    def __init__(
        self,
        *,
        device: str,
        deadline: float,
        limits: Limits | None = None,
        image: str | None = None,
        gpu: str | None = None,
    ) -> None:
        self.image = image or os.environ.get("DKB_EVALUATOR_IMAGE", "")
        if not PINNED.fullmatch(self.image):
            raise SandboxUnavailable(
                f"the docker backend needs the evaluator image pinned by digest (image@sha256:<64 hex>, or "
                f"its id sha256:<64 hex>) in "
                f"DKB_EVALUATOR_IMAGE, got {self.image!r}"
            )
        self.docker = _engine()
        self.device = device
        self.gpu = gpu or os.environ.get("DKB_DOCKER_GPU", "0")
        self.deadline = deadline
        self.limits = limits or Limits.default()
        self._thawed_left = False

    def check(self) -> None:
        remaining(self.deadline, 0)

    def cgroup(self) -> str:
        return "docker"  # the engine puts each container in a cgroup of its own

    def start(self, launch: Launch) -> Started:
        if not self._thawed_left:
            self._thawed_left = True
            _thaw_left()
        name = f"dkb-runner-{os.getpid()}-{secrets.token_hex(4)}"
        timeout_s = remaining(self.deadline, launch.timeout_s)
        for path in launch.writable:
            _writable_by_the_container(path)

        def finish(outcome: Outcome) -> Outcome:
            try:
                if outcome.returncode is None:
                    self._docker("kill", name)  # the client is gone; its container is not
                    return outcome
                state = self._state(name)
                code = outcome.returncode
                if code in DOCKER_FAILURES and not _ran(state):
                    raise SandboxError(
                        f"docker could not run the image (status {code}): {outcome.log[-500:]}"
                    )
                if code != 0 and state.get("OOMKilled"):
                    return replace(outcome, out_of_memory=True)
                if code > 128:
                    # --init's exit status for a runner killed by signal N is 128 + N: say so as Popen does.
                    return replace(outcome, returncode=128 - code)
                if code < 0:  # the client was stopped (the harness was done with it): its container too
                    self._docker("kill", name)
                return outcome
            finally:
                self._docker("rm", "--force", name)
                (CGROUP_NOTES / name).unlink(missing_ok=True)

        started = start_process(
            self.command(launch, name),
            env=self._client_env(),
            timeout_s=timeout_s,
            channel=launch.channel,
            finish=finish,
        )
        cgroup = self._cgroup(name)
        started.cpu_s = lambda: group.cpu_s() if (group := cgroup()) else None
        started.freezer = lambda frozen: group.freeze(frozen) if (group := cgroup()) else None
        return started

    def _cgroup(self, name: str) -> Callable[[], Cgroup | None]:
        """The container's cgroup, looked up the first time it is asked for (the harness asks while it
        times the baseline: the runner has answered, its container runs). The engine made it; the worker
        reads and freezes it where it sees the engine's cgroups (root, on the host), else None."""

        @functools.cache
        def find() -> Cgroup | None:
            try:
                done = self._docker("inspect", "--format", "{{.State.Pid}} {{.Id}}", name)
            except (OSError, subprocess.SubprocessError):
                return None
            fields = done.stdout.split()
            if done.returncode != 0 or len(fields) != 2 or not fields[0].isdigit() or fields[0] == "0":
                return None
            group = Cgroup.of(int(fields[0]), fields[1])
            if group is not None:
                CGROUP_NOTES.mkdir(mode=0o700, exist_ok=True)
                noted = {"version": group.version, "dirs": {k: str(v) for k, v in group.dirs.items()}}
                (CGROUP_NOTES / name).write_text(json.dumps(noted))
            return group

        return find

    def command(self, launch: Launch, name: str) -> list[str]:
        limits = self.limits
        cpu = limits.cpu_seconds(launch.timeout_s)
        nproc = limits.processes * NPROC_CONTAINERS
        command = [
            str(self.docker), "run", "--name", name, "--pull", "never", "--init",
            "--network", "none", "--read-only", "--cap-drop", "ALL",
            "--security-opt", "no-new-privileges", "--user", USER, "--hostname", "sandbox",
            "--pids-limit", str(limits.processes),
            "--memory", str(limits.memory_bytes), "--memory-swap", str(limits.memory_bytes),
            "--ulimit", "core=0", "--ulimit", f"nofile={limits.open_files}:{limits.open_files}",
            # Explicit: podman's own default (the kernel's maximum) may be above the host's hard limit,
            # which runc then cannot set ("error setting rlimit type 6").
            "--ulimit", f"nproc={nproc}:{nproc}",
            "--ulimit", f"cpu={cpu}:{cpu + 5}",
            "--ulimit", f"data={limits.memory_bytes}:{limits.memory_bytes}",
            # exec: Triton loads the launchers it compiles from its cache under /tmp.
            "--tmpfs", f"/tmp:rw,nosuid,nodev,exec,mode=1777,size={limits.scratch_bytes}",
            "--workdir", "/tmp",
        ]  # fmt: skip
        if launch.stdin or launch.channel:
            command.append("--interactive")  # the client passes its standard input on only when asked
        if self.device.startswith("cuda"):
            if Path(self.docker).name == "podman":  # the GPU as a CDI device (nvidia-ctk cdi generate)
                command += ["--device", f"nvidia.com/gpu={self.gpu}"]
            else:
                command += ["--gpus", f"device={self.gpu}"]
        for path in launch.readable:
            command += ["--mount", f"type=bind,source={path},target={path},readonly"]
        for path in launch.hidden:
            if path.exists():  # masked: the expected answers live there
                command += ["--mount", f"type=bind,source=/dev/null,target={path},readonly"]
        for path in launch.writable:
            command += ["--mount", f"type=bind,source={path},target={path}"]
        for key, value in sorted(_container_env(launch).items()):
            command += ["--env", f"{key}={value}"]
        return command + [self.image, PYTHON, *launch.argv[1:]]

    def _state(self, name: str) -> dict[str, Any]:
        done = self._docker("inspect", "--format", "{{json .State}}", name)
        try:
            return json.loads(done.stdout) if done.returncode == 0 else {}
        except ValueError:
            return {}

    def _docker(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.docker), *args], env=self._client_env(), capture_output=True, text=True, timeout=60
        )

    @staticmethod
    def _client_env() -> dict[str, str]:
        """The engine client's own environment: how to reach the engine, nothing else of the worker's."""
        names = (
            "PATH",
            "HOME",
            "DOCKER_HOST",
            "DOCKER_CONFIG",
            "DOCKER_CONTEXT",
            "DOCKER_CERT_PATH",
            "DOCKER_TLS_VERIFY",
            "CONTAINERS_CONF",  # podman: e.g. docker/containers.conf (runc, ulimits)
            "CONTAINER_HOST",
            "CONTAINER_CONNECTION",
            "XDG_RUNTIME_DIR",
        )
        return {k: os.environ[k] for k in names if k in os.environ}


def _engine() -> str:
    """The container engine's client: DKB_CONTAINER_ENGINE, else podman, else docker."""
    wanted = os.environ.get("DKB_CONTAINER_ENGINE", "")
    if wanted and wanted not in ENGINES:
        raise SandboxUnavailable(f"DKB_CONTAINER_ENGINE must be one of {', '.join(ENGINES)}, got {wanted!r}")
    for name in [wanted] if wanted else ENGINES:
        found = shutil.which(name)
        if found:
            return found
    raise SandboxUnavailable(
        f"the docker backend needs a container engine's client on PATH ({wanted or 'podman or docker'})"
    )


def _thaw_left() -> None:
    """Thaw the containers whose workers died while they were frozen: they then end as an idle one does
    once its client is gone."""
    for note in CGROUP_NOTES.glob("dkb-runner-*"):
        if not worker_gone(note.name):
            continue
        try:
            noted = json.loads(note.read_text())
            Cgroup(noted["version"], {k: Path(v) for k, v in noted["dirs"].items()}).freeze(False, wait_s=0)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass  # a note that cannot be read thaws nothing; it is dropped all the same
        note.unlink(missing_ok=True)


def _ran(state: dict[str, Any]) -> bool:
    """Whether the container's process started (so its exit status is the runner's, not Docker's)."""
    return bool(state) and not state.get("Error") and state.get("StartedAt", NEVER_STARTED) != NEVER_STARTED


def _container_env(launch: Launch) -> dict[str, str]:
    return RUNNER_ENV | launch.env  # the image's own PATH and user; no host variables


def _writable_by_the_container(path: Path) -> None:
    """A folder a launch may write, and all in it, made the container user's when the worker is root,
    else opened to it (the harness's runners write none: they build in their tmpfs /tmp)."""
    uid, gid = (int(part) for part in USER.split(":"))
    for root, dirs, files in os.walk(path):
        for entry in [Path(root), *(Path(root) / name for name in dirs + files)]:
            if entry.is_symlink():
                continue
            if os.geteuid() == 0:
                os.chown(entry, uid, gid)
            else:
                entry.chmod(entry.stat().st_mode | (0o777 if entry.is_dir() else 0o666))
