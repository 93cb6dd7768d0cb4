"""Reference answers: DuckDB runs the query's SQL with the same parameters on the same data.

SQL's NULL is kept: an aggregate over no rows (SUM, AVG, MIN, MAX, and a ratio of them) is NULL, and a
NULL in a float column is NaN, which only NaN matches (evaluator/harness/compare.py). Filling it with
0.0 would fail a kernel that answers NULL and turn every such trial into a check that the kernel returns 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from evaluator.errors import EvaluatorError
from evaluator.queries import Query
from evaluator.tpch.generate import connect


def reference_answer(
    sf_folder: Path, query: Query, params: dict[str, Any], con: duckdb.DuckDBPyConnection | None = None
) -> dict[str, np.ndarray]:
    """Result columns by name, in the device encodings (dates as days, decimals as float64). `con`: an
    open read-only connection to the folder's database (its buffer pool warm), else one just for this."""
    own = con is None
    con = connect(Path(sf_folder) / "tpch.duckdb", read_only=True) if con is None else con
    try:
        relation = con.sql(query.sql(**params))
        names, types = relation.columns, [str(t) for t in relation.types]
        sql = ", ".join(_encode(name, sql_type) for name, sql_type in zip(names, types, strict=True))
        result = con.sql(f"SELECT {sql} FROM relation").fetchnumpy()
        return {name: _column(name, values) for name, values in result.items()}
    finally:
        if own:
            con.close()


def _column(name: str, values: np.ndarray) -> np.ndarray:
    """One result column as a plain array; fetchnumpy gives a masked array where there are NULLs."""
    if np.ma.isMaskedArray(values) and np.ma.getmaskarray(values).any():
        if not np.issubdtype(values.dtype, np.floating):
            # No benchmark query can put a NULL there: integers and dates are keys, counts and grouped
            # values, and every ungrouped aggregate is DECIMAL or DOUBLE. An exact column has no NULL
            # to compare against, and any fill value would be a real answer a kernel could give.
            raise EvaluatorError(f"result column {name!r} ({values.dtype}) holds a NULL; only floats can")
        values = values.filled(np.nan)
    values = np.ma.getdata(values)
    # Strings as fixed-width unicode arrays: comparable and sortable, unlike object arrays.
    return np.asarray(values, dtype=str if values.dtype == object else None)


def _encode(name: str, sql_type: str) -> str:
    quoted = f'"{name}"'
    if sql_type == "DATE":
        return f"({quoted} - DATE '1970-01-01')::INTEGER AS {quoted}"
    if sql_type.startswith("DECIMAL") or sql_type in ("DOUBLE", "FLOAT"):
        return f"{quoted}::DOUBLE AS {quoted}"
    if sql_type in ("INTEGER", "BIGINT", "HUGEINT", "SMALLINT"):
        return f"{quoted}::BIGINT AS {quoted}"
    return quoted
