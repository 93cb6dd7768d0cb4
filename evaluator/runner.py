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
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import Any

RESPONSE = "response.json"


class CompileLimit(Exception):
    pass


class Phases(dict):
    """Seconds each phase of the runner took, into the response: where a query's evaluation time goes
    (diagnostics only, read with the rest of what this process writes)."""

    def __init__(self) -> None:
        super().__init__()
        self._last = time.perf_counter()

    def done(self, name: str) -> None:
        now = time.perf_counter()
        self[name] = round(self.get(name, 0.0) + now - self._last, 3)
        self._last = now


def main(argv: list[str]) -> int:
    started = time.time()  # wall clock: the harness, on the same host, reads its own around this process
    request = json.loads(Path(argv[0]).read_text())
    # Gone before the kernel is imported: it names the seed that picks which timed reps are checked.
    Path(argv[0]).unlink()
    out = Path(request["out"])
    response: dict[str, Any] = {"trials": [], "build_error": None, "timing": None, "timing_error": None,
                                "phases_s": Phases()}  # fmt: skip
    try:
        _run(request, out, response)
    finally:
        response["clock"] = {"started": started, "ended": time.time()}
        (out / RESPONSE).write_text(json.dumps(response))
    return 0


def _run(request: dict[str, Any], out: Path, response: dict[str, Any]) -> None:
    device_name = request["device"]
    if device_name == "cpu":
        # Before triton is imported: it reads the variable once, when its library is defined.
        os.environ["TRITON_INTERPRET"] = "1"
    import torch

    from evaluator import hardware
    from evaluator.kernel_loader import KernelBuildError, load_kernel, short_error
    from evaluator.queries import get_query
    from evaluator.timing import TimingPolicy, time_rotated
    from evaluator.tpch.load import load_tables

    phases = response["phases_s"]
    phases.done("imports")
    device = torch.device(device_name)
    query = get_query(request["query"])
    kernel = None
    if request["kernel_path"]:
        path = Path(request["kernel_path"])
        try:
            load = partial(load_kernel, query, path, request["scope"])
            kernel = _within_compile_limit(load, float(request.get("compile_limit_s", 120)))
        except KernelBuildError as exc:
            response["build_error"] = str(exc)
        phases.done("build")
    # The check scale factors' trials first, each scale factor's tables freed before the next is
    # loaded; the main scale factor last: its tables stay for the timing.
    folders = [*request.get("checks", []), request["sf_folder"]]
    for phase, folder in enumerate(folders):
        main = phase == len(folders) - 1
        if kernel is None and not main:
            continue
        tables = load_tables(Path(folder), query.columns(), device)
        phases.done("load")
        if kernel is not None:
            kernel = _trials(kernel, tables, request["param_sets"], out, phase, path.name, response)
            phases.done("trials")
        if not main:
            del tables
            if device.type == "cuda":
                torch.cuda.empty_cache()
    response["nbytes"] = tables.nbytes()
    response["hardware"] = hardware.describe(device)
    policy = TimingPolicy(**request["timing"])
    if device.type != "cuda":
        # No per-call limit off the GPU: Triton's interpreter is orders of magnitude slower than torch.
        policy = replace(policy, call_limit=float("inf"))
    params = request["param_sets"]
    # Fresh tensor objects between reps: a pool of clones, rotated round-robin with the parameter sets
    # (the pool's size and their number coprime, so the pairs repeat as seldom as they can). `tables`
    # itself is never handed out again: after timing, every clone must still equal it.
    pool = [tables.clone() for _ in range(max(1, policy.pool))]

    def inputs(rep: int) -> tuple[Any, dict[str, Any]]:
        return pool[rep % len(pool)], params[rep % len(params)]

    phases.done("clone")
    choice: dict[str, Any] = {}  # which baseline was timed, and why: into the report's stats
    baseline = _choose_baseline(query, request["baseline"], inputs, len(params), device, policy, choice)
    if request.get("baseline_probe"):  # the mode the warm step chose: its timings, not a probe here
        choice["baseline_probe"] = {k: v for k, v in request["baseline_probe"].items() if k.endswith("_ms")}
        choice["baseline_probe"]["by"] = "warm"
    phases.done("baseline_choice")
    candidates: dict[str, Callable[[int], Any]] = {"baseline": _rotated(baseline, inputs)}
    if kernel is not None:
        candidates["kernel"] = _rotated(kernel, inputs)
    verify = request.get("verify") or {"seed": 0, "share": 1.0}
    keeper = Keeper(verify["seed"], verify["share"], len(params))
    try:
        stats = time_rotated(candidates, device=device, policy=policy, strata=len(params), keep=keeper)
    except Exception as exc:
        if kernel is None:
            raise
        response["timing_error"] = short_error(exc, path.name)
        del candidates["kernel"]
        keeper = Keeper(verify["seed"], verify["share"], len(params))
        stats = time_rotated(candidates, device=device, policy=policy, strata=len(params), keep=keeper)
    response["timing"] = {name: asdict(s) for name, s in stats.items()}
    response["timing"] |= choice
    phases.done("timing")
    response["timed"] = keeper.write(out)
    phases.done("keep")
    response["profile"] = {name: _profile(fn, device) for name, fn in candidates.items()}
    phases.done("profile")
    if request.get("fresh"):
        fns = {"baseline": baseline} | ({"kernel": kernel} if "kernel" in candidates else {})
        response["fresh"] = _fresh(fns, tables, pool, device, out)
        phases.done("fresh")
    changed = not all(torch.equal(c[t][n], tables[t][n]) for c in pool for t in tables for n in tables[t])
    response["timed_inputs_changed"] = changed
    phases.done("inputs_check")


def _within_compile_limit(load: Callable[[], Any], limit_s: float) -> Any:
    """`load()`, stopped by SIGALRM after `limit_s`: the protocol's compile limit on importing a kernel
    file and building what it builds there (load_inline). Triton compiles at a kernel's first call,
    inside the correctness trials and their limit."""

    def stop(signum: int, frame: Any) -> None:
        raise CompileLimit(f"building took longer than the {limit_s:g} s compile limit")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        return load()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _fresh(
    fns: dict[str, Callable[..., Any]], tables: Any, pool: list[Any], device: Any, out: Path
) -> dict[str, Any]:
    """Each candidate on the parameter sets given on standard input (evaluator/fresh.py): per set one
    untimed call on rolled tables, then two timed calls on two pool clones (two samples: one host
    hiccup does not decide). The second result per set goes to `fresh-<name>.npz`."""
    import numpy as np

    from evaluator.compare import to_numpy
    from evaluator.kernel_loader import short_error
    from evaluator.timing import time_call

    try:
        given = json.loads(sys.stdin.buffer.read() or b"null")
        sets, roll = list(given["param_sets"]), float(given["roll"])
    except (ValueError, TypeError, KeyError):
        return {"error": "the fresh parameter sets were gone from the runner's standard input: the kernel "
                         "read it, and only the runner may"}  # fmt: skip
    rolled = tables.rolled(roll)
    facts: dict[str, dict[str, Any]] = {name: {"ms": []} for name in fns}
    results: dict[str, dict[str, Any]] = {name: {} for name in fns}
    for index, params in enumerate(sets):
        for name, fn in fns.items():
            if "error" in facts[name]:
                continue
            try:
                fn(rolled, **params)  # untimed: compiles what the new values need, fills any cache
            except Exception as exc:
                # Rolled tables are not valid TPC-H data (an order may ship before it is placed): a
                # kernel may fail on them and still be right on real data. Noted, not judged.
                facts[name].setdefault("rolled_errors", []).append(short_error(exc))
            try:
                for clone in (pool[index % len(pool)], pool[(index + 1) % len(pool)]):
                    ms, result = time_call(partial(fn, clone, **params), device=device)
                    facts[name]["ms"].append(ms)
                arrays = to_numpy(result)
            except Exception as exc:
                facts[name]["error"] = short_error(exc)
                continue
            results[name].update({f"f{index}_{column}": array for column, array in arrays.items()})
    del rolled
    for name, arrays in results.items():
        np.savez(out / f"fresh-{name}.npz", **arrays)
    return facts


def _profile(fn: Callable[[int], Any], device: Any) -> dict[str, Any]:
    """One more call (rep 0's inputs) under torch.profiler: its device activity, as data."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from evaluator.attribution import device_activity

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    try:
        with profile(activities=activities) as prof:
            fn(0)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
        return {"activity": device_activity(prof.events())}
    except Exception as exc:  # attribution is a label, not a verdict: a profiler failure only loses it
        return {"activity": None, "error": f"{type(exc).__name__}: {exc}"[:300]}


def _rotated(
    fn: Callable[..., Any], inputs: Callable[[int], tuple[Any, dict[str, Any]]]
) -> Callable[[int], Any]:
    def call(rep: int) -> Any:
        tables, params = inputs(rep)
        return fn(tables, **params)

    return call


class Keeper:
    """Keeps the results of the timed reps the trusted side will check, outside the timed region.

    Rep `r` is kept when `timing.verified(seed, share, r)` draws it, and the last rep always. A kept
    result equal, array for array, to the one kept before it for the same parameter set is recorded
    as the same (a deterministic kernel's reps cost one copy per parameter set); at most
    `MAX_BYTES` per candidate are kept, past that the reps are not checked (`capped_at`).
    """

    MAX_BYTES = 256 * 1024 * 1024

    def __init__(self, seed: int, share: float, strata: int) -> None:
        self.seed, self.share, self.strata = seed, share, strata
        self.kept: dict[str, dict[int, dict[str, Any]]] = {}
        self.same: dict[str, dict[int, int]] = {}
        self.last: dict[str, tuple[int, Any]] = {}
        self.nbytes: dict[str, int] = {}
        self.errors: dict[str, str] = {}
        self.capped_at: dict[str, int] = {}

    def __call__(self, name: str, rep: int, result: Any) -> None:
        from evaluator.timing import verified

        self.last[name] = (rep, result)
        if verified(self.seed, self.share, rep):
            self._keep(name, rep, result)

    def _keep(self, name: str, rep: int, result: Any) -> None:
        import numpy as np

        from evaluator.compare import to_numpy

        kept = self.kept.setdefault(name, {})
        if name in self.errors or name in self.capped_at or rep in kept or rep in self.same.get(name, {}):
            return
        try:
            arrays = to_numpy(result)
        except Exception as exc:
            self.errors[name] = f"the result returned while being timed (rep {rep}) is not valid: {exc}"
            return
        earlier = [r for r in kept if r % self.strata == rep % self.strata]
        if earlier:
            previous = kept[earlier[-1]]
            if previous.keys() == arrays.keys() and all(
                previous[c].dtype == arrays[c].dtype
                and np.array_equal(previous[c], arrays[c], equal_nan=True)
                for c in arrays
            ):
                self.same.setdefault(name, {})[rep] = earlier[-1]
                return
        size = sum(a.nbytes for a in arrays.values())
        if self.nbytes.get(name, 0) + size > self.MAX_BYTES:
            self.capped_at[name] = rep
            return
        self.nbytes[name] = self.nbytes.get(name, 0) + size
        kept[rep] = arrays

    def write(self, out: Path) -> dict[str, Any]:
        """Write `timed-<name>.npz` (keys `r<rep>_<column>`); returns what the response records."""
        import numpy as np

        for name, (rep, result) in self.last.items():
            self._keep(name, rep, result)
        self.last.clear()  # the last results hold device memory
        facts = {}
        for name in self.kept.keys() | self.errors.keys():
            kept = self.kept.get(name, {})
            np.savez(
                out / f"timed-{name}.npz",
                **{f"r{r}_{c}": a for r, arrays in kept.items() for c, a in arrays.items()},
            )
            facts[name] = {
                "kept": sorted(kept),
                "same_as": {str(r): e for r, e in self.same.get(name, {}).items()},
                "capped_at": self.capped_at.get(name),
                "error": self.errors.get(name),
            }
        return facts


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
    inputs: Callable[[int], tuple[Any, dict[str, Any]]],
    strata: int,
    device: Any,
    policy: Any,
    choice: dict[str, Any],
) -> Callable[..., Any]:
    """The TorchPlan to time against: eager, compiled, or ("best") the faster of the two here.

    "compiled" puts the plan's `_query_core` under torch.compile and leaves run_query's host-side
    parameter handling eager: rotated parameters then cost one recompile (dynamic scalars), not one
    per parameter set. For "best" both are warmed up on the rotated inputs, `probe_reps` reps of each
    are timed, and the faster median wins; a plan that fails to compile is timed eager.
    """
    import torch

    from evaluator.kernel_loader import short_error, with_core
    from evaluator.timing import time_rotated

    eager = query.plan().run_query
    if mode == "eager":
        choice["baseline_mode"] = "eager"
        return eager
    compiled = with_core(query, torch.compile(query.plan()._query_core))
    if mode == "compiled":
        choice["baseline_mode"] = "compiled"
        return compiled
    probe = policy.for_probe()
    try:
        # The warm-up compiles, once per parameter set that needs it: a failure leaves eager alone.
        stats = time_rotated(
            {"compiled": _rotated(compiled, inputs), "eager": _rotated(eager, inputs)},
            device=device,
            policy=probe,
            strata=strata,
        )
    except Exception as exc:
        choice["baseline_mode"] = "eager"
        choice["baseline_probe"] = {"compile_error": short_error(exc)}
        return eager
    chosen = min(stats, key=lambda name: stats[name].median_ms)
    choice["baseline_mode"] = chosen
    choice["baseline_probe"] = {f"{name}_ms": s.median_ms for name, s in stats.items()}
    return compiled if chosen == "compiled" else eager


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except Exception:
        traceback.print_exc()
        code = 1
    # Out at once, the response written: no interpreter teardown (freeing gigabytes of tensors, torch's
    # exit hooks), which only delays the next query. Torch's compile workers, where a compile started
    # them, are stopped first: they hold this process's output pipe, which the harness reads to its end.
    workers = sys.modules.get("torch._inductor.async_compile")
    if workers is not None:
        workers.shutdown_compile_workers()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
