"""`python -m sandbox KERNEL_SET ...`: `python -m evaluator run KERNEL_SET --sandbox bubblewrap ...`, the
site's way of evaluating a set (the same entry point: evaluator/evaluation.py)."""

from __future__ import annotations

import sys

from evaluator.__main__ import main as evaluator_main


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not any(a == "--sandbox" or a.startswith("--sandbox=") for a in argv):
        argv += ["--sandbox", "bubblewrap"]
    return evaluator_main(["run", *argv])


if __name__ == "__main__":
    sys.exit(main())
