"""Peak resident memory of the worker's own process answering queries the way harness 0.6.3 does: the
site's worker imports (Django, the task module, the evaluator), one DuckDB instance under its memory
limit with SF10 and SF1 attached, and two queries' answers at once (the next query's start during the
current one's trials). Runners are separate processes and not counted, as on the site.

    DJANGO_SETTINGS_MODULE=leaderboard.settings DKB_VAR_DIR=$(mktemp -d) \\
      .venv/bin/python docs/results/2026-12-04-h200-s12/worker-memory/workermem.py DATA_DIR THREADS LIMIT

LIMIT: a DuckDB memory_limit such as 384MB, or default. Prints one JSON line per pair, then the peak.
"""

import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))  # the repository

import django

django.setup()

import leaderboard.tasks  # noqa: E402,F401  (the worker's own imports)
from evaluator.harness.judge import Answers, Database  # noqa: E402
from evaluator.queries import QUERIES  # noqa: E402


def peak_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


data, threads, limit = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
folders = [data / "sf1", data / "sf10"]
print(json.dumps({"imports_mb": peak_mb(), "torch_imported": "torch" in sys.modules}), flush=True)
order = [1, 3, 9, 13, 18, 21, 5, 7, 8, 2, 10, 11, 12, 14, 15, 16, 17, 19, 20, 22, 4, 6]
with Database(threads, None if limit == "default" else limit) as database:
    for current, following in zip(order, order[1:], strict=False):
        started = time.perf_counter()
        both = [
            Answers(QUERIES[n], folders, QUERIES[n].parameter_sets(4, seed=7), database)
            for n in (current, following)
        ]
        try:
            for answers in both:
                answers.trials()
        finally:
            for answers in both:
                answers.close()
        line = {
            "queries": [current, following],
            "wall_s": round(time.perf_counter() - started, 1),
            "peak_mb": peak_mb(),
        }
        print(json.dumps(line), flush=True)
print(json.dumps({"limit": limit, "threads": threads, "peak_mb": peak_mb()}))
