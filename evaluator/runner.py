"""The untrusted runner: imports one kernel, runs it on given parameters and times it.

`python -m evaluator.runner REQUEST.json` is started by the harness, once per query, in a process of
its own (inside the sandbox on the leaderboard). It never sees an expected answer: it writes each
trial's result columns to `trialN.npz` and a `response.json` of facts (errors, whether the inputs
changed, timings) for the trusted side to judge. A kernel that crashes or hangs takes only this
process down.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

RESPONSE = "response.json"


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[0]).read_text())
    out = Path(request["out"])
    response: dict[str, Any] = {"trials": [], "build_error": None, "timing": None, "timing_error": None}
    try:
        _run(request, out, response)
    finally:
        (out / RESPONSE).write_text(json.dumps(response))
    return 0


def _run(request: dict[str, Any], out: Path, response: dict[str, Any]) -> None:
    device_name = request["device"]
    if device_name == "cpu":
        # Before triton is imported: it reads the variable once, when its library is defined.
        os.environ["TRITON_INTERPRET"] = "1"
    import numpy as np
    import torch

    from evaluator import hardware
    from evaluator.compare import to_numpy
    from evaluator.kernel_loader import KernelBuildError, load_kernel, short_error
    from evaluator.queries import get_query
    from evaluator.timing import TimingPolicy, time_interleaved
    from evaluator.tpch.load import load_tables

    device = torch.device(device_name)
    query = get_query(request["query"])
    kernel = None
    if request["kernel_path"]:
        path = Path(request["kernel_path"])
        try:
            kernel = load_kernel(query, path, request["scope"])
        except KernelBuildError as exc:
            response["build_error"] = str(exc)
    # The check scale factors' trials first, each scale factor's tables freed before the next is
    # loaded; the main scale factor last: its tables stay for the timing.
    folders = [*request.get("checks", []), request["sf_folder"]]
    for phase, folder in enumerate(folders):
        main = phase == len(folders) - 1
        if kernel is None and not main:
            continue
        tables = load_tables(Path(folder), query.columns(), device)
        if kernel is not None:
            kernel = _trials(kernel, tables, request["param_sets"], out, phase, path.name, response)
        if not main:
            del tables
            if device.type == "cuda":
                torch.cuda.empty_cache()
    response["nbytes"] = tables.nbytes()
    response["hardware"] = hardware.describe(device)
    defaults = dict(query.defaults)
    timed: dict[str, Any] = {}

    def timed_kernel() -> None:
        timed["result"] = kernel(tables, **defaults)

    policy = TimingPolicy(**request["timing"])
    choice: dict[str, Any] = {}  # which baseline was timed, and why: into the report's stats
    baseline = _choose_baseline(query, request["baseline"], lambda fn: fn(tables, **defaults), device,
                                policy, choice)  # fmt: skip
    candidates = {"baseline": lambda: baseline(tables, **defaults)}
    if kernel is not None:
        candidates["kernel"] = timed_kernel
    try:
        stats = time_interleaved(candidates, device=device, policy=policy)
    except Exception as exc:
        if kernel is None:
            raise
        response["timing_error"] = short_error(exc, path.name)
        stats = time_interleaved({"baseline": candidates["baseline"]}, device=device, policy=policy)
    response["timing"] = {name: asdict(s) for name, s in stats.items()}
    response["timing"] |= choice
    if "result" in timed and "kernel" in stats:
        try:
            np.savez(out / "timed.npz", **to_numpy(timed["result"]))
        except Exception as exc:
            response["timing_error"] = f"the result returned while being timed is not valid: {exc}"


def _trials(
    kernel: Callable[..., Any],
    tables: Any,
    param_sets: list[dict[str, Any]],
    out: Path,
    phase: int,
    filename: str,
    response: dict[str, Any],
) -> Callable[..., Any] | None:
    """Run the kernel once per parameter set on fresh clones; None once it failed (it is not timed)."""
    import numpy as np
    import torch

    from evaluator.compare import to_numpy
    from evaluator.kernel_loader import short_error

    for index, params in enumerate(param_sets, start=1):
        fresh = tables.clone()
        try:
            arrays = to_numpy(kernel(fresh, **params))
        except Exception as exc:
            response["trials"].append({"phase": phase, "ok": False, "error": short_error(exc, filename)})
            return None
        np.savez(out / f"trial-{phase}-{index}.npz", **arrays)
        changed = not all(torch.equal(fresh[t][c], tables[t][c]) for t in tables for c in tables[t])
        response["trials"].append({"phase": phase, "ok": True, "inputs_changed": changed})
    return kernel


def _choose_baseline(
    query: Any,
    mode: str,
    call: Callable[[Callable[..., Any]], Any],
    device: Any,
    policy: Any,
    choice: dict[str, Any],
) -> Callable[..., Any]:
    """The TorchPlan to time against: eager, compiled, or ("best") the faster of the two here.

    "compiled" puts the plan's `_query_core` under torch.compile and leaves run_query's host-side
    parameter handling eager: rotated parameters then cost one recompile (dynamic scalars), not one
    per parameter set. For "best" both are warmed up, `probe_reps` reps of each are timed, and the
    faster median wins; a plan that fails to compile is timed eager.
    """
    import torch

    from evaluator.kernel_loader import short_error, with_core
    from evaluator.timing import time_interleaved

    eager = query.plan().run_query
    if mode == "eager":
        choice["baseline_mode"] = "eager"
        return eager
    compiled = with_core(query, torch.compile(query.plan()._query_core))
    if mode == "compiled":
        choice["baseline_mode"] = "compiled"
        return compiled
    try:
        call(compiled)  # the first call compiles: a failure here leaves eager as the only choice
    except Exception as exc:
        choice["baseline_mode"] = "eager"
        choice["baseline_probe"] = {"compile_error": short_error(exc)}
        return eager
    probe = replace(policy, min_reps=policy.probe_reps, min_time_s=0.0, max_time_s=0.0)
    stats = time_interleaved(
        {"eager": lambda: call(eager), "compiled": lambda: call(compiled)}, device=device, policy=probe
    )
    chosen = min(stats, key=lambda name: stats[name].median_ms)
    choice["baseline_mode"] = chosen
    choice["baseline_probe"] = {f"{name}_ms": s.median_ms for name, s in stats.items()}
    return compiled if chosen == "compiled" else eager


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception:
        traceback.print_exc()
        sys.exit(1)
