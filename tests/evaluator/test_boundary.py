"""The trust boundary in the imports: the runner, the one process that imports a kernel, reaches none of
the trusted side (docs/sandbox.md). Anything it imports, a kernel can read and rewrite."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The trusted side: the harness package, and the way in that sets an evaluation up.
TRUSTED = ("evaluator.harness", "evaluator.evaluation")


def module_file(name: str) -> Path | None:
    path = ROOT.joinpath(*name.split("."))
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.exists():
            return candidate
    return None


def imported_by(name: str) -> set[str]:
    """Every module `name`'s source imports, at its top or inside a function (where the runner imports
    what each command needs)."""
    source = module_file(name)
    if source is None:
        return set()
    package = name if source.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names if module_file(f"{base}.{alias.name}")}
    return found


def closure(start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name in seen or not name.startswith("evaluator"):
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # a package's __init__ runs first
        todo += imported_by(name)
    return seen


def test_the_runner_imports_nothing_of_the_trusted_side() -> None:
    reached = closure("evaluator.runner.commands")
    assert {"evaluator.runner.kernel_loader", "evaluator.channel", "evaluator.results"} <= reached
    assert {name for name in reached if name.startswith(TRUSTED)} == set()


def test_the_closure_sees_an_import_inside_a_function() -> None:
    # The check above is only as good as this: the session imports the judge's comparison lazily too.
    assert "evaluator.harness.judge" in closure("evaluator.harness.session")
    # The harness starts the runner as a program; it never imports it.
    assert "evaluator.runner.commands" not in closure("evaluator.harness.core")


def test_the_web_process_does_not_import_torch() -> None:
    # Pages show the calibration's rule and records (evaluator/harness/baselines.py); importing torch for
    # that would cost every web worker seconds at start and hundreds of MB.
    import os
    import subprocess
    import sys

    code = "import django, sys; django.setup(); import leaderboard.urls; print('torch' in sys.modules)"
    env = os.environ | {"DJANGO_SETTINGS_MODULE": "leaderboard.settings"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip() == "False", done.stderr[-2000:]
