"""Regenerate the leaderboard tests' report: a real CPU evaluation of examples/triton-q06-full.

    .venv/bin/python scripts/report_fixture.py            # writes tests/leaderboard/fixtures/...
    .venv/bin/python scripts/report_fixture.py --out x.json

The leaderboard's tests build their reports from this file (tests/conftest.py, `make_report`), so what
they store and show is what the harness writes: its version, baseline mode, sandbox and keys. Run it after
any change to the report (docs/report-schema.md) and commit the result; about 30 s on two cores. It runs
the evaluator's own CLI in the site's sandbox (bubblewrap) with a fixed seed, on SF0.01 data made in a
temporary folder (or --data-dir's).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNEL_SET = ROOT / "examples" / "triton-q06-full"
FIXTURE = ROOT / "tests" / "leaderboard" / "fixtures" / "report-triton-q06-full-cpu.json"


def evaluate(out: Path, data_dir: Path) -> dict[str, object]:
    """The report `python -m evaluator run` writes for the example on this CPU."""
    subprocess.run(
        [sys.executable, "-m", "evaluator", "prepare", "--sf", "0.01", "--data-dir", str(data_dir)],
        cwd=ROOT,
        check=True,
    )
    command = [
        sys.executable,
        "-m",
        "evaluator",
        "run",
        str(KERNEL_SET),
        "--sf",
        "0.01",
        "--data-dir",
        str(data_dir),
        "--device",
        "cpu",
        "--sandbox",
        "bubblewrap",
        "--seed",
        "1",
        "--out",
        str(out),
    ]
    subprocess.run(command, cwd=ROOT, check=True)
    return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=FIXTURE)
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="SF0.01 data (default: a temporary folder)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = evaluate(Path(tmp) / "report.json", args.data_dir or Path(tmp) / "data")
    if report.get("queries") is None or not any(q["status"] == "passed" for q in report["queries"]):
        sys.exit("the example's Q6 did not pass: not writing a fixture of a broken evaluation")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # One key a line: a regenerated fixture's diff shows what the harness changed.
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"{args.out}: harness {report['harness_version']}, schema {report['schema_version']}")


if __name__ == "__main__":
    main()
