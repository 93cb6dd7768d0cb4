"""`python -m evaluator check qNN.py`: fast feedback on one kernel, for execution-guided repair.

Runs the same admission, build, correctness trials and (on a GPU) timing as a full evaluation, for one
query, and answers with a stable JSON document (schema below) that an agent loop can parse.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from evaluator import HARNESS_VERSION, evaluation
from evaluator.errors import SubmissionError
from evaluator.harness import admission
from evaluator.kernelset import Manifest, check_kernel_source

CHECK_SCHEMA_VERSION = 1
KERNEL_FILE = re.compile(r"^q(0[1-9]|1[0-9]|2[0-2])\.py$")


def check_kernel(
    path: Path, *, language: str, scope: str, job: evaluation.Job, backend: str = "process"
) -> dict[str, Any]:
    """Evaluate one kernel file through the evaluation's one way in (`job` says where and how; its
    kernel folder is made here); the result is JSON-ready (keys documented in docs/kernel-format.md)."""
    if not KERNEL_FILE.match(path.name):
        raise SubmissionError("kernel_name", f"{path.name}: name the file after its query, q01.py .. q22.py")
    source = check_kernel_source(path.name, path.read_bytes())
    number = int(path.name[1:3])
    with tempfile.TemporaryDirectory(prefix="dkb-check-") as scratch:
        folder = Path(scratch)
        manifest = Manifest(model="check", language=language, scope=scope)
        (folder / "manifest.json").write_text(json.dumps(manifest.to_dict()))
        (folder / path.name).write_text(source)
        report = evaluation.evaluate(replace(job, kernel_dir=folder, queries=(number,)), backend=backend)
    (result,) = report["queries"]
    return {
        "schema_version": CHECK_SCHEMA_VERSION,
        "harness_version": HARNESS_VERSION,
        "query": number,
        "language": language,
        "scope": scope,
        "hardware": report["hardware"],
        "scale_factor": report["scale_factor"],
        "status": result["status"],
        "reason": result["reason"],
        "admission": [asdict(v) for v in admission.check(source, path.name, language=language)],
        "trials": result["trials"],
        "baseline_ms": result["baseline_ms"],
        "kernel_ms": result["kernel_ms"],
        "speedup": result["speedup"],
        "roofline_fraction": result["roofline_fraction"],
    }
