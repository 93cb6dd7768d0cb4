"""Run the evaluator on untrusted kernels in isolation (docs/sandbox.md).

One interface, `evaluate(job, backend=...)`, several backends: `bubblewrap` (the default, any Linux),
`process` (a plain child process with rlimits: weaker, only when chosen explicitly, and the report says
so) and, on production GPU hosts, `docker`. Per-query failures (wrong answers, crashes inside a kernel)
are in the report; a `SandboxError` means the evaluation itself could not be run or finished.
"""

from __future__ import annotations

from sandbox.core import BACKENDS, Job, SandboxError, SandboxTimeout, SandboxUnavailable, evaluate

__all__ = ["BACKENDS", "Job", "SandboxError", "SandboxTimeout", "SandboxUnavailable", "evaluate"]
