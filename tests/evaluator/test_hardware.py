"""What the trusted side reads about the GPU and the bytes a query must read: the roofline's inputs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evaluator import hardware
from evaluator.harness.core import _roofline
from evaluator.queries import QUERIES
from evaluator.report import QueryResult, Status
from evaluator.tpch.load import column_bytes, load_tables, scan_bytes


@pytest.mark.parametrize("number", [1, 6, 9, 13, 22])
def test_column_bytes_from_the_metadata_equal_the_loaded_tensors(number: int, sf001: Path) -> None:
    columns = QUERIES[number].columns()
    assert column_bytes(sf001, columns) == load_tables(sf001, columns).nbytes() > 0


@pytest.mark.parametrize(
    ("number", "table", "column"),
    [(1, "lineitem", "l_returnflag"), (15, "lineitem", "l_shipdate"), (2, "partsupp", "ps_partkey")],
)
def test_the_scan_floor_is_one_pass_over_the_largest_tables_narrowest_column(
    number: int, table: str, column: str, sf001: Path
) -> None:
    columns = QUERIES[number].columns()
    one_column = load_tables(sf001, {table: (column,)})
    assert (
        scan_bytes(sf001, columns)
        == one_column.nbytes()
        == min(load_tables(sf001, {table: (c,)}).nbytes() for c in columns[table])
    )
    assert scan_bytes(sf001, columns) < column_bytes(sf001, columns)


def _judged(kernel_ms: float, speedup: float = 2.0) -> QueryResult:
    # At 3,350 GB/s (an H100's peak) the query's columns take 0.504 ms, one column of lineitem 0.072 ms.
    result = QueryResult(query=15, status=Status.PASSED, kernel_ms=kernel_ms, speedup=speedup)
    _roofline(result, nbytes=1_688_400_000, scan_nbytes=241_200_000, peak_gbs=3350.0)
    return result


def test_a_kernel_under_the_columns_floor_but_over_one_pass_is_flagged_not_rejected() -> None:
    # Session 39's CUDA reference Q15 on an H100: 0.447 ms, its pass over lineitem 294 us of device
    # time, under the 504 us that reading its four columns whole takes at peak.
    result = _judged(0.447)
    assert result.status == Status.PASSED
    assert result.roofline_fraction == pytest.approx(0.504 / 0.447, rel=1e-3)
    assert (
        "faster than reading the query's columns once at peak bandwidth (0.504 ms)" in result.stats["flagged"]
    )
    assert result.stats["scan_floor_ms"] == pytest.approx(0.072, rel=1e-3)


def test_a_kernel_under_one_pass_over_the_largest_table_is_rejected() -> None:
    result = _judged(0.05)
    assert result.status == Status.REJECTED
    assert "under the 0.072 ms it takes to read one column of the largest table" in result.reason


def test_near_the_columns_floor_or_ten_times_faster_is_flagged() -> None:
    assert _judged(0.55).stats["flagged"].startswith("near the bandwidth floor")
    assert _judged(1.0, speedup=12.0).stats["flagged"].startswith("near the bandwidth floor")
    assert "flagged" not in _judged(1.0).stats


def test_the_gpu_state_is_read_from_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No GPU here: a stand-in nvidia-smi that answers like the H200 host's and records its arguments.
    fake = tmp_path / "nvidia-smi"
    answer = "NVIDIA H200, 580.159.04, 1980, 3201, 41"
    fake.write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/argv\necho "{answer}"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    state = hardware.gpu_state("cuda:1")
    assert state == {
        "name": "NVIDIA H200",
        "driver": "580.159.04",
        "sm_clock_mhz": "1980",
        "memory_clock_mhz": "3201",
        "temperature_c": "41",
    }
    assert (tmp_path / "argv").read_text().split()[-2:] == ["-i", "1"]
    assert hardware.peak_bandwidth_gbs(state["name"]) == 4800.0


def test_without_nvidia_smi_there_is_no_gpu_state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert hardware.gpu_state("cuda") is None
