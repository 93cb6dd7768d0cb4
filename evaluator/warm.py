"""`python -m evaluator warm`: fill a compile cache for the baselines, in trusted processes.

torch.compile of a TorchPlan costs 1-35 s per query at SF10 on an H200, paid again by every runner.
Here (nothing imports a kernel) each query's baseline is compiled exactly as a runner will: the plan's
`_query_core` under torch.compile, called with the same parameter sets in the same order (the spec's
defaults first, then the seeded random sets), on tables of the same shapes. Each query compiles in a
process of its own, into a folder of its own (`DIR/qNN/inductor`, `DIR/qNN/triton`), so that a runner
started with `Options.compile_cache` copies only its query's artifacts into its private build folder
(evaluator/harness.py): its compiles are cache hits, nothing it writes reaches the shared copy or
another runner, and the copy does not grow with the number of queries warmed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from evaluator.queries import QUERIES


def warm(
    cache_dir: Path, sf_folder: Path, device: str, queries: list[int], trials: int, seed: int, jobs: int = 1
) -> list[str]:
    """Compile each query's baseline into `cache_dir/qNN/`, `jobs` queries at a time; a line per query."""
    cache_dir = Path(cache_dir).resolve()

    def one(number: int) -> str:
        folder = cache_dir / QUERIES[number].slug
        env = os.environ | {"TORCHINDUCTOR_CACHE_DIR": str(folder / "inductor"),
                            "TRITON_CACHE_DIR": str(folder / "triton")}  # fmt: skip
        argv = [
            sys.executable,
            "-m",
            "evaluator.warm",
            str(sf_folder),
            device,
            str(number),
            str(trials),
            str(seed),
        ]
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        lines = done.stdout.strip().splitlines()
        line = lines[-1] if done.returncode == 0 and lines else f"Q{number:02d} failed: {done.stderr[-300:]}"
        print(line, flush=True)
        return line

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, queries))


def _warm_one(sf_folder: Path, device: str, number: int, trials: int, seed: int) -> str:
    """One query's baseline compiled here, into the cache folders this process's environment names."""
    import torch

    from evaluator.kernel_loader import with_core
    from evaluator.tpch.load import load_tables
    from evaluator.validate import parameter_sets

    query = QUERIES[number]
    tables = load_tables(sf_folder, query.columns(), device)
    compiled = with_core(query, torch.compile(query.plan()._query_core))
    started = time.perf_counter()
    try:
        for params in parameter_sets(query, trials - 1, seed):
            compiled(tables, **params)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
    except Exception as exc:  # the runner falls back to eager for such a plan: say so, go on
        return f"Q{number:02d} failed to compile: {type(exc).__name__}: {exc}"[:300]
    return f"Q{number:02d} compiled in {time.perf_counter() - started:.1f} s"


if __name__ == "__main__":
    folder, device_name, query_number, trial_count, seed_value = sys.argv[1:6]
    print(_warm_one(Path(folder), device_name, int(query_number), int(trial_count), int(seed_value)))
