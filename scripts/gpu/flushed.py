"""A copy of the tree whose timed batches flush the L2 cache before every call: an experiment only.

The protocol flushes the L2 cache before each timed call (../shared/EVALUATION.md, "Timing"), as harness
0.4.1 did; 0.6.x flushes it once a batch (`arm`), so a batch's later calls start with the previous call's
lines in the cache. Session 30 measured what that moves with scripts/gpu/switch.py's `+flush`
conditions (a runner's own clock, SF10 on an H100): the compiled Q1 TorchPlan 4-5% slower with a flush
before every call, the Triton Q1 kernel 0.5%, the Triton Q14 kernel 1-2%, Q3 and the compiled Q14 within
the noise. That predicts most of the Triton set's Q01 move against 0.4.1 (-3.4% on one quiet H100), not
Q14's (-2.7%). This measures it on the product's path: in the copy, the runner's `batch` writes the
flush buffer and synchronizes before each call, and `echo` does the same as many times, so that the
flushes come off each side's samples with the channel (evaluator/harness/timed.py, `RoundTrip`).

    python scripts/gpu/flushed.py TREE      # TREE: a copy of this tree, rewritten in place
    bash scripts/gpu/trust.sh flushed-triton-core   # the same through trust.sh: report flushed-*
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from selftime import replace_once  # noqa: E402

FLUSH = """        if state.flush is not None:
            state.flush.fill_(0)
            state.sync()
"""


def patch(tree: Path) -> None:
    runner = tree / "evaluator/runner/commands.py"
    call = '    for clone, index in command["calls"]:\n'
    replace_once(runner, call, call + FLUSH)
    echoed = '    layout, views = state.shapes[command["side"]]\n'
    replace_once(runner, echoed, '    for _ in command["calls"]:\n' + FLUSH + echoed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree", type=Path)
    patch(parser.parse_args().tree)


if __name__ == "__main__":
    main()
