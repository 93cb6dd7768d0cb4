"""The composed stack on a real container engine: images built, services started on loopback, a kernel set
uploaded through the API by a new user, evaluated by two CPU workers registered as two hardware (each on
its own queue of the real Redis broker, each taking only its own run), its results read back published;
then a worker container killed mid-run and started again, its run queued again and evaluated to the end.

Needs podman with podman-compose (CONTAINERS_CONF=docker/containers.conf: runc and explicit ulimits) or
docker with its compose plugin; skips, saying which, where neither is installed. The images are built by
scripts/images.sh first (the base and the engine's layer cache make a rebuild take seconds). Each run is
a compose project of its own (its own volumes, a free port), removed at the end, volumes and all.
`make deploy-test` runs it alone.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNEL_SET = ROOT / "examples" / "triton-q06-full"
IMAGES = ("web", "worker", "postgres", "redis")
LEASE_S = 12
SECOND_WORKER = "cpu-second-cpu-worker"  # worker-b's hardware (DKB_HARDWARE_NAME)
# Q6 in SLOW_S per call (answered wrongly): long enough to kill the worker while it runs. Triton admission
# allows datetime, not time.
SLOW_S = 20
SLOW = f"""import datetime


def run_query(tables, **params):
    end = datetime.datetime.now() + datetime.timedelta(seconds={SLOW_S})
    while datetime.datetime.now() < end:
        pass
    return {{}}
"""


def missing_engine() -> str | None:
    """Why the stack cannot run here, or None when it can (scripts/stack.sh picks the engine)."""
    if shutil.which("podman"):
        venv = str(Path(sys.executable).parent)
        if not (shutil.which("podman-compose") or shutil.which("podman-compose", path=venv)):
            return "podman is installed but podman-compose is not (pip install podman-compose)"
        return None
    if shutil.which("docker"):
        if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode != 0:
            return "docker is installed but its compose plugin is not"
        return None
    return "no container engine here (apt-get install podman runc debootstrap, or docker): make deploy-test"


MISSING = missing_engine()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(MISSING is not None, reason=str(MISSING))]


@dataclass
class Stack:
    env: dict[str, str]
    url: str

    def compose(
        self, *args: str, timeout: float = 600, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(ROOT / "scripts" / "stack.sh"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"compose {' '.join(args)}: {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
        return done

    def manage(self, *args: str) -> str:
        """`manage.py ...` in a one-off web container (the running web's settings and database)."""
        return self.compose("run", "--rm", "--no-deps", "web", "python", "manage.py", *args).stdout

    def get(self, path: str, token: str | None = None) -> Any:
        request = urllib.request.Request(
            self.url + path, headers={"Authorization": f"Token {token}"} if token else {}
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.load(answer)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    env = dict(os.environ)
    images = subprocess.run(
        [str(ROOT / "scripts" / "images.sh"), *IMAGES], env=env, capture_output=True, text=True, timeout=3600
    )
    assert images.returncode == 0, images.stdout[-3000:] + images.stderr[-3000:]
    port = free_port()
    env |= {
        "COMPOSE_PROJECT_NAME": f"dkb-test-{os.getpid()}",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "POSTGRES_PASSWORD": secrets.token_urlsafe(16),
        "DKB_BIND": "127.0.0.1",
        "DKB_PORT": str(port),
        "DKB_EVAL_TIMEOUT_S": "600",
        "COMPOSE_PROFILES": "cpu-b",  # a second CPU worker on a queue of its own
        # A killed worker's run is queued again within a minute or two, not the production 10-12.
        "DKB_WORKER_LEASE_S": str(LEASE_S),
        "DKB_RECLAIM_EVERY_MIN": "1",
    }
    stack = Stack(env=env, url=f"http://127.0.0.1:{port}")
    try:
        stack.compose("up", timeout=900)
        wait_for(lambda: stack.get("/api/hardware/") is not None, timeout=300, what="the web server")
        yield stack
    finally:
        logs = stack.compose("logs", "--tail", "80", timeout=120, check=False)
        print(logs.stdout[-20000:], logs.stderr[-5000:])
        stack.compose("down", "--volumes", "--timeout", "10", timeout=300, check=False)


def wait_for(ready: Any, *, timeout: float, what: str) -> Any:
    end = time.monotonic() + timeout
    while True:
        try:
            value = ready()
            if value:
                return value
        except OSError:
            pass
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not ready after {timeout:.0f} s")
        time.sleep(2)


@pytest.fixture(scope="module")
def token(stack: Stack) -> str:
    """The API token of a new user, "deployer", once both workers have registered their hardware."""
    wait_for(
        lambda: len(stack.get("/api/hardware/")["results"]) == 2, timeout=300, what="both workers' hardware"
    )
    made = stack.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from leaderboard import services; "
        "u = User.objects.create_user('deployer', 'deployer@example.org', 'x' * 20); "
        "print('token', services.api_token_rotate(user=u).key)",
    )
    found = re.search(r"token ([0-9a-f]{40})", made)  # the engine may add its own lines (and \r) around it
    assert found, made
    return found.group(1)


def test_an_api_upload_is_evaluated_by_each_hardwares_worker_and_its_result_published(
    stack: Stack, token: str
) -> None:
    hardware = {h["slug"]: h for h in stack.get("/api/hardware/")["results"]}
    assert {h["device"] for h in hardware.values()} == {"cpu"} and SECOND_WORKER in hardware

    submit = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaluator",
            "submit",
            str(KERNEL_SET),
            "--server",
            stack.url,
            "--token",
            token,
            "--publish",
            "--poll",
            "3",
            "--wait",
            "900",
        ],
        capture_output=True,
        text=True,
        timeout=1000,
        cwd=ROOT,
    )
    assert submit.returncode == 0, submit.stdout[-3000:] + submit.stderr[-3000:]

    sets = stack.get("/api/submissions/?uploader=deployer&published=true")["results"]
    assert len(sets) == 1
    # One ranked run per active hardware, each evaluated, Q6 passed.
    runs = stack.get(f"/api/runs/?submission={sets[0]['id']}")["results"]
    assert sorted(run["status"] for run in runs) == ["succeeded", "succeeded"]
    for run in runs:
        results = stack.get(f"/api/results/?run={run['id']}&query=6")["results"]
        assert [result["status"] for result in results] == ["passed"]
        # Published: anyone reads the run's report, no token needed; the worker evaluated it in bubblewrap.
        report = stack.get(f"/api/runs/{run['id']}/")["report"]
        assert report["sandbox"]["backend"] == "bubblewrap" and report["sandbox"]["isolated"]
        assert [q["status"] for q in report["queries"] if q["query"] == 6] == ["passed"]

    # Routing on the real Redis broker: each worker took its own hardware's run and not the other's.
    by_worker = {service: stack.compose("logs", service).stdout for service in ("worker", "worker-b")}
    for run in runs:
        mine = "worker-b" if run["hardware"] == SECOND_WORKER else "worker"
        theirs = "worker" if mine == "worker-b" else "worker-b"
        task = f"evaluate-run-{run['id']}"
        assert task in by_worker[mine] and task not in by_worker[theirs], (run, by_worker)


def test_a_worker_container_killed_mid_run_has_its_run_evaluated_to_the_end_once_it_runs_again(
    stack: Stack, token: str, tmp_path: Path
) -> None:
    kernels = tmp_path / "slow-q06"
    kernels.mkdir()
    shutil.copy(KERNEL_SET / "manifest.json", kernels)
    (kernels / "q06.py").write_text(SLOW)
    upload = subprocess.run(
        [sys.executable, "-m", "evaluator", "submit", str(kernels), "--server", stack.url, "--token", token]
        + ["--kind", "feedback", "--no-wait"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    found = re.search(r"submission #(\d+)", upload.stdout)
    assert upload.returncode == 0 and found, upload.stdout[-3000:] + upload.stderr[-3000:]
    runs = stack.get(f"/api/runs/?submission={found.group(1)}", token)["results"]
    (killed,) = [run["id"] for run in runs if run["hardware"] != SECOND_WORKER]
    (other,) = [run["id"] for run in runs if run["hardware"] == SECOND_WORKER]

    def run(run_id: int) -> Any:
        return stack.get(f"/api/runs/{run_id}/", token)

    def in_q6() -> bool:
        progress = run(killed)["progress"] or {}
        return progress.get("query") == 6 and progress.get("phase") == "started"

    wait_for(in_q6, timeout=300, what="the worker at Q6")
    time.sleep(5)  # its runner started: killed mid-query
    stack.compose("kill", "worker", timeout=120)
    assert run(killed)["status"] == "running"
    stack.compose("start", "worker", timeout=120)

    # The lease runs out, the reclaim (every minute) queues it again, the worker started again evaluates it.
    done = wait_for(lambda: run(killed)["final"] and run(killed), timeout=420, what="the killed run")
    assert (done["status"], done["attempts"]) == ("succeeded", 2), done
    (lost,) = done["lost_attempts"]
    assert lost["attempt"] == 1 and "lost: no lease renewal" in lost["reason"]
    assert [q["status"] for q in done["report"]["queries"]] == ["wrong_answer"]
    # The other worker's run went on undisturbed, once.
    untouched = wait_for(lambda: run(other)["final"] and run(other), timeout=300, what="worker-b's run")
    assert (untouched["status"], untouched["attempts"], untouched["lost_attempts"]) == ("succeeded", 1, [])
