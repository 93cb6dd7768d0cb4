"""Does a round's host probe pay for waking the runners' core? The harness's usual probe
(`timing.host_usual`: 0.2 s of probes one after another on the runners' core) against what each
round takes (`timed.round_probe`: one probe right after this thread moves there), and against the
fastest of three in a row, with the thread idle on its own cores between rounds as the harness is
while a runner computes.

    python scripts/gpu/probe.py [--rounds 300] [--idle-ms 5]

On the H200 (a Firecracker microVM) most rounds were set aside as timed on a slowed host, their probes
up to 1.9x the usual (docs/benchmarks.md, session 18).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from evaluator import timing  # noqa: E402
from evaluator.harness import cores as pinning  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--idle-ms", type=float, default=5.0)
    args = parser.parse_args()
    found = pinning.split("cuda")
    runners = found.runners if found else frozenset({max(os.sched_getaffinity(0))})
    with pinning.pinned(runners):
        usual = timing.host_usual(0.2)
    lone, fastest = [], []
    for _ in range(args.rounds):
        time.sleep(args.idle_ms / 1e3)
        with pinning.pinned(runners):
            lone.append(timing.host_probe() / usual)
        time.sleep(args.idle_ms / 1e3)
        with pinning.pinned(runners):
            fastest.append(min(timing.host_probe() for _ in range(3)) / usual)
    line = timing.TimingPolicy().host_slack
    print(f"runners' cores {sorted(runners)}, usual probe {usual * 1e6:.1f} us")
    for name, ratios in (("lone probe", lone), ("fastest of 3", fastest)):
        past = sum(r > line for r in ratios) / len(ratios)
        print(f"{name:>12}: median {statistics.median(ratios):.2f}x the usual, {past:.0%} past {line}x")


if __name__ == "__main__":
    main()
