"""The docker backend against a fake engine (tests/sandbox/fake_docker.py): no Docker engine runs here.

What is tested is the `docker run` command the launcher builds and how it reads each way a container
can end; that a real engine enforces those flags is Docker's promise, not something tested here.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

import sandbox
from evaluator.evaluation import Job, evaluate
from evaluator.harness.launch import Launch
from evaluator.harness.launch import death as _death
from evaluator.report import Status
from sandbox.docker import DockerLauncher
from sandbox.limits import GiB, Limits

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "registry.example.org/dkb-evaluator@sha256:" + "0123456789abcdef" * 4
LIMITS = Limits(memory_bytes=8 * GiB, processes=512, open_files=1024, scratch_bytes=2 * GiB, cpu_s=600)


class FakeDocker:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def play(self, mode: str) -> None:
        (self.folder / "mode").write_text(mode)

    @property
    def calls(self) -> list[list[str]]:
        path = self.folder / "calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def docker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeDocker:
    folder = tmp_path / "fake-docker"
    folder.mkdir()
    script = folder / "docker"
    script.write_text(f"#!{sys.executable}\n" + (Path(__file__).parent / "fake_docker.py").read_text())
    script.chmod(0o755)
    (folder / "pythonpath").write_text(str(ROOT))
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DKB_CONTAINER_ENGINE", "docker")  # the fake, not a real podman installed here
    fake = FakeDocker(folder)
    fake.play("exit:0")
    return fake


def launcher(device: str = "cuda", **kw) -> DockerLauncher:
    return DockerLauncher(device=device, deadline=time.monotonic() + 600, limits=LIMITS, image=IMAGE, **kw)


def runner_launch(tmp_path: Path, timeout_s: float = 60) -> Launch:
    data, kernels, out = (tmp_path / name for name in ("sf1", "kernels", "out"))
    for folder in (data, kernels, out):
        folder.mkdir(exist_ok=True)
    (data / "tpch.duckdb").write_bytes(b"answers")
    return Launch(
        argv=[sys.executable, "-m", "evaluator.runner.commands", str(out / "request.json")],
        readable=[data, kernels],
        writable=[out],
        hidden=[data / "tpch.duckdb"],
        env={"TRITON_INTERPRET": "1"},
        timeout_s=timeout_s,
    )


def options(command: list[str]) -> list[tuple[str, str]]:
    """(flag, value) pairs of `docker run`, up to the image."""
    image = command.index(IMAGE)
    return [
        (command[i], command[i + 1])
        for i in range(2, image)
        if command[i].startswith("--") and i + 1 < image and not command[i + 1].startswith("--")
    ]


def test_the_run_command_pins_one_gpu_the_image_and_every_limit(docker: FakeDocker, tmp_path: Path) -> None:
    launch = runner_launch(tmp_path)
    command = launcher(gpu="3").command(launch, "dkb-runner-1")
    flags = options(command)
    assert command[1:3] == ["run", "--name"]
    for pair in [
        ("--gpus", "device=3"),
        ("--network", "none"),
        ("--cap-drop", "ALL"),
        ("--security-opt", "no-new-privileges"),
        ("--user", "65534:65534"),
        ("--pull", "never"),
        ("--pids-limit", "512"),  # the container's own process limit
        ("--ulimit", "nproc=8192:8192"),  # counted over every container's processes: room for 16
        ("--memory", str(8 * GiB)),
        ("--memory-swap", str(8 * GiB)),  # no swap beyond the memory limit
        ("--ulimit", "core=0"),
        ("--ulimit", "nofile=1024:1024"),
        ("--ulimit", "cpu=600:605"),
        ("--tmpfs", f"/tmp:rw,nosuid,nodev,exec,mode=1777,size={2 * GiB}"),
    ]:
        assert pair in flags, pair
    assert "--read-only" in command and "--init" in command and "--privileged" not in command
    assert "--interactive" not in command  # nothing to read on its standard input
    with_input = launcher(gpu="3").command(replace(launch, stdin=b"{}"), "dkb-runner-1")
    assert with_input[: with_input.index(IMAGE)].count("--interactive") == 1  # else docker drops stdin
    mounts = [value for flag, value in flags if flag == "--mount"]
    data, kernels, out = (tmp_path / name for name in ("sf1", "kernels", "out"))
    assert mounts == [
        f"type=bind,source={data},target={data},readonly",
        f"type=bind,source={kernels},target={kernels},readonly",
        f"type=bind,source=/dev/null,target={data / 'tpch.duckdb'},readonly",  # the answers, masked
        f"type=bind,source={out},target={out}",  # the runner's own scratch: the one writable place
    ]
    assert command[command.index(IMAGE) :] == [
        IMAGE,
        "python",
        "-m",
        "evaluator.runner.commands",
        str(out / "request.json"),
    ]


def test_the_container_gets_no_gpu_on_a_cpu_and_none_of_the_workers_environment(
    docker: FakeDocker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://secret@db/dkb")
    command = launcher(device="cpu").command(runner_launch(tmp_path), "dkb-runner-1")
    assert "--gpus" not in command
    env = dict(value.split("=", 1) for flag, value in options(command) if flag == "--env")
    assert env["TRITON_INTERPRET"] == "1" and env["HOME"] == "/tmp"
    assert not any("secret" in part or "DATABASE" in part for part in command)


@pytest.mark.parametrize("image", ["dkb-evaluator:latest", "dkb-evaluator@sha256:abc", ""])
def test_an_image_not_pinned_by_digest_is_refused(image: str, docker: FakeDocker) -> None:
    with pytest.raises(sandbox.SandboxUnavailable, match="pinned by digest"):
        DockerLauncher(device="cuda", deadline=time.monotonic() + 60, image=image)


def test_without_a_docker_client_the_backend_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(sandbox.SandboxUnavailable, match="container engine's client"):
        launcher()


def test_podman_is_used_where_asked_with_the_gpu_as_a_cdi_device(
    docker: FakeDocker, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    podman = docker.folder / "podman"
    podman.symlink_to(docker.folder / "docker")
    monkeypatch.setenv("DKB_CONTAINER_ENGINE", "podman")
    command = launcher().command(runner_launch(tmp_path), "dkb-runner-test")
    assert command[:2] == [str(podman), "run"]
    assert ("--device", "nvidia.com/gpu=0") in options(command) and "--gpus" not in command


def test_an_image_id_counts_as_pinned(docker: FakeDocker) -> None:
    image = "sha256:" + "0123456789abcdef" * 4
    assert DockerLauncher(device="cpu", deadline=time.monotonic() + 60, image=image).image == image


@pytest.mark.parametrize(
    ("mode", "returncode", "out_of_memory", "status"),
    [
        ("exit:0", 0, False, None),
        ("exit:1", 1, False, Status.RUNTIME_ERROR),
        ("oom", 137, True, Status.OUT_OF_MEMORY),  # docker inspect: OOMKilled
        ("exit:139", -signal.SIGSEGV, False, Status.CRASHED),  # --init: 128 + SIGSEGV
        ("exit:134", -signal.SIGABRT, False, Status.CRASHED),
        ("exit:125", 125, False, Status.RUNTIME_ERROR),  # the runner's own 125: the container ran
    ],
)
def test_each_way_a_container_ends_is_read_and_the_container_removed(
    mode: str, returncode: int, out_of_memory: bool, status: str | None, docker: FakeDocker, tmp_path: Path
) -> None:
    docker.play(mode)
    outcome = launcher()(runner_launch(tmp_path))
    assert (outcome.returncode, outcome.out_of_memory) == (returncode, out_of_memory)
    if status and not out_of_memory:
        assert _death(outcome.returncode, outcome.log)[0] == status
    run, inspect, remove = docker.calls
    name = run[run.index("--name") + 1]
    assert inspect == ["inspect", "--format", "{{json .State}}", name]
    assert remove == ["rm", "--force", name]


def test_the_runners_scratch_and_its_build_folders_become_the_container_users(
    docker: FakeDocker, tmp_path: Path
) -> None:
    launch = runner_launch(tmp_path)
    build = tmp_path / "out" / "build" / "triton"
    build.mkdir(parents=True)
    (build / "cached.so").write_bytes(b"")
    launcher()(launch)
    for path in (tmp_path / "out", build, build / "cached.so"):
        if os.geteuid() == 0:
            assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534), path
        else:
            assert path.stat().st_mode & 0o002, path  # writable by anyone, the container's user too


def test_dockers_own_failure_is_ours_to_retry_not_the_kernels(docker: FakeDocker, tmp_path: Path) -> None:
    docker.play("never-started")
    with pytest.raises(
        sandbox.SandboxError, match="docker could not run the image .status 125.: .*no such device"
    ):
        launcher()(runner_launch(tmp_path))
    assert docker.calls[-1][:2] == ["rm", "--force"]


def test_a_container_past_its_time_limit_is_killed_by_name(docker: FakeDocker, tmp_path: Path) -> None:
    docker.play("hang")
    started = time.monotonic()
    outcome = launcher()(runner_launch(tmp_path, timeout_s=2))
    assert outcome.returncode is None and time.monotonic() - started < 30
    run, kill, remove = docker.calls
    name = run[run.index("--name") + 1]
    assert (kill, remove) == (["kill", name], ["rm", "--force", name])
    assert not any((docker.folder / "state").iterdir())


def test_a_set_is_evaluated_through_the_docker_backend(
    docker: FakeDocker, tpch_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docker.play("exec")  # the fake runs each container's command here, unisolated
    monkeypatch.setenv("DKB_EVALUATOR_IMAGE", IMAGE)
    job = Job(
        kernel_dir=ROOT / "examples" / "triton-q06-full",
        data_dir=tpch_data,
        scale_factor=0.01,
        max_time_per_query_s=0.3,
        trials=2,
        queries=(6,),
    )
    report = evaluate(job, backend="docker", limits=LIMITS)
    assert report["sandbox"]["backend"] == "docker" and report["sandbox"]["limits"]["cgroup"] == "docker"
    (q06,) = report["queries"]
    assert q06["status"] == Status.PASSED, q06["reason"]
    assert len(q06["stats"]["fresh"]["kernel"]["ms"]) == 6  # the fresh sets reached it on stdin
    runs = [call for call in docker.calls if call[0] == "run"]
    assert runs and all("--gpus" not in call and IMAGE in call for call in runs)
    duckdb = tpch_data / "sf0.01" / "tpch.duckdb"
    assert all(f"type=bind,source=/dev/null,target={duckdb},readonly" in call for call in runs)
