"""Write a 22-query kernel set whose qNN.py files are the TorchPlans themselves, admitted as Triton.

A Triton set may import only torch, triton, math, numpy, a few stdlib modules and
evaluator.tpch.encoding (evaluator/harness/admission.py), so each file inlines evaluator/torchplan/ops.py
behind a class named `ops` (the plans' `ops.x(...)` calls stay as they are) and replaces the few
tools admission refuses: `re` in ops.sql_like, `decimal` in Q11, a dunder in Q19. Every such rewrite
must match exactly once, so a change to the plans fails here instead of making a set that differs
from them in silence. All of each file is framework time by construction: the site's scores for it
should sit near 1.0.

    python scripts/gpu/plans_as_set.py OUT_DIR [--check]    (--check: admission on all 22, or exit 1)
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLANS = ROOT / "evaluator" / "torchplan" / "plans"
OPS = ROOT / "evaluator" / "torchplan" / "ops.py"

MANIFEST = {
    "model": "TorchPlans as kernels",
    "language": "triton",
    "scope": "full",
    "context": "none",
    "agent": "scripts/gpu/plans_as_set.py",
    "repair_rounds": 0,
    "notes": "Each qNN.py is the TorchPlan itself with evaluator/torchplan/ops.py inlined: "
    "a framework fallback by construction, to measure the site's own path on all 22 queries.",
}

# SQL LIKE without `re`: '%' any run of characters, '_' any one (greedy match with backtracking).
SQL_LIKE = '''def sql_like(pattern: str) -> Callable[[str], bool]:
    """SQL LIKE as a host predicate for dictionary entries: '%' is any run of characters, '_' any one."""

    def match(text: str) -> bool:
        t = p = 0
        star, mark = -1, 0
        while t < len(text):
            if p < len(pattern) and pattern[p] == "%":
                star, mark, p = p, t, p + 1
            elif p < len(pattern) and (pattern[p] == "_" or pattern[p] == text[t]):
                t, p = t + 1, p + 1
            elif star >= 0:
                mark += 1
                t, p = mark, star + 1
            else:
                return False
        while p < len(pattern) and pattern[p] == "%":
            p += 1
        return p == len(pattern)

    return match
'''

DECIMAL_RATIO = '''

def _decimal_ratio(text: str) -> tuple[int, int]:
    """Decimal(text).as_integer_ratio() without the decimal module: "0.0001" -> (1, 10000)."""
    text = text.strip().lower()
    exponent = 0
    if "e" in text:
        text, power = text.split("e")
        exponent = int(power)
    sign = -1 if text.startswith("-") else 1
    whole, _, fraction = text.lstrip("+-").partition(".")
    numerator = sign * int((whole + fraction) or "0")
    exponent -= len(fraction)
    denominator = 1
    if exponent >= 0:
        numerator *= 10**exponent
    else:
        denominator = 10**-exponent
    common = math.gcd(numerator, denominator)
    return numerator // common, denominator // common
'''


def _replace_once(text: str, old: str, new: str, where: str) -> str:
    count = text.count(old)
    if count != 1:
        raise SystemExit(f"{where}: expected {old!r} once, found it {count} times; update plans_as_set.py")
    return text.replace(old, new)


def _without_docstring(source: str) -> tuple[str, str]:
    """The module's docstring (text) and the source after it."""
    tree = ast.parse(source)
    first = tree.body[0] if tree.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        lines = source.splitlines(keepends=True)
        return first.value.value, "".join(lines[first.end_lineno :])
    return "", source


def _top_level_names(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def inlined_ops() -> tuple[str, set[str]]:
    """ops.py's code without its docstring, `re` or `from __future__`, and its functions' names."""
    _, body = _without_docstring(OPS.read_text())
    body = _replace_once(body, "from __future__ import annotations\n", "", "ops.py")
    body = _replace_once(body, "import re\n", "", "ops.py")
    tree = ast.parse(body)
    like = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "sql_like")
    lines = body.splitlines(keepends=True)
    body = "".join(lines[: like.lineno - 1]) + SQL_LIKE + "".join(lines[like.end_lineno :])
    if "re." in "".join(ast.unparse(n) for n in ast.parse(body).body if isinstance(n, ast.FunctionDef)):
        raise SystemExit("ops.py: still uses re after sql_like was replaced; update plans_as_set.py")
    functions = {n.name for n in ast.parse(body).body if isinstance(n, ast.FunctionDef)}
    return body, functions


def kernel_source(number: int, ops_body: str, ops_functions: set[str]) -> str:
    """Q`number`'s TorchPlan as one self-contained kernel file."""
    path = PLANS / f"q{number:02d}.py"
    doc, body = _without_docstring(path.read_text())
    body = _replace_once(body, "from __future__ import annotations\n", "", path.name)
    uses_ops = "from evaluator.torchplan import ops\n" in body
    if uses_ops:
        body = _replace_once(body, "from evaluator.torchplan import ops\n", "", path.name)
    if number == 11:
        body = _replace_once(body, "from decimal import Decimal\n", "import math\n", path.name)
        body = _replace_once(
            body, "Decimal(str(fraction)).as_integer_ratio()", "_decimal_ratio(str(fraction))", path.name
        )
        body += DECIMAL_RATIO
    if number == 19:
        body = _replace_once(body, "SHIPMODES.__contains__", "lambda mode: mode in SHIPMODES", path.name)
    title = doc.strip().splitlines()[0] if doc.strip() else f"TPC-H Q{number}"
    head = (
        f'"""{title}\n\nGenerated by scripts/gpu/plans_as_set.py from {path.relative_to(ROOT)}'
        + (" with evaluator/torchplan/ops.py inlined" if uses_ops else "")
        + '.\n"""\n\nfrom __future__ import annotations\n'
    )
    if not uses_ops:
        return head + body
    clash = _top_level_names(body) & (_top_level_names(ops_body) | {"ops"})
    if clash:
        raise SystemExit(f"{path.name}: defines {sorted(clash)}, as ops.py does; update plans_as_set.py")
    used = {
        node.attr
        for node in ast.walk(ast.parse(body))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ops"
    }
    unknown = used - ops_functions
    if unknown:
        raise SystemExit(f"{path.name}: calls ops.{sorted(unknown)}, which ops.py does not define")
    namespace = "\n\nclass ops:\n    # The plan's `ops.x(...)` calls, unchanged.\n" + "".join(
        f"    {name} = staticmethod({name})\n" for name in sorted(used)
    )
    return head + ops_body + namespace + "\n" + body


def write_set(out: Path) -> list[Path]:
    ops_body, ops_functions = inlined_ops()
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps(MANIFEST, indent=2) + "\n")
    paths = []
    for number in range(1, 23):
        path = out / f"q{number:02d}.py"
        path.write_text(kernel_source(number, ops_body, ops_functions))
        paths.append(path)
    return paths


def refused(paths: list[Path]) -> list[str]:
    """Admission's complaints about the files, one line each; empty when all are admitted."""
    sys.path.insert(0, str(ROOT))
    from evaluator.harness.admission import check

    return [f"{p.name}: {v}" for p in paths for v in check(p.read_text(), p.name, language="triton")]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--check", action="store_true", help="run admission on all 22; exit 1 if any is refused"
    )
    args = parser.parse_args()
    paths = write_set(args.out)
    print(f"wrote {len(paths)} kernels and manifest.json to {args.out}")
    if args.check:
        problems = refused(paths)
        for line in problems:
            print(line, file=sys.stderr)
        print(f"admission: {len(paths) - len({p.split(':')[0] for p in problems})}/{len(paths)} admitted")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
