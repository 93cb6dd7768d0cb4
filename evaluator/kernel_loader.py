"""Importing a kernel file: used only inside the untrusted runner (evaluator/runner.py)."""

from __future__ import annotations

import importlib.util
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluator.queries import Query


class KernelBuildError(Exception):
    pass


def load_kernel(query: Query, path: Path, scope: str) -> Callable[..., Any]:
    """Import the kernel file; full scope returns its run_query, core scope the TorchPlan running it."""
    spec = importlib.util.spec_from_file_location(f"dkb_kernel_{query.slug}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise KernelBuildError(f"importing {path.name} failed: {short_error(exc, path.name)}") from exc
    name = "run_query" if scope == "full" else "_query_core"
    fn = getattr(module, name, None)
    if not callable(fn):
        raise KernelBuildError(f"{path.name} defines no function {name}() (scope '{scope}')")
    return fn if scope == "full" else with_core(query, fn)


def with_core(
    query: Query, core: Callable[..., Any], plan: types.ModuleType | None = None
) -> Callable[..., Any]:
    """The TorchPlan's own run_query (or `plan`'s: a generated one), its globals seeing `core` as its
    _query_core."""
    plan_run = (plan or query.plan()).run_query
    globals_ = dict(plan_run.__globals__, _query_core=core)
    run = types.FunctionType(plan_run.__code__, globals_, plan_run.__name__, plan_run.__defaults__)
    run.__kwdefaults__ = plan_run.__kwdefaults__
    return run


def short_error(exc: BaseException, filename: str | None = None) -> str:
    """The exception, with the kernel file's own line number when the traceback has one."""
    where = ""
    if filename:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(filename)]
        if frames:
            where = f" (line {frames[-1].lineno})"
        elif isinstance(exc, SyntaxError) and exc.lineno:
            where = f" (line {exc.lineno})"
    text = f"{type(exc).__name__}: {exc}".strip()
    return (text[:500] + " ...") if len(text) > 500 else text + where
