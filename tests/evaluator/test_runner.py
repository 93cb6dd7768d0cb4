"""The runner's own commands, run in a process of their own (evaluator/runner/commands.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

START = """
import json, sys
from evaluator.runner.commands import State, start
answer, _ = start(State(), {"op": "start", "device": "cpu", "query": 6, **json.loads(sys.argv[1])})
print(json.dumps({"device": answer["hardware"]["device"], "dynamo": "torch._dynamo" in sys.modules}))
"""


@pytest.mark.parametrize(("extra", "dynamo"), [({}, False), ({"compile": True, "profiler": True}, True)])
def test_start_imports_what_the_first_compile_needs_only_when_asked(extra: dict, dynamo: bool) -> None:
    """`compile` moves torch.compile's imports into `start`, which the harness runs ahead of the query."""
    done = subprocess.run(
        [sys.executable, "-c", START, json.dumps(extra)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"device": "cpu", "dynamo": dynamo}
