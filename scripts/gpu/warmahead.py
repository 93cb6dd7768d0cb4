"""Whether the baseline's ahead warm-up (harness 0.6.18) stops where a compile would time configurations
on the device, and only there: each query's compiled baseline runner, as the harness drives it (start,
load, tables, `pool` with warm "ahead", then `warm` where it answered `tune`), twice over one compile
cache folder: first empty (every kernel's configurations untimed: `tune` expected), then filled by the
first, with other parameter sets (a new draw: `tune` only where the draw compiles a graph of its own, as
Q13's words do). Each run in a process of its own, as a runner is.

    python scripts/gpu/warmahead.py SF_FOLDER [--queries 6,1,13] [--out FILE.json] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evaluator.harness.baselines import compile_env  # noqa: E402
from evaluator.queries import QUERIES  # noqa: E402

RUN = """
import json, sys, time
from evaluator.queries import QUERIES
from evaluator.runner import commands as runner
number, folder, seed, device = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
state = runner.State()
runner.start(state, {"op": "start", "device": device, "query": number, "compile": True})
runner.load(state, {"op": "load", "baseline": "compiled"})
runner.tables(state, {"op": "tables", "folder": folder})
params = QUERIES[number].parameter_sets(4, seed)
ahead, _ = runner.pool(state, {"op": "pool", "size": 2, "params": params, "warm": "ahead"})
started = time.perf_counter()
if ahead["tune"]:
    runner.warm(state, {"op": "warm"})
warm_s = round(time.perf_counter() - started, 3)
# The warmed plan's answer to the first set, as a timed call would give it.
result = state.call(state.pool[0], params[0])
state.sync()
print(json.dumps(ahead | {"warm_s": warm_s, "columns": sorted(result)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sf_folder", type=Path)
    parser.add_argument("--queries", default="6,1,13")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--device", default="cuda", help="cpu: to try the script (no configuration is timed)")
    args = parser.parse_args()
    rows = []
    for number in (int(q) for q in args.queries.split(",")):
        with tempfile.TemporaryDirectory(prefix="dkb-warmahead-") as cache:
            env = os.environ | compile_env(Path(cache), QUERIES[number]) | {"PYTHONPATH": _path()}
            for run, seed in (("empty cache", 1), ("its cache, a new draw", 2)):
                argv = [sys.executable, "-c", RUN, str(number), str(args.sf_folder), str(seed), args.device]
                done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=550)
                if done.returncode != 0:
                    row = {"query": number, "run": run, "error": done.stderr[-800:]}
                else:
                    row = {"query": number, "run": run} | json.loads(done.stdout.strip().splitlines()[-1])
                print(json.dumps(row), flush=True)
                rows.append(row)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


def _path() -> str:
    return os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), str(ROOT)) if p)


if __name__ == "__main__":
    main()
