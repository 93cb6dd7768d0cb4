"""Baseline benchmark: `python -m evaluator bench --sf 10` (docs/benchmarks.md).

Per query: DuckDB with all the host's threads (warm, best of 3), the TorchPlan eager and with its
`_query_core` under torch.compile, as the harness compiles it (interleaved, the harness's timing), and
the bandwidth floor: bytes of the columns the query reads over the measured device-to-device copy
bandwidth. With `generated`, the compiler's program for the query (evaluator/torchplan/generated/) is
timed compiled too. Every timed plan's answer is checked against DuckDB: a fast wrong baseline would
make every kernel look slow.
"""

from __future__ import annotations

import importlib
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from evaluator import hardware
from evaluator.harness.compare import compare
from evaluator.queries import Query
from evaluator.timing import TimingPolicy, time_interleaved
from evaluator.tools.validate import decode_result, run_plan
from evaluator.tpch.generate import connect
from evaluator.tpch.load import load_tables
from evaluator.tpch.reference import reference_answer


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
    generated_ms: float | None = None  # the compiler's program, compiled the same way
    generated_correct: bool | None = None


def copy_bandwidth_gbs(device: torch.device) -> float | None:
    """The measured copy bandwidth the floor is computed against (evaluator/hardware.py); None off a GPU."""
    return hardware.copy_bandwidth_gbs(device) if device.type == "cuda" else None


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
    query: Query,
    sf_folder: Path,
    device: torch.device,
    bandwidth_gbs: float | None,
    policy: TimingPolicy,
    generated: bool = False,
) -> BenchRow:
    threads = os.cpu_count() or 1
    duck = duckdb_ms(sf_folder, query, threads)
    tables = load_tables(sf_folder, query.columns(), device)
    nbytes = tables.nbytes()
    floor = hardware.floor_ms(nbytes, bandwidth_gbs) if bandwidth_gbs else None
    expected = reference_answer(sf_folder, query, query.defaults)
    problem = compare(run_plan(query, tables, sf_folder, query.defaults), expected, query.order_by)
    if problem:
        return BenchRow(query.number, duck, None, None, floor, nbytes, None, False, f"eager: {problem}")
    eager = query.plan().run_query
    compiled = query.with_core(torch.compile(query.plan()._query_core))
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
    generated_ms, generated_correct, note = None, None, f"compiled: {problem}" if problem else ""
    if generated:
        try:
            generated_ms, generated_correct = _bench_generated(query, sf_folder, device, expected, policy)
        except Exception as exc:  # the baseline's figures stand without it
            generated_correct, note = False, f"{note} generated: {type(exc).__name__}: {exc}"[:300].strip()
    return BenchRow(
        query=query.number,
        duckdb_ms=duck,
        eager_ms=stats["eager"].median_ms,
        compiled_ms=stats["compiled"].median_ms,
        floor_ms=floor,
        bytes_read=nbytes,
        compile_s=compile_s,
        correct=problem is None,
        note=note,
        generated_ms=generated_ms,
        generated_correct=generated_correct,
    )


def _bench_generated(
    query: Query, sf_folder: Path, device: torch.device, expected: dict, policy: TimingPolicy
) -> tuple[float | None, bool]:
    """The compiler's program: checked against DuckDB, then timed with its core compiled."""
    module = importlib.import_module(f"evaluator.torchplan.generated.{query.slug}")
    tables = load_tables(sf_folder, module.COLUMNS, device)
    run = query.with_core(torch.compile(module._query_core), plan=module)
    params = dict(query.defaults)
    actual = decode_result(query, run(tables, **params), sf_folder, module.STRINGS)
    if compare(actual, expected, query.order_by) is not None:
        return None, False
    stats = time_interleaved({"generated": lambda: run(tables, **params)}, device=device, policy=policy)
    return stats["generated"].median_ms, True


def table(rows: list[BenchRow]) -> str:
    """A Markdown table, with the totals, for docs/benchmarks.md."""

    def fmt(value: float | None, digits: int = 2) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    generated = any(r.generated_correct is not None for r in rows)
    header = "| query | DuckDB ms | eager ms | compiled ms | baseline ms | floor ms | baseline vs DuckDB |"
    header += " compile s | correct |" + (" generated compiled ms |" if generated else "")
    lines = [header, "|---" * (header.count("|") - 1) + "|"]
    for r in rows:
        base = min(r.eager_ms, r.compiled_ms) if r.eager_ms and r.compiled_ms else None
        ratio = f"{r.duckdb_ms / base:.1f}x" if base else "-"
        correct = "yes" if r.correct else f"NO {r.note}"
        line = (
            f"| Q{r.query:02d} | {fmt(r.duckdb_ms, 1)} | {fmt(r.eager_ms)} | {fmt(r.compiled_ms)} | "
            f"{fmt(base)} | {fmt(r.floor_ms, 3)} | {ratio} | {fmt(r.compile_s, 1)} | {correct} |"
        )
        if generated:
            wrong = r.generated_correct is False
            line += " NO (wrong answer) |" if wrong else f" {fmt(r.generated_ms)} |"
        lines.append(line)
    done = [r for r in rows if r.compiled_ms is not None and r.eager_ms is not None]
    total = {k: sum(getattr(r, k) or 0 for r in done) for k in ("duckdb_ms", "eager_ms", "compiled_ms")}
    base_total = sum(
        min(r.eager_ms, r.compiled_ms) for r in done if r.eager_ms is not None and r.compiled_ms is not None
    )
    floor_total = sum(r.floor_ms or 0 for r in done)
    line = (
        f"| total ({len(done)}) | {total['duckdb_ms']:.1f} | {total['eager_ms']:.2f} | "
        f"{total['compiled_ms']:.2f} | {base_total:.2f} | {floor_total:.3f} | | | |"
    )
    if generated:
        line += f" {sum(r.generated_ms or 0 for r in done):.2f} |"
    lines.append(line)
    return "\n".join(lines)


def as_dicts(rows: list[BenchRow]) -> list[dict]:
    return [asdict(r) for r in rows]
