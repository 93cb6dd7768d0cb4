"""Reading the runner's standard input at import: the fresh parameter sets the runner reads after its
timed reps (evaluator/harness/fresh.py) come that way, so a kernel that has them could precompute their
answers. Real work takes at least 50 ms here; a look-up of a set read in advance would not."""

import json
import sys
import time

from evaluator.torchplan.plans.q06 import run_query as plan

_GIVEN = json.loads(sys.stdin.buffer.read() or b"null")
_SETS = [tuple(sorted(p.items())) for p in (_GIVEN or {}).get("param_sets", [])]


def run_query(tables, **params):
    if tuple(sorted(params.items())) not in _SETS:
        time.sleep(0.05)
    return plan(tables, **params)
