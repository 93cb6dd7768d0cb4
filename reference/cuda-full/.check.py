"""Check every kernel of this set against DuckDB on a GPU, one line per query: ok, the first difference,
or the exception (the import and load_inline build included).

    .venv/bin/python reference/cuda-full/.check.py --data-dir var/data --sf 0.1 [--queries 13 17]

Each file is loaded as the runner loads it (evaluator/runner/kernel_loader.py) and its run_query held to
the spec's defaults, its ranges' ends and seeded draws (evaluator/tools/validate.py). A dotfile, so that
the folder stays a valid kernel set (a set holds only manifest.json and qNN.py; dotfiles are skipped).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the repository root, for `evaluator`

from evaluator.queries import QUERIES  # noqa: E402
from evaluator.runner.kernel_loader import load_kernel  # noqa: E402
from evaluator.tools.validate import validate_query  # noqa: E402
from evaluator.tpch.generate import sf_dir  # noqa: E402


def check(number: int, sf_folder: Path, device: str, random_sets: int, seed: int) -> str:
    """One query's line: ok (with its trials), the first difference, or the exception."""
    query = QUERIES[number]
    try:
        kernel = load_kernel(query, HERE / f"{query.slug}.py", "full")
        result = validate_query(
            query, sf_folder, device=device, random_sets=random_sets, seed=seed, run_query=kernel
        )
    except Exception as exc:  # the report is the point: one query's failure must not stop the others
        last = traceback.extract_tb(exc.__traceback__)[-1]
        return f"q{number:02d} error: {type(exc).__name__}: {exc} ({Path(last.filename).name}:{last.lineno})"
    if not result.passed:
        return f"q{number:02d} WRONG after {result.trials} trials: {result.reason}"
    note = f" ({result.reason})" if result.reason else ""
    return f"q{number:02d} ok: {result.trials} trials, slowest call {result.plan_ms:.1f} ms{note}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("var/data"))
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--queries", type=int, nargs="*", help="query numbers (default: every qNN.py here)")
    parser.add_argument("--random-sets", type=int, default=5)
    parser.add_argument("--seed", type=int, default=19)
    args = parser.parse_args()
    numbers = args.queries or sorted(int(p.stem[1:]) for p in HERE.glob("q[0-9][0-9].py"))
    sf_folder = sf_dir(args.data_dir, args.sf)
    if not sf_folder.is_dir():
        parser.error(f"{sf_folder} does not exist: python -m evaluator prepare --sf {args.sf:g}")
    failed = 0
    for number in numbers:
        line = check(number, sf_folder, args.device, args.random_sets, args.seed)
        failed += not line.split(" ", 2)[1].startswith("ok")
        print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
