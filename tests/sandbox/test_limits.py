"""The hard limits every runner starts under, seen from inside the real sandbox and from the host."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluator.harness.launch import Launch, Launcher, Started
from evaluator.harness.launch import death as _death
from evaluator.report import Status
from sandbox.cgroup import Cgroup
from sandbox.core import BubblewrapLauncher, ProcessLauncher, cgroup_support
from sandbox.limits import GiB, Limits

SMALL = Limits(memory_bytes=2 * GiB, processes=64, open_files=256, cpu_s=60)

RLIMITS = """
import json, resource
names = ("CORE", "DATA", "NPROC", "NOFILE", "CPU", "AS")
print(json.dumps({n: resource.getrlimit(getattr(resource, "RLIMIT_" + n)) for n in names}))
"""


def launch(code: str, tmp_path: Path, timeout_s: float = 60) -> Launch:
    return Launch(
        argv=[sys.executable, "-c", code],
        readable=[],
        writable=[tmp_path],
        hidden=[],
        env={},
        timeout_s=timeout_s,
    )


def bubblewrap(limits: Limits = SMALL) -> BubblewrapLauncher:
    return BubblewrapLauncher(device="cpu", deadline=time.monotonic() + 600, limits=limits)


def test_a_sandboxed_runner_starts_under_its_rlimits(tmp_path: Path) -> None:
    outcome = bubblewrap()(launch(RLIMITS, tmp_path))
    assert outcome.returncode == 0, outcome.log
    seen = json.loads(outcome.log)
    assert seen["CORE"] == [0, 0]
    assert seen["DATA"] == [2 * GiB, 2 * GiB]
    assert seen["NPROC"] == [64, 64]
    assert seen["NOFILE"] == [256, 256]
    assert seen["CPU"] == [60, 65]
    assert seen["AS"] == [resource.RLIM_INFINITY] * 2  # CUDA needs its address space


def test_a_runner_gets_a_cgroup_of_its_own_with_the_limits_and_it_is_removed_afterwards(
    tmp_path: Path,
) -> None:
    assert cgroup_support() is not None, "no cgroup here: memory and process limits rest on rlimits alone"
    code = (
        "import json, pathlib\n"
        "lines = [l.split(':', 2) for l in pathlib.Path('/proc/self/cgroup').read_text().splitlines()]\n"
        "print(json.dumps({c: p for _, cs, p in lines for c in cs.split(',')}))\n"
    )
    outcome = ProcessLauncher(deadline=time.monotonic() + 60, limits=SMALL)(launch(code, tmp_path))
    assert outcome.returncode == 0, outcome.log
    paths = json.loads(outcome.log)
    group = next(p for p in paths.values() if "dkb-runner-" in p)
    found = [d for d in Path("/sys/fs/cgroup").rglob(Path(group).name)]
    assert found == []  # removed once the runner ended


def test_the_cgroup_holds_the_limits_and_kills_what_the_runner_left_behind(tmp_path: Path) -> None:
    group = Cgroup.create(SMALL)
    assert group is not None
    try:
        settings = {}
        names = {
            "memory": "memory.max" if group.version == 2 else "memory.limit_in_bytes",
            "pids": "pids.max",
        }
        for controller, name in names.items():
            settings[controller] = (group.dirs[controller] / name).read_text().strip()
        assert settings == {"memory": str(2 * GiB), "pids": "64"}
        # A process that daemonized itself (a new session: no process-group kill reaches it).
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                group.join()
                os.setsid()
                time.sleep(60)
            finally:
                os._exit(0)
        for _ in range(100):
            if pid in group._pids():
                break
            time.sleep(0.02)
        group.kill()
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    finally:
        group.remove()
    assert not any(path.exists() for path in group.dirs.values())


@pytest.mark.parametrize("sandboxed", [True, False])
def test_the_harness_counts_a_runners_cpu_time_from_outside_it(sandboxed: bool, tmp_path: Path) -> None:
    """Its cgroup's count (every process it started, in any namespace), or a plain child's own
    (evaluator/harness/launch.py): what timed.Beside reads while the baseline is timed."""
    code = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass\ninput()\n"
    launcher = bubblewrap() if sandboxed else Launcher()
    started = launcher.start(launch(code, tmp_path))
    try:
        used = 0.0
        for _ in range(100):  # until it has burnt its half second and waits on its standard input
            time.sleep(0.1)
            before, used = used, started.cpu_s()
            assert used is not None
            if used >= 0.45 and used - before < 0.005:  # 0.45: the kernel's tick is 10 ms
                break
        time.sleep(0.3)
        idle = started.cpu_s()
        assert idle is not None and 0.45 <= used <= idle < used + 0.05  # waiting costs nothing
    finally:
        started.stop()


SPIN_IN_A_NEW_SESSION = """
import os, subprocess, sys
subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
input()
"""


def cpu_over(started: Started, seconds: float) -> float:
    before = started.cpu_s()
    time.sleep(seconds)
    after = started.cpu_s()
    assert before is not None and after is not None
    return (after - before) / seconds


def test_the_harness_freezes_everything_a_runner_started_and_thaws_it(tmp_path: Path) -> None:
    """What timed.Beside does to the kernel's runner while the baseline is timed: its cgroup's freezer
    holds a spinning process that moved to a session of its own, and lets it go again."""
    started = bubblewrap().start(launch(SPIN_IN_A_NEW_SESSION, tmp_path))
    try:
        for _ in range(100):  # until the spinner has started
            if cpu_over(started, 0.1) > 0.5:
                break
        assert started.freeze(True) is True
        assert cpu_over(started, 0.5) < 0.02  # the kernel's tick is 10 ms
        assert started.freeze(False) is True
        assert cpu_over(started, 0.5) > 0.5
        assert started.freeze(True) is True
    finally:
        outcome = started.stop()  # stopped while frozen: it still dies, and nothing is left behind
    assert outcome.returncode is not None and outcome.returncode < 0
    assert list(Path("/sys/fs/cgroup").rglob(f"dkb-runner-{os.getpid()}-*")) == []


def test_a_cgroup_made_by_another_is_found_only_where_its_path_names_what_it_holds(tmp_path: Path) -> None:
    """How the container backend finds a container's cgroup (sandbox/docker.py): from a process in it,
    and only where the path names the container's id, since a pid can outlive its container."""
    started = bubblewrap().start(launch("input()", tmp_path))
    try:
        (path, *_) = Path("/sys/fs/cgroup").rglob(f"dkb-runner-{os.getpid()}-*")
        found = Cgroup.of(started.proc.pid, path.name)
        assert found is not None and found.freeze(True) is True and found.freeze(False) is True
        assert Cgroup.of(started.proc.pid, "dkb-runner-of-someone-else") is None
    finally:
        started.stop()


def test_a_runner_a_dead_worker_left_frozen_is_thawed_so_that_it_dies(tmp_path: Path) -> None:
    """Under cgroup v1 a frozen process cannot die of the signal sent to it: a worker killed while its
    kernel's runner was frozen would leave it frozen for good, but the next runner's cgroup thaws it."""
    group = Cgroup.create(SMALL)
    assert group is not None
    frozen = group.dirs.get("freezer") if group.version == 1 else group.dirs["pids"]
    if frozen is None:
        group.remove()
        pytest.skip("no cgroup freezer here")
    runner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=group.join)
    gone = subprocess.Popen(["true"])
    gone.wait()  # the dead worker's pid
    left = frozen.with_name(f"dkb-runner-{gone.pid}-00000000")
    try:
        assert group.freeze(True) is True
        runner.kill()  # as bubblewrap's --die-with-parent does when its worker dies
        frozen.rename(left)
        Cgroup.create(SMALL).remove()  # the next runner's: it sweeps what dead workers left
        assert runner.wait(timeout=5) == -signal.SIGKILL
    finally:
        thawed = {"freezer" if group.version == 1 else "pids": left if left.exists() else frozen}
        Cgroup(group.version, thawed).freeze(False)  # without the sweep's thaw, nothing else would
        runner.kill()
        runner.wait()
        group.remove()
        for _ in range(100):
            try:
                left.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)
    assert not left.exists()


def test_a_plain_runner_cannot_be_frozen(tmp_path: Path) -> None:
    started = Launcher().start(launch("input()", tmp_path))
    try:
        assert started.freeze(True) is None  # so its CPU time alone is watched (timed.Beside)
    finally:
        started.stop()


def test_a_runner_past_its_cpu_time_is_stopped_and_labelled_a_timeout(tmp_path: Path) -> None:
    limits = Limits(memory_bytes=2 * GiB, processes=64, cpu_s=1)
    started = time.monotonic()
    outcome = bubblewrap(limits)(launch("while True:\n    pass\n", tmp_path, timeout_s=60))
    assert time.monotonic() - started < 30  # its CPU time ran out long before the wall limit
    assert outcome.returncode == -signal.SIGXCPU
    assert _death(outcome.returncode, outcome.log) == (Status.TIMEOUT, "used up its CPU-time limit (SIGXCPU)")


def test_a_sandboxed_runner_killed_by_a_signal_is_reported_as_that_signal(tmp_path: Path) -> None:
    outcome = bubblewrap()(launch("import os, signal\nos.kill(os.getpid(), signal.SIGBUS)\n", tmp_path))
    assert outcome.returncode == -signal.SIGBUS  # not bwrap's 128 + 7
    assert _death(outcome.returncode, outcome.log)[0] == Status.CRASHED


def process_launcher() -> ProcessLauncher:
    return ProcessLauncher(deadline=time.monotonic() + 60, limits=SMALL)


@pytest.mark.parametrize("make", [bubblewrap, process_launcher])
def test_a_runner_allocating_past_its_memory_limit_gets_a_memory_error(make, tmp_path: Path) -> None:
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(64 << 20))\n"
    outcome = make()(launch(code, tmp_path))
    assert outcome.returncode == 1 and "MemoryError" in outcome.log  # RLIMIT_DATA refused the mapping
    assert _death(outcome.returncode, outcome.log) == (Status.OUT_OF_MEMORY, "exited with status 1")


@pytest.mark.parametrize("make", [bubblewrap, process_launcher])
def test_memory_that_rlimit_data_does_not_count_is_stopped_by_the_cgroup(make, tmp_path: Path) -> None:
    # A shared anonymous mapping is not "data": only the cgroup's memory limit sees its pages.
    code = "import mmap\nm = mmap.mmap(-1, 4 << 30)\nfor i in range(0, 4 << 30, 4096):\n    m[i] = 1\n"
    outcome = make()(launch(code, tmp_path))
    assert outcome.out_of_memory, (outcome.returncode, outcome.log)
    assert outcome.returncode == -signal.SIGKILL


@pytest.mark.parametrize("make", [bubblewrap, process_launcher])
def test_a_runner_cannot_start_more_processes_than_its_limit(make, tmp_path: Path) -> None:
    # As root, RLIMIT_NPROC exempts the sandbox (its uid maps onto root's): the cgroup's pids.max holds.
    code = (
        "import os, time\n"
        "for n in range(1000):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "    except OSError as exc:\n"
        "        print('forked', n, exc.strerror)\n"
        "        break\n"
    )
    started = time.monotonic()
    outcome = make()(launch(code, tmp_path, timeout_s=40))
    forked, n, *why = outcome.log.split()
    assert forked == "forked" and 0 < int(n) < 64 and " ".join(why) == "Resource temporarily unavailable"
    if make is bubblewrap:  # its PID namespace ends with it (a plain child's children hold its pipe open)
        assert time.monotonic() - started < 20


def test_the_empty_cgroups_a_killed_worker_left_are_removed_by_the_next_runner() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid no process has now: the worker that made the cgroup is gone
    first = Cgroup.create(SMALL)
    assert first is not None
    stale = [path.parent / f"dkb-runner-{dead.pid}-0badcafe" for path in set(first.dirs.values())]
    for path in stale:
        path.mkdir()
    first.remove()
    second = Cgroup.create(SMALL)
    assert second is not None
    second.remove()
    assert not any(path.exists() for path in stale)
