"""SQL -> TorchPlan compiler: sqlglot parse/optimize -> our IR -> rewrites -> a readable Python module.

`compile_sql(sql, name=..., params=...)` returns the module's source; `cli_main(sql, out)` is what
`python -m evaluator torchplan "SELECT ..."` runs. What is supported: docs/torchplan-compiler.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from evaluator.torchplan.compiler.errors import ParameterError, UnsupportedSQL

__all__ = ["ParameterError", "UnsupportedSQL", "cli_main", "compile_sql"]


def compile_sql(
    sql: str, *, name: str, params: dict[str, Any] | None = None, template: str | None = None
) -> str:
    """The TorchPlan module for `sql`; `params` names which literals are parameters (name -> value).

    `template` (optional) is `sql` with `{param}` fields: the parameters are then located exactly,
    even where a default equals another literal of the query.

    Raises UnsupportedSQL naming the construct it cannot translate, ParameterError for bad params.
    """
    from evaluator.torchplan.compiler.frontend import parse
    from evaluator.torchplan.compiler.module import render
    from evaluator.torchplan.compiler.rewrites import rewrite

    front = parse(sql, params, template)
    block = rewrite(front)
    return render(block, front.binding, name=name, sql=sql)


def cli_main(sql: str, out: Path | None = None) -> int:
    """Print (or write to `out`) the module for `sql`; exit code 2 with a one-line reason if unsupported."""
    try:
        source = compile_sql(sql, name="Query")
    except (UnsupportedSQL, ParameterError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if out is None:
        print(source, end="")
    else:
        Path(out).write_text(source)
        print(f"wrote {out}", file=sys.stderr)
    return 0
