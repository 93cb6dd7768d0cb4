"""Importing a kernel file: used only inside the untrusted runner (evaluator/runner/commands.py)."""

from __future__ import annotations

import importlib.util
import traceback
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
    return fn if scope == "full" else query.with_core(fn)


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
