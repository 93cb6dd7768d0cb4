"""Flooding the harness with output: 256 MiB written to standard output and standard error at import,
which a harness that buffers a runner's output whole must hold in memory. The kernel is the honest plan."""

import os
import sys

from evaluator.torchplan.plans.q06 import run_query  # noqa: F401 - the honest plan

_chunk = b"x" * (1 << 20)
for _ in range(128):
    os.write(1, _chunk)
    os.write(2, _chunk)
sys.stdout.flush()
