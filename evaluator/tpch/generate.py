"""Generate TPC-H with DuckDB's dbgen, offline, and write the columnar cache (docs/data-format.md).

Layout of one scale factor's folder:
    sf<SF>/tpch.duckdb              the database itself: reference answers are computed from it
    sf<SF>/meta.json                row counts, column dtypes and encodings, string dictionaries
    sf<SF>/<table>/<column>.npy     one memory-mappable array per column, in dbgen's row order
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
from tqdm import tqdm

from evaluator.errors import EvaluatorError

FORMAT_VERSION = 2
TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
# Low-cardinality strings become int32 codes into a sorted dictionary, so ORDER BY on codes is string
# order. Free text (names, comments, addresses, phones) is not in the cache yet.
DICTIONARY_COLUMNS = {
    "l_returnflag", "l_linestatus", "l_shipinstruct", "l_shipmode", "o_orderstatus", "o_orderpriority",
    "c_mktsegment", "p_mfgr", "p_brand", "p_type", "p_container", "n_name", "r_name",
}  # fmt: skip
# Free text the 22 queries filter on or return, as a 2-D uint8 matrix [rows, width] zero-padded to the
# spec's column width: LIKE becomes shifted byte compares. Other free text is not cached.
FREE_TEXT_WIDTHS = {
    "p_name": 55, "o_comment": 79, "o_clerk": 15, "s_name": 25, "s_address": 40, "s_phone": 15,
    "s_comment": 101, "c_name": 25, "c_address": 40, "c_phone": 15, "c_comment": 117,
}  # fmt: skip


def sf_dir(data_dir: Path, scale_factor: float) -> Path:
    return Path(data_dir) / f"sf{scale_factor:g}"


def tpch_extension_path() -> str:
    """The tpch extension from the `duckdb-extension-tpch` wheel: DuckDB would otherwise download it."""
    import duckdb_extension_tpch

    base = os.path.dirname(duckdb_extension_tpch.__file__)
    found = glob.glob(os.path.join(base, "extensions", f"v{duckdb.__version__}", "tpch.duckdb_extension"))
    if not found:
        raise EvaluatorError(f"no tpch extension for DuckDB {duckdb.__version__} under {base}")
    return found[0]


def connect(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path), read_only=read_only)
    con.execute(f"LOAD '{tpch_extension_path()}'")
    return con


def prepare(data_dir: Path, scale_factor: float, *, progress: bool = True) -> Path:
    """Generate the scale factor once (idempotent) and return its folder."""
    target = sf_dir(data_dir, scale_factor)
    if _current(target):
        return target
    # Build in a sibling folder and rename at the end: a killed run never leaves a half-written cache.
    building = target.with_name(target.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    # Generated in memory, exported from there, then copied to disk in one bulk write: about half the
    # time of letting dbgen insert into the file row group by row group.
    con = connect(Path(":memory:"))
    try:
        started = time.perf_counter()
        if progress:
            print(f"generating TPC-H SF{scale_factor:g} with DuckDB dbgen ...", flush=True)
        con.execute(f"CALL dbgen(sf={scale_factor})")
        if progress:
            print(f"dbgen took {time.perf_counter() - started:.1f} s", flush=True)
        meta: dict[str, Any] = {"format_version": FORMAT_VERSION, "scale_factor": scale_factor, "tables": {}}
        columns = [(t, c, ty) for t in TABLES for c, ty, *_ in con.execute(f"DESCRIBE {t}").fetchall()]
        for table, column, sql_type in tqdm(columns, desc="columns", disable=not progress, unit="col"):
            array, info = _export_column(con, table, column, sql_type)
            if array is None:
                continue
            (building / table).mkdir(exist_ok=True)
            np.save(building / table / f"{column}.npy", array)
            entry = meta["tables"].setdefault(table, {"rows": int(len(array)), "columns": {}})
            entry["columns"][column] = info
        con.execute(f"ATTACH '{building / 'tpch.duckdb'}' AS disk")
        con.execute("COPY FROM DATABASE memory TO disk")
        con.execute("DETACH disk")
        (building / "meta.json").write_text(json.dumps(meta, indent=1))
        if progress:
            print(f"SF{scale_factor:g} ready in {time.perf_counter() - started:.1f} s", flush=True)
    finally:
        con.close()
    # An older format's folder is replaced whole; a rename cannot replace a non-empty folder.
    shutil.rmtree(target, ignore_errors=True)
    os.replace(building, target)
    return target


def _current(folder: Path) -> bool:
    try:
        return json.loads((folder / "meta.json").read_text())["format_version"] == FORMAT_VERSION
    except (OSError, ValueError, KeyError):
        return False


def _export_column(
    con: duckdb.DuckDBPyConnection, table: str, column: str, sql_type: str
) -> tuple[np.ndarray | None, dict[str, Any]]:
    info: dict[str, Any]
    if sql_type == "DATE":
        query = f"SELECT ({column} - DATE '1970-01-01')::INTEGER AS v FROM {table}"
        info = {"dtype": "int32", "encoding": "days_since_1970", "sql_type": sql_type}
    elif sql_type.startswith("DECIMAL"):
        # Exact scaled integer divided by 10^scale: IEEE division gives the decimal's nearest double.
        query = f"SELECT {column}::DOUBLE AS v FROM {table}"
        info = {"dtype": "float64", "encoding": "decimal_as_float64", "sql_type": sql_type}
    elif sql_type in ("INTEGER", "BIGINT"):
        query = f"SELECT {column}::BIGINT AS v FROM {table}"
        info = {"dtype": "int64", "encoding": "integer", "sql_type": sql_type}
    elif sql_type == "VARCHAR" and column in DICTIONARY_COLUMNS:
        values = [
            row[0] for row in con.execute(f"SELECT DISTINCT {column} FROM {table} ORDER BY 1").fetchall()
        ]
        con.execute("CREATE OR REPLACE TEMP TABLE dict AS SELECT unnest(?::VARCHAR[]) AS s", [values])
        con.execute("DROP TYPE IF EXISTS dkb_enum")
        con.execute("CREATE TYPE dkb_enum AS ENUM (SELECT s FROM dict)")
        query = f"SELECT enum_code({column}::dkb_enum)::INTEGER AS v FROM {table}"
        info = {"dtype": "int32", "encoding": "sorted_dictionary", "sql_type": sql_type, "dictionary": values}
    elif sql_type == "VARCHAR" and column in FREE_TEXT_WIDTHS:
        width = FREE_TEXT_WIDTHS[column]
        strings = con.execute(f"SELECT {column} AS v FROM {table}").fetchnumpy()["v"]
        # TPC-H text is ASCII; numpy's fixed-width bytes are exactly the zero-padded matrix we want.
        matrix = np.asarray(strings, dtype=object).astype(f"S{width}").view(np.uint8).reshape(-1, width)
        return matrix, {"dtype": "uint8", "encoding": "padded_bytes", "sql_type": sql_type, "width": width}
    else:
        return None, {}
    array = con.execute(query).fetchnumpy()["v"]
    return np.ascontiguousarray(array, dtype=info["dtype"]), info
