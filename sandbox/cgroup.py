"""A cgroup per runner, where the worker may make one: limits the kernel enforces on every process.

cgroup v2 where the `memory` and `pids` controllers can be delegated from the hierarchy's root (a
worker running as root on the host), else cgroup v1's `memory` and `pids` hierarchies (below the
worker's own cgroup), else none: `Cgroup.create` returns None and the rlimits stand alone
(sandbox/limits.py). The cgroup is also how everything a runner started is found and killed at the end,
whatever session or process group it moved to, and how it is frozen while the baseline is timed
(`Cgroup.freeze`).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import time
from pathlib import Path

from sandbox.limits import Limits

CONTROLLERS = ("memory", "pids")
# Where cgroup v1 has them mounted, the runner's CPU time (`Cgroup.cpu_s`) and its freezer (`Cgroup.freeze`);
# v2 has both in every cgroup.
ACCOUNTING = ("cpuacct", "freezer")
FREEZE_WAIT_S = 1.0
V2_PARENT = "dkb-sandbox"
RUNNER_GROUP = re.compile(r"dkb-runner-(\d+)-[0-9a-f]+")


class Cgroup:
    def __init__(self, version: int, dirs: dict[str, Path]) -> None:
        self.version = version
        self.dirs = dirs  # controller -> the runner's directory for it (one directory on v2)

    @classmethod
    def create(cls, limits: Limits) -> Cgroup | None:
        """A fresh cgroup with the limits set; None where this worker cannot make one."""
        name = f"dkb-runner-{os.getpid()}-{secrets.token_hex(4)}"
        for make in (_create_v2, _create_v1):
            try:
                group = make(name, limits)
            except OSError:
                continue
            if group is not None:
                return group
        return None

    @classmethod
    def of(cls, pid: int, holding: str) -> Cgroup | None:
        """The cgroup that someone else made for process `pid` (a container's engine), to count and
        freeze, never to kill or remove; only where its path names `holding` (the container's id: a pid
        that outlived its container must not lead to anyone else's). None where this worker does not see
        it."""
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except OSError:
            return None
        mounts = _mounts()
        dirs: dict[str, Path] = {}
        for _, controllers, relative in (line.split(":", 2) for line in lines):
            if holding not in relative:
                continue
            for point, kind, options in mounts:
                path = Path(point) / relative.lstrip("/")
                if kind == "cgroup2" and not controllers and (path / "cgroup.freeze").exists():
                    dirs.setdefault("v2", path)
                for name in ACCOUNTING:
                    if kind == "cgroup" and name in controllers.split(",") and name in options:
                        dirs[name] = path
        if "freezer" in dirs:
            return cls(1, {name: dirs[name] for name in ACCOUNTING if name in dirs})
        return cls(2, {"pids": dirs["v2"]}) if "v2" in dirs else None

    def describe(self) -> str:
        return f"v{self.version}: " + ", ".join(sorted(self.dirs))

    def join(self) -> None:
        """Move the calling process into the cgroup: run in the child, between fork and exec."""
        pid = str(os.getpid())
        for path in sorted(set(self.dirs.values())):
            (path / "cgroup.procs").write_text(pid)

    def cpu_s(self) -> float | None:
        """CPU seconds every process of the cgroup has used so far, all their threads; None where this
        cgroup does not count them (v1 without `cpuacct`)."""
        try:
            if self.version == 2:
                for line in (self.dirs["pids"] / "cpu.stat").read_text().splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
            elif "cpuacct" in self.dirs:
                return int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError):
            pass
        return None

    def freeze(self, frozen: bool, wait_s: float = FREEZE_WAIT_S) -> bool | None:
        """Freeze (or thaw) every process of the cgroup, whatever session or namespace it moved to: True
        once all are (freezing waits up to `wait_s` for a task busy in the kernel), False when they were
        not in time, None where this cgroup has no freezer (v1 without `freezer`) or it cannot be written."""
        if self.version == 2:
            path = self.dirs["pids"]
            control, state, value = path / "cgroup.freeze", path / "cgroup.events", str(int(frozen))
            done = f"frozen {value}"
        elif "freezer" in self.dirs:
            control = state = self.dirs["freezer"] / "freezer.state"
            value = done = "FROZEN" if frozen else "THAWED"
        else:
            return None
        try:
            control.write_text(value)
            deadline = time.monotonic() + wait_s
            while done not in state.read_text().splitlines():
                if time.monotonic() > deadline:
                    return False
                time.sleep(50e-6)
            return True
        except OSError:
            return None

    def out_of_memory(self) -> bool:
        """Whether the kernel's OOM killer killed a process of this cgroup at its memory limit."""
        path = self.dirs.get("memory")
        if path is None:
            return False
        events = path / ("memory.events" if self.version == 2 else "memory.oom_control")
        try:
            lines = events.read_text().splitlines()
        except OSError:
            return False
        counts = dict(line.split() for line in lines if len(line.split()) == 2)
        return int(counts.get("oom_kill", "0")) > 0

    def kill(self, wait_s: float = 5.0) -> None:
        """SIGKILL every process still in the cgroup, including ones that left the process group."""
        # A task frozen by cgroup v1 cannot die until it is thawed (v2's die frozen).
        self.freeze(False, wait_s=0)
        kill_file = self.dirs.get("pids", next(iter(self.dirs.values()))) / "cgroup.kill"
        if self.version == 2 and kill_file.exists():
            kill_file.write_text("1")
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            pids = self._pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)

    def remove(self, wait_s: float = 5.0) -> None:
        """Delete the cgroup's directories (empty once its processes are dead and reaped)."""
        deadline = time.monotonic() + wait_s
        for path in sorted(set(self.dirs.values())):
            while True:
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break  # a leftover empty cgroup costs nothing; never fail the evaluation for it
                    time.sleep(0.05)

    def _pids(self) -> set[int]:
        pids: set[int] = set()
        for path in set(self.dirs.values()):
            try:
                pids.update(int(p) for p in (path / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return pids


def worker_gone(name: str) -> bool:
    """Whether the worker that a runner's cgroup or container is named after (`dkb-runner-<its pid>-...`)
    is dead: a killed worker cleans up nothing."""
    match = RUNNER_GROUP.fullmatch(name)
    if match is None:
        return False
    try:
        os.kill(int(match.group(1)), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    return False


def _sweep(parent: Path) -> None:
    """Remove the empty cgroups that runners of a dead worker left (a killed worker cleans up nothing)."""
    for path in parent.glob("dkb-runner-*"):
        if not worker_gone(path.name):
            continue  # its worker is alive: its cgroup is in use
        # A worker killed while its kernel's runner was frozen left it frozen, and under cgroup v1 frozen
        # processes cannot die of the signals sent to them (bubblewrap's --die-with-parent): thawed, they do.
        for control, thawed in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
            with contextlib.suppress(OSError):
                (path / control).write_text(thawed)
        try:
            path.rmdir()  # fails while any process is left in it
        except OSError:
            pass


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, file system type, options) of every cgroup file system this process sees."""
    found = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] in ("cgroup", "cgroup2"):
            found.append((fields[1], fields[2], set(fields[3].split(","))))
    return found


def _create_v2(name: str, limits: Limits) -> Cgroup | None:
    mount = next((Path(point) for point, kind, _ in _mounts() if kind == "cgroup2"), None)
    if mount is None or not set(CONTROLLERS) <= set((mount / "cgroup.controllers").read_text().split()):
        return None
    parent = mount / V2_PARENT
    _enable_controllers(mount)  # the hierarchy's root may hold processes and still delegate
    parent.mkdir(exist_ok=True)
    _enable_controllers(parent)
    _sweep(parent)
    path = parent / name
    path.mkdir()
    try:
        (path / "memory.max").write_text(str(limits.memory_bytes))
        if (path / "memory.swap.max").exists():
            (path / "memory.swap.max").write_text("0")
        (path / "pids.max").write_text(str(limits.processes))
    except OSError:
        path.rmdir()
        raise
    return Cgroup(2, {"memory": path, "pids": path})


def _enable_controllers(path: Path) -> None:
    enabled = set((path / "cgroup.subtree_control").read_text().split())
    missing = [c for c in CONTROLLERS if c not in enabled]
    if missing:
        (path / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in missing))


def _create_v1(name: str, limits: Limits) -> Cgroup | None:
    own: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, relative = line.split(":", 2)
        for controller in controllers.split(","):
            own[controller] = relative
    dirs: dict[str, Path] = {}
    try:
        for point, kind, options in _mounts():
            for controller in CONTROLLERS + ACCOUNTING:
                if kind == "cgroup" and controller in options and controller in own:
                    path = Path(point) / own[controller].lstrip("/") / name
                    if path not in dirs.values():  # controllers mounted together share a directory
                        _sweep(path.parent)
                        path.mkdir()
                    dirs[controller] = path
                    if controller == "memory":
                        (path / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
                        try:  # no swapping past the limit, where swap is accounted
                            (path / "memory.memsw.limit_in_bytes").write_text(str(limits.memory_bytes))
                        except OSError:
                            pass
                    elif controller == "pids":
                        (path / "pids.max").write_text(str(limits.processes))
    except OSError:
        Cgroup(1, dirs).remove(wait_s=0)
        raise
    return Cgroup(1, dirs) if dirs else None
