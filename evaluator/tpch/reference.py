"""Reference answers: DuckDB runs the query's SQL with the same parameters on the same data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from evaluator.queries import Query
from evaluator.tpch.generate import connect


def reference_answer(
    sf_folder: Path, query: Query, params: dict[str, Any], con: duckdb.DuckDBPyConnection | None = None
) -> dict[str, np.ndarray]:
    """Result columns by name, in the device encodings (dates as days, decimals as float64). `con`: an
    open read-only connection to the folder's database (its buffer pool warm), else one just for this."""
    own = con is None
    con = connect(Path(sf_folder) / "tpch.duckdb", read_only=True) if own else con
    try:
        relation = con.sql(query.sql(**params))
        names, types = relation.columns, [str(t) for t in relation.types]
        sql = ", ".join(_encode(name, sql_type) for name, sql_type in zip(names, types, strict=True))
        result = con.sql(f"SELECT {sql} FROM relation").fetchnumpy()
        # Strings as fixed-width unicode arrays: comparable and sortable, unlike object arrays.
        return {k: np.asarray(v, dtype=str if v.dtype == object else None) for k, v in result.items()}
    finally:
        if own:
            con.close()


def _encode(name: str, sql_type: str) -> str:
    quoted = f'"{name}"'
    if sql_type == "DATE":
        return f"({quoted} - DATE '1970-01-01')::INTEGER AS {quoted}"
    if sql_type.startswith("DECIMAL") or sql_type in ("DOUBLE", "FLOAT"):
        return f"{quoted}::DOUBLE AS {quoted}"
    if sql_type in ("INTEGER", "BIGINT", "HUGEINT", "SMALLINT"):
        return f"{quoted}::BIGINT AS {quoted}"
    return quoted
