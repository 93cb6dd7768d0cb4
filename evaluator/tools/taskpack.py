"""`python -m evaluator taskpack --out DIR`: what a model is given, per query.

For every query: its SQL (the spec's default parameters), the TorchPlan, the `_query_core` signature a
"core" kernel must keep, the workload context (row counts, bytes read, key cardinalities and result
size at the scale factor, measured on the generated data) and the hardware context (the target GPU).
The paper found workload context matters more than hardware context, so both are separate files that
an experiment can give or withhold (the manifest's `context`).
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from evaluator.gpus import GPUS
from evaluator.queries import QUERIES, Query
from evaluator.tpch.generate import connect
from evaluator.tpch.load import read_meta

# What a task pack may describe (evaluator/hardware.py holds the figures).
HARDWARE = {"h200": GPUS["H200"], "h100": GPUS["H100"]}

README = """# DataKernelBench task pack (SF{sf:g}, {hardware})

One folder per TPC-H query:
- `query.sql`: the query with the TPC-H spec's default substitution parameters;
- `torchplan.py`: the PyTorch baseline your kernel is timed against (compiled with torch.compile);
- `core_signature.txt`: the `_query_core` a scope-"core" kernel replaces (tensors and scalars in);
- `workload.json`: row counts, bytes read, key cardinalities and result size at SF{sf:g}.
`hardware.json` describes the target GPU. The kernel-set format is in docs/kernel-format.md of the
DataKernelBench repository: a folder with manifest.json and q01.py .. q22.py.
"""


def write_taskpack(out: Path, sf_folder: Path, hardware: str) -> list[Path]:
    """Write the pack; returns the query folders written."""
    out.mkdir(parents=True, exist_ok=True)
    meta = read_meta(sf_folder)
    sf = float(meta["scale_factor"])
    (out / "README.md").write_text(README.format(sf=sf, hardware=HARDWARE[hardware]["name"]))
    (out / "hardware.json").write_text(json.dumps(HARDWARE[hardware], indent=2) + "\n")
    written = []
    con = connect(sf_folder / "tpch.duckdb", read_only=True)
    try:
        for number in sorted(QUERIES):
            query = QUERIES[number]
            folder = out / query.slug
            folder.mkdir(exist_ok=True)
            (folder / "query.sql").write_text(query.sql() + ";\n")
            (folder / "torchplan.py").write_text(query.plan_source())
            (folder / "core_signature.txt").write_text(core_signature(query) + "\n")
            (folder / "workload.json").write_text(json.dumps(workload(query, meta, con), indent=2) + "\n")
            written.append(folder)
    finally:
        con.close()
    return written


def core_signature(query: Query) -> str:
    core = query.plan()._query_core
    header = f"def _query_core{inspect.signature(core)}"
    doc = inspect.getdoc(core)
    return f'{header}:\n    """{doc}"""' if doc else header


def workload(query: Query, meta: dict, con: Any) -> dict[str, Any]:
    tables: dict[str, Any] = {}
    total = 0
    for table, columns in query.columns().items():
        table_meta = meta["tables"][table]
        rows = table_meta["rows"]
        described = {}
        for column in columns:
            info = table_meta["columns"][column]
            width = info.get("width", 1) * {"int32": 4, "int64": 8, "float64": 8, "uint8": 1}[info["dtype"]]
            described[column] = {"dtype": info["dtype"], "encoding": info["encoding"], "bytes": rows * width}
            if column.endswith("key"):
                (distinct,) = con.execute(f"SELECT count(DISTINCT {column}) FROM {table}").fetchone()
                described[column]["distinct"] = distinct
            total += rows * width
        tables[table] = {"rows": rows, "columns": described}
    (result_rows,) = con.execute(f"SELECT count(*) FROM ({query.sql()})").fetchone()
    return {
        "scale_factor": meta["scale_factor"],
        "tables": tables,
        "bytes_read": total,
        "result_rows_with_default_parameters": result_rows,
        "order_by": list(query.order_by),
    }
