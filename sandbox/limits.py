"""Hard limits on one untrusted runner: memory, processes, open files, CPU time, no core files.

Two layers (docs/sandbox.md). rlimits are set in every runner, anywhere: RLIMIT_DATA for memory (not
RLIMIT_AS: CUDA reserves terabytes of virtual address space for unified addressing, and RLIMIT_DATA
counts only private writable memory, which those reservations are not), RLIMIT_NPROC, RLIMIT_NOFILE,
RLIMIT_CPU and RLIMIT_CORE = 0. Where the worker may make a cgroup (root on a host with a writable
cgroup v2 or v1 hierarchy), the runner also gets one (sandbox/cgroup.py): a memory limit that counts
every page (shared mappings and tmpfs files too), a process limit that holds even for root, whom
RLIMIT_NPROC exempts, and a way to kill everything the runner started.
"""

from __future__ import annotations

import math
import os
import resource
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

GiB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """What one runner may use. Crossing a limit fails the kernel's query, never the worker."""

    memory_bytes: int  # host memory: RLIMIT_DATA and, with a cgroup, its memory limit
    processes: int  # processes and threads: the cgroup's pids.max and RLIMIT_NPROC
    open_files: int = 4096
    scratch_bytes: int = 4 * GiB  # the private /tmp, with the build folder: a tmpfs (its pages are memory)
    cpu_s: int | None = None  # CPU seconds per process; None: the wall limit times the cores

    @classmethod
    def default(cls) -> Limits:
        """Half the host's memory (at most 64 GiB) and 8 processes per core (at least 256)."""
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return cls(memory_bytes=min(ram // 2, 64 * GiB), processes=max(256, 8 * (os.cpu_count() or 1)))

    def cpu_seconds(self, timeout_s: float) -> int:
        """RLIMIT_CPU: a backstop for a process that outlives its wall limit, never hit before it."""
        if self.cpu_s is not None:
            return self.cpu_s
        return math.ceil(timeout_s) * (os.cpu_count() or 1) + 10

    def rlimits(self, timeout_s: float) -> dict[int, tuple[int, int]]:
        cpu = self.cpu_seconds(timeout_s)
        return {
            resource.RLIMIT_CORE: (0, 0),
            resource.RLIMIT_DATA: (self.memory_bytes, self.memory_bytes),
            resource.RLIMIT_NPROC: (self.processes, self.processes),
            resource.RLIMIT_NOFILE: (self.open_files, self.open_files),
            # SIGXCPU at the soft limit (the runner dies of it: a timeout); SIGKILL later if it is caught.
            resource.RLIMIT_CPU: (cpu, cpu + 5),
        }

    def preexec(self, timeout_s: float, then: Callable[[], None] | None = None) -> Callable[[], None]:
        """A function for the child between fork and exec: set the rlimits, then `then` (join a cgroup)."""
        limits = self.rlimits(timeout_s)

        def apply() -> None:
            if then is not None:
                then()
            for kind, value in limits.items():
                resource.setrlimit(kind, value)

        return apply

    def describe(self) -> dict[str, Any]:
        return asdict(self)
