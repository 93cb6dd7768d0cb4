"""Regenerate evaluator/torchplan/generated/qNN.py from each query module's SQL and defaults.

`python -m evaluator.torchplan.compiler.regenerate` compiles every query in evaluator/queries/ with its
default parameters named, writes the modules that compile, removes stale ones, and prints which
construct blocks each of the others. A test checks that the committed files are what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from evaluator.queries import QUERIES, Query
from evaluator.torchplan.compiler import ParameterError, UnsupportedSQL, compile_sql

GENERATED = Path(__file__).resolve().parent.parent / "generated"


def generate(query: Query) -> str:
    return compile_sql(
        query.sql(),
        name=f"TPC-H Q{query.number}, {query.name}",
        params=query.defaults,
        template=query.sql_template,
    )


def regenerate(target: Path = GENERATED) -> dict[int, str | None]:
    """Write the modules; returns query number -> None when compiled, else why not."""
    outcome: dict[int, str | None] = {}
    for number, query in sorted(QUERIES.items()):
        path = target / f"{query.slug}.py"
        try:
            source = generate(query)
        except (UnsupportedSQL, ParameterError) as exc:
            outcome[number] = str(exc)
            path.unlink(missing_ok=True)
            continue
        path.write_text(source)
        outcome[number] = None
    return outcome


def main() -> int:
    for number, reason in regenerate().items():
        print(f"Q{number:<3} {'compiled' if reason is None else 'unsupported: ' + reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
