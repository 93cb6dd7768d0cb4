"""What the trusted side reads about the GPU and the bytes a query must read: the roofline's inputs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evaluator import hardware
from evaluator.queries import QUERIES
from evaluator.tpch.load import column_bytes, load_tables


@pytest.mark.parametrize("number", [1, 6, 9, 13, 22])
def test_column_bytes_from_the_metadata_equal_the_loaded_tensors(number: int, sf001: Path) -> None:
    columns = QUERIES[number].columns()
    assert column_bytes(sf001, columns) == load_tables(sf001, columns).nbytes() > 0


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
