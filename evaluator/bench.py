"""Baseline benchmark: `python -m evaluator bench --sf 10` (docs/benchmarks.md).

Per query: DuckDB with all the host's threads (warm, best of 3), the TorchPlan eager and under
torch.compile (interleaved, the harness's timing), and the bandwidth floor: bytes of the columns the
query reads over the measured device-to-device copy bandwidth. Every timed plan's answer is checked
against DuckDB first: a fast wrong baseline would make every kernel look slow.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from evaluator.compare import compare
from evaluator.queries import Query
from evaluator.timing import TimingPolicy, time_interleaved
from evaluator.tpch.generate import connect
from evaluator.tpch.load import load_tables
from evaluator.tpch.reference import reference_answer
from evaluator.validate import decode_result, run_plan


@dataclass
class BenchRow:
    query: int
    duckdb_ms: float
    eager_ms: float | None
    compiled_ms: float | None
    floor_ms: float | None
    bytes_read: int
    compile_s: float | None
    correct: bool
    note: str = ""


def copy_bandwidth_gbs(device: torch.device) -> float | None:
    """Device-to-device copy of 2 GiB, counting bytes read plus bytes written."""
    if device.type != "cuda":
        return None
    src = torch.empty(2**31 // 4, dtype=torch.float32, device=device).uniform_()
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize(device)
    samples = []
    for _ in range(10):
        start = time.perf_counter()
        dst.copy_(src)
        torch.cuda.synchronize(device)
        samples.append(time.perf_counter() - start)
    return 2 * src.numel() * 4 / min(samples) / 1e9


def duckdb_ms(sf_folder: Path, query: Query, threads: int, repeats: int = 3) -> float:
    con = connect(sf_folder / "tpch.duckdb", read_only=True)
    try:
        con.execute(f"SET threads = {threads}")
        sql = query.sql()
        con.execute(sql).fetchall()  # warm: buffer pool and catalog
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            con.execute(sql).fetchall()
            best = min(best, time.perf_counter() - start)
        return best * 1e3
    finally:
        con.close()


def bench_query(
    query: Query, sf_folder: Path, device: torch.device, bandwidth_gbs: float | None, policy: TimingPolicy
) -> BenchRow:
    threads = os.cpu_count() or 1
    duck = duckdb_ms(sf_folder, query, threads)
    tables = load_tables(sf_folder, query.columns(), device)
    nbytes = tables.nbytes()
    floor = nbytes / (bandwidth_gbs * 1e9) * 1e3 if bandwidth_gbs else None
    expected = reference_answer(sf_folder, query, query.defaults)
    problem = compare(run_plan(query, tables, sf_folder, query.defaults), expected, query.order_by)
    if problem:
        return BenchRow(query.number, duck, None, None, floor, nbytes, None, False, f"eager: {problem}")
    eager = query.plan().run_query
    compiled = torch.compile(eager)
    start = time.perf_counter()
    result = compiled(tables, **query.defaults)  # the first call compiles
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    compile_s = time.perf_counter() - start
    del result
    params = dict(query.defaults)
    stats = time_interleaved(
        {"eager": lambda: eager(tables, **params), "compiled": lambda: compiled(tables, **params)},
        device=device,
        policy=policy,
    )
    problem = compare(decode_result(query, compiled(tables, **params), sf_folder), expected, query.order_by)
    return BenchRow(
        query=query.number,
        duckdb_ms=duck,
        eager_ms=stats["eager"].median_ms,
        compiled_ms=stats["compiled"].median_ms,
        floor_ms=floor,
        bytes_read=nbytes,
        compile_s=compile_s,
        correct=problem is None,
        note=f"compiled: {problem}" if problem else "",
    )


def table(rows: list[BenchRow]) -> str:
    """A Markdown table, with the totals, for docs/benchmarks.md."""

    def fmt(value: float | None, digits: int = 2) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    header = "| query | DuckDB ms | eager ms | compiled ms | floor ms | compiled vs DuckDB | compile s |"
    lines = [
        header + " correct |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = f"{r.duckdb_ms / r.compiled_ms:.1f}x" if r.compiled_ms else "-"
        correct = "yes" if r.correct else f"NO {r.note}"
        lines.append(
            f"| Q{r.query:02d} | {fmt(r.duckdb_ms, 1)} | {fmt(r.eager_ms)} | {fmt(r.compiled_ms)} | "
            f"{fmt(r.floor_ms, 3)} | {ratio} | {fmt(r.compile_s, 1)} | {correct} |"
        )
    done = [r for r in rows if r.compiled_ms is not None]
    total = {k: sum(getattr(r, k) or 0 for r in done) for k in ("duckdb_ms", "eager_ms", "compiled_ms")}
    floor_total = sum(r.floor_ms or 0 for r in done)
    lines.append(
        f"| total ({len(done)}) | {total['duckdb_ms']:.1f} | {total['eager_ms']:.2f} | "
        f"{total['compiled_ms']:.2f} | {floor_total:.3f} | | | |"
    )
    return "\n".join(lines)


def as_dicts(rows: list[BenchRow]) -> list[dict]:
    return [asdict(r) for r in rows]
