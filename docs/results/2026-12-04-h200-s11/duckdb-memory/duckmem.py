"""Peak resident memory of DuckDB answering one TPC-H query the way the harness does (judge.py).

    .venv/bin/python docs/results/2026-12-04-h200-s11/duckdb-memory/duckmem.py SF_FOLDER QUERY THREADS LIMIT

LIMIT: a DuckDB memory_limit such as 384MB, or none. Prints one JSON line.
"""

import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))  # the repository
from evaluator.queries import QUERIES
from evaluator.tpch.generate import connect
from evaluator.tpch.reference import reference_answer

folder, number, threads, limit = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
query = QUERIES[number]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
con = connect(folder / "tpch.duckdb", read_only=True)
con.execute(f"SET threads = {threads}")
if limit != "none":
    con.execute(f"SET memory_limit = '{limit}'")
started = time.perf_counter()
sets = [query.defaults] + query.parameter_sets(4, 3)
for params in sets:
    reference_answer(folder, query, {**query.defaults, **params}, con=con)
wall = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(
    json.dumps(
        {
            "query": number,
            "limit": limit,
            "sets": len(sets),
            "wall_s": round(wall, 2),
            "peak_mb": peak // 1024,
            "before_mb": base // 1024,
        }
    )
)
