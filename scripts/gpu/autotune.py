"""Whether the compiled baseline's speed depends on what ran beside its compile.

torch.compile's reduction kernels come with several configurations, and the first call times each on the
device and keeps the fastest (its choice is cached beside the kernel, `*.best_config`). A choice timed
while other work shared the device or the host may be the wrong one, for every later call of that
process and of every process that copies the cache. Harness 0.6.x compiles a baseline cold in each
evaluation unless the calibration's cache exists (evaluator/harness/baselines.py), and its first call
is the timing's warm-up, beside the kernel's runner and the next query's.

Each run is a fresh process with a fresh compile cache: the query's tables and pool loaded, its plan
compiled by its first calls while a neighbour runs (`--beside`: none; gpu, a process summing a 2 GB
tensor in a loop; cpu, a spinning process on every core, as a CUDA set's nvcc build does), the
neighbour stopped, then the compiled plan timed in this quiet process (evaluator/timing.py), and the
configurations it chose read from its cache. A last run per query reuses the first quiet run's cache.

    python scripts/gpu/autotune.py SF_FOLDER [--queries 14,6] [--runs 2] [--beside none,gpu,cpu] [--out F]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from host import load  # noqa: E402

CHILD = r"""
import json, os, sys, time
from dataclasses import replace
from pathlib import Path
import torch
from evaluator.queries import QUERIES
from evaluator.timing import TimingPolicy, time_rotated
from evaluator.tpch.load import load_tables

folder, number, seconds = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
query, device = QUERIES[number], torch.device(sys.argv[4])
tables = load_tables(folder, query.columns(), device)
params = query.parameter_sets(4, 20261202)
pool = [tables.clone() for _ in range(4)]
fn = query.with_core(torch.compile(query.plan()._query_core))
torch.cuda.synchronize() if device.type == "cuda" else None
print("ready", flush=True)
sys.stdin.readline()
started = time.perf_counter()
for rep, one in enumerate(params):
    fn(pool[rep % len(pool)], **one)
torch.cuda.synchronize() if device.type == "cuda" else None
compile_s = time.perf_counter() - started
print("compiled", flush=True)
sys.stdin.readline()
policy = replace(TimingPolicy.for_device(device.type, seconds), batch_ms=0.0)
stats = time_rotated({"c": lambda rep: fn(pool[rep % len(pool)], **params[rep % len(params)])},
                     device=device, policy=policy, strata=len(params))["c"]
cache = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])
configs = {p.stem[:12]: json.loads(p.read_text()) for p in sorted(cache.rglob("*.best_config"))}
print(json.dumps({"compile_s": round(compile_s, 2), "median_ms": stats.median_ms, "min_ms": stats.min_ms,
                  "n": stats.n, "configs": configs}), flush=True)
"""

GPU = """
import torch
x = torch.ones(1 << 28, dtype=torch.float64, device="cuda")
while True:
    x.sum().item()
"""
SPIN = "while True: pass"


def neighbour(kind: str) -> AbstractContextManager[None]:
    spinners = [[sys.executable, "-c", SPIN]] * (os.cpu_count() or 1)
    return load({"none": [], "gpu": [[sys.executable, "-c", GPU]], "cpu": spinners}[kind])


def one_run(folder: Path, number: int, beside: str, cache: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = os.environ | {
        "TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"),
        "TRITON_CACHE_DIR": str(cache / "triton"),
        "TORCH_COMPILE_JOB_ID": f"dkb-autotune-q{number}",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    argv = [sys.executable, "-c", CHILD, str(folder), str(number), str(args.seconds), args.device]
    child = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin and child.stdout
    assert child.stdout.readline().strip() == "ready"
    with neighbour(beside):
        if beside != "none":
            time.sleep(1.0)  # with `load`'s second, the neighbour's own start-up over
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "compiled"
    child.stdin.write("go\n")
    child.stdin.flush()
    row = json.loads(child.stdout.readline())
    child.wait()
    return {"query": number, "beside": beside} | row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sf_folder", type=Path)
    parser.add_argument("--queries", default="14,6")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--beside", default="none,gpu,cpu")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the script (--beside none,cpu)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="dkb-autotune-") as scratch:
        for number in map(int, args.queries.split(",")):
            first_quiet: Path | None = None
            for run in range(args.runs):
                for beside in args.beside.split(","):
                    cache = Path(scratch) / f"q{number}-{beside}-{run}"
                    first_quiet = first_quiet or (cache if beside == "none" else None)
                    rows.append(one_run(args.sf_folder, number, beside, cache, args))
                    print(json.dumps(rows[-1]), flush=True)
            if first_quiet is not None:
                rows.append(one_run(args.sf_folder, number, "none", first_quiet, args) | {"cache": "reused"})
                print(json.dumps(rows[-1]), flush=True)
    print(f"{'query':>5} {'beside':<8} {'compile s':>9} {'median ms':>9} {'min ms':>8}  configs")
    for row in rows:
        chosen = " ".join(
            f"{k}:{v.get('XBLOCK', '')}/{v.get('R0_BLOCK', v.get('RBLOCK', ''))}/{v.get('num_warps', '')}"
            for k, v in row["configs"].items()
        )
        label = row["beside"] + ("*" if row.get("cache") else "")
        print(f"  Q{row['query']:02d} {label:<8} {row['compile_s']:>9.2f} {row['median_ms']:>9.4f} "
              f"{row['min_ms']:>8.4f}  {chosen}")  # fmt: skip
    for number in map(int, args.queries.split(",")):
        for beside in args.beside.split(","):
            medians = [r["median_ms"] for r in rows if r["query"] == number and r["beside"] == beside]
            spread = 100 * (max(medians) / min(medians) - 1)
            last = "the last reuses the first's cache; " if beside == "none" else ""
            print(f"Q{number:02d} compiled beside {beside}: {', '.join(f'{m:.4f}' for m in medians)} ms "
                  f"({last}spread {spread:.1f}%)")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
