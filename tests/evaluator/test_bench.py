"""The baseline benchmark on the CPU: every figure comes with a checked answer."""

from __future__ import annotations

from pathlib import Path

import torch

from evaluator.queries import QUERIES
from evaluator.timing import TimingPolicy
from evaluator.tools.bench import bench_query, table


def test_a_bench_row_checks_and_times_the_plan_and_the_compilers_program(sf001: Path) -> None:
    policy = TimingPolicy(min_reps=3, min_time_s=0.0, max_time_s=0.05, warmup_reps=1, warmup_s=0.0)
    row = bench_query(QUERIES[6], sf001, torch.device("cpu"), None, policy, generated=True)
    assert row.correct and row.generated_correct, row.note
    assert row.duckdb_ms > 0 and row.eager_ms and row.compiled_ms and row.generated_ms
    rendered = table([row])
    assert "generated compiled ms" in rendered.splitlines()[0]
    assert rendered.splitlines()[2].startswith("| Q06 |")
