"""`python -m evaluator warm`: fill a compile cache for the baselines, in trusted processes.

torch.compile of a TorchPlan costs 1-35 s per query at SF10 on an H200, paid again by every runner.
Here (nothing imports a kernel) each query's baseline is compiled exactly as a runner will: the plan's
`_query_core` under torch.compile, called with the same parameter sets in the same order (the spec's
defaults first, then the seeded random sets), on tables of the same shapes. Each query compiles in a
process of its own, into a folder of its own (`DIR/qNN/inductor`, `DIR/qNN/triton`), so that a runner
started with `Options.compile_cache` copies only its query's artifacts into its private build folder
(evaluator/harness.py): its compiles are cache hits, nothing it writes reaches the shared copy or
another runner, and the copy does not grow with the number of queries warmed.

Two more things spare each runner time. The compile job's id (`compile_env`) turns on torch's
profile-guided dynamic shapes: the warm step's second parameter set finds the plan's scalars dynamic,
the profile is saved in the cache, and a runner compiles the dynamic graph at once instead of a static
one and then the dynamic one. And the warm step times eager against compiled as a runner's "best"
baseline would (`baseline.json` in the query's folder): a runner given the record times the winner
without probing both again.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from evaluator.queries import QUERIES, Query

RECORD = "baseline.json"  # in a query's folder: eager against compiled, as the warm step timed them


def compile_env(folder: Path, query: Query) -> dict[str, str]:
    """The compile caches in `folder`, and the job id under which torch keeps its dynamic-shape profile
    (without an id it keeps none): the same for the warm step and every runner of the query."""
    return {"TORCHINDUCTOR_CACHE_DIR": str(folder / "inductor"), "TRITON_CACHE_DIR": str(folder / "triton"),
            "TORCH_COMPILE_JOB_ID": f"dkb-{query.slug}"}  # fmt: skip


def recorded_choice(cache_dir: Path, query: Query, sf_folder: Path, device: str, seed: int,
                    trials: int) -> dict | None:  # fmt: skip
    """The warm step's timing of eager against compiled, where it ran on the same data, device,
    seed and number of parameter sets as the caller's; else None (the runner probes for itself)."""
    path = Path(cache_dir) / query.slug / RECORD
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    same = _draw(sf_folder, device, seed, trials)
    return record if all(record.get(k) == v for k, v in same.items()) else None


def _draw(sf_folder: Path, device: str, seed: int, trials: int) -> dict:
    """What a record must share with a runner's draw for its choice to hold there."""
    return {"sf_folder": str(Path(sf_folder).resolve()), "device": device, "seed": seed, "trials": trials}


def warm(
    cache_dir: Path,
    sf_folder: Path,
    device: str,
    queries: list[int],
    trials: int,
    seed: int,
    jobs: int = 1,
    echo: Callable[[str], object] | None = None,
) -> list[str]:
    """Compile each query's baseline into `cache_dir/qNN/`, `jobs` queries at a time; a line per query,
    each also given to `echo` as it ends."""
    cache_dir = Path(cache_dir).resolve()

    def one(number: int) -> str:
        env = os.environ | compile_env(cache_dir / QUERIES[number].slug, QUERIES[number])
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
        if echo is not None:
            echo(line)
        return line

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, queries))


def _warm_one(sf_folder: Path, device: str, number: int, trials: int, seed: int) -> str:
    """One query's baseline compiled here, into the cache folders this process's environment names;
    then eager and compiled timed as a runner's "best" probe times them, into the query's record."""
    import torch

    from evaluator.kernel_loader import with_core
    from evaluator.timing import TimingPolicy
    from evaluator.tpch.load import load_tables
    from evaluator.validate import parameter_sets

    query = QUERIES[number]
    tables = load_tables(sf_folder, query.columns(), device)
    compiled = with_core(query, torch.compile(query.plan()._query_core))
    params = parameter_sets(query, trials - 1, seed)
    started = time.perf_counter()
    try:
        for one in params:
            compiled(tables, **one)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
    except Exception as exc:  # the runner falls back to eager for such a plan: say so, go on
        return f"Q{number:02d} failed to compile: {type(exc).__name__}: {exc}"[:300]
    compile_s = time.perf_counter() - started
    probe_policy = TimingPolicy.for_device(torch.device(device).type).for_probe()
    # One probe at a time on the GPU: warm jobs compile side by side, but a probe beside another job's
    # chooses on a shared GPU (seen on the H200: Q6's compiled plan 2.70 ms in one warm, 0.58 in another).
    folder = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]).parent  # DIR/qNN
    with open(folder.parent / ".probe.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        probe = _probe(compiled, query.plan().run_query, tables, params, device, probe_policy)
    record = {"mode": min(probe, key=lambda name: probe[name].median_ms),
              **{f"{name}_ms": s.median_ms for name, s in probe.items()},
              **_draw(sf_folder, device, seed, trials)}  # fmt: skip
    (folder / RECORD).write_text(json.dumps(record))
    return (f"Q{number:02d} compiled in {compile_s:.1f} s; {record['mode']} is faster "
            f"({record['compiled_ms']:.3f} ms compiled, {record['eager_ms']:.3f} ms eager)")  # fmt: skip


def _probe(compiled, eager, tables, params, device: str, policy) -> dict:
    """Compiled and eager timed A/B as a runner's "best" probe times them."""
    import torch

    from evaluator.timing import time_rotated

    return time_rotated(
        {name: (lambda rep, fn=fn: fn(tables, **params[rep % len(params)]))
         for name, fn in (("compiled", compiled), ("eager", eager))},
        device=torch.device(device), policy=policy, strata=len(params),
    )  # fmt: skip


if __name__ == "__main__":
    folder, device_name, query_number, trial_count, seed_value = sys.argv[1:6]
    print(_warm_one(Path(folder), device_name, int(query_number), int(trial_count), int(seed_value)))
