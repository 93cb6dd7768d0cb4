"""`python -m evaluator warm`: fill a compile cache for the baselines, in a trusted process.

torch.compile of a TorchPlan costs 1-18 s per query at SF10 on an H200, paid again by every runner.
This process (it imports no kernel) compiles each query's baseline exactly as a runner will: the plan's
`_query_core` under torch.compile, called with the same parameter sets in the same order (the spec's
defaults first, then the seeded random sets), on tables of the same shapes. Runners started with
`Options.compile_cache` then begin from a private copy of the cache (evaluator/harness.py), so their
compiles are cache hits, and nothing a runner writes reaches the shared copy or another runner.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from evaluator.queries import QUERIES


def warm(
    cache_dir: Path, sf_folder: Path, device: str, queries: list[int], trials: int, seed: int
) -> list[str]:
    """Compile every query's baseline into `cache_dir` (its `inductor/` and `triton/` folders)."""
    cache_dir = Path(cache_dir).resolve()
    # Before torch compiles anything: inductor reads these when it first needs a directory.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir / "inductor")
    os.environ["TRITON_CACHE_DIR"] = str(cache_dir / "triton")
    import torch

    from evaluator.kernel_loader import with_core
    from evaluator.tpch.load import load_tables
    from evaluator.validate import parameter_sets

    lines = []
    for number in queries:
        query = QUERIES[number]
        tables = load_tables(sf_folder, query.columns(), device)
        compiled = with_core(query, torch.compile(query.plan()._query_core))
        started = time.perf_counter()
        try:
            for params in parameter_sets(query, trials - 1, seed):
                compiled(tables, **params)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            lines.append(f"Q{number:02d} compiled in {time.perf_counter() - started:.1f} s")
        except Exception as exc:  # the runner falls back to eager for such a plan: say so, go on
            lines.append(f"Q{number:02d} failed to compile: {type(exc).__name__}: {exc}"[:300])
        print(lines[-1], flush=True)
        del tables, compiled
        torch._dynamo.reset()
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    return lines
