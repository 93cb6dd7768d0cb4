"""The reference kernel sets (reference/, issue 19) answer like DuckDB on the CPU, in Triton's interpreter:
the spec's defaults, its ranges' ends and seeded draws at SF0.01 (evaluator/tools/validate.py), each kernel
loaded as the runner loads it. The harness's own path (SF0.1 checks, timing, fresh sets, attribution) is
what the kernels' authors ran; their speed is the H200's to show (docs/benchmarks.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.harness.admission import check
from evaluator.kernelset import kernel_set_from_dir
from evaluator.queries import QUERIES
from evaluator.runner.kernel_loader import load_kernel
from evaluator.tools.validate import validate_query

ROOT = Path(__file__).resolve().parents[2]
TRITON_FULL = ROOT / "reference" / "triton-full"
KERNELS = sorted(kernel_set_from_dir(TRITON_FULL).kernels)


def test_the_triton_set_is_a_valid_kernel_set_admitted_whole() -> None:
    kernel_set = kernel_set_from_dir(TRITON_FULL)
    assert kernel_set.manifest.language == "triton" and kernel_set.manifest.scope == "full"
    for number in KERNELS:
        path = TRITON_FULL / f"{QUERIES[number].slug}.py"
        assert check(path.read_text(), path.name, language="triton") == []


@pytest.mark.parametrize("number", KERNELS)
def test_a_triton_reference_kernel_matches_duckdb(number: int, sf001: Path) -> None:
    query = QUERIES[number]
    kernel = load_kernel(query, TRITON_FULL / f"{query.slug}.py", "full")
    result = validate_query(query, sf001, random_sets=3, seed=19, run_query=kernel)
    assert result.passed, result.reason
