"""`python -m sandbox KERNEL_SET ...`: evaluate a kernel set inside the sandbox, as the worker does."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evaluator.harness import check_scale_factors
from sandbox.core import BACKENDS, Job, SandboxError, evaluate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description=__doc__)
    parser.add_argument("kernel_set", type=Path)
    parser.add_argument("--sf", type=float, default=0.01)
    parser.add_argument("--check-sf", default="auto", help="further SFs of the trials: auto, none, 1,0.1")
    parser.add_argument("--data-dir", type=Path, default=Path("var/data"))
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--backend", choices=BACKENDS, default="bubblewrap")
    parser.add_argument("--timeout", type=int, default=1800, help="wall-time limit, seconds")
    parser.add_argument("--max-time", type=float, help="timing budget per query, s (15 on a GPU, 2 on a CPU)")
    parser.add_argument("--out", type=Path, help="write the report here (default: stdout)")
    args = parser.parse_args(argv)
    try:
        checks = check_scale_factors(args.check_sf, args.sf)
    except ValueError as exc:
        parser.error(f"--check-sf {exc}")
    job = Job(
        kernel_dir=args.kernel_set,
        data_dir=args.data_dir,
        scale_factor=args.sf,
        device=args.device,
        timeout_s=args.timeout,
        max_time_per_query_s=args.max_time,
        check_scale_factors=checks,
    )
    try:
        report = evaluate(job, backend=args.backend)
    except SandboxError as exc:
        print(f"sandbox error: {exc}", file=sys.stderr)
        return 3
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
