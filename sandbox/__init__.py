"""Launchers that start untrusted runners in isolation (docs/sandbox.md).

`launcher(backend, ...)` gives one per evaluation: `bubblewrap` (the default, any Linux), `process` (a
plain child process with rlimits: weaker, only when chosen explicitly, and the report says so) and, on
production GPU hosts, `docker`. Evaluations themselves start at `evaluator.evaluation.evaluate`, which
takes a backend's name; a `SandboxError` means the evaluation could not be run or finished (ours).
"""

from __future__ import annotations

from sandbox.core import BACKENDS, SandboxError, SandboxTimeout, SandboxUnavailable, launcher

__all__ = ["BACKENDS", "SandboxError", "SandboxTimeout", "SandboxUnavailable", "launcher"]
