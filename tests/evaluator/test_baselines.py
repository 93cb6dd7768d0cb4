"""Baselines fixed per hardware (evaluator/harness/baselines.py): calibrated once, recorded, read by
evaluations."""

from __future__ import annotations

import json
from pathlib import Path

from evaluator import HARNESS_VERSION
from evaluator.harness import baselines


def test_a_calibration_times_each_query_and_is_found_again_for_the_same_hardware(own_data: Path) -> None:
    sf_folder = own_data / "sf0.01"
    rows = baselines.calibrate(own_data, sf_folder, 0.01, "cpu", [6, 14])
    assert [row["query"] for row in rows] == [6, 14]
    for row in rows:  # on a CPU, eager only: its timings only show that a kernel runs
        assert row["mode"] == "eager" and row["eager_ms"] > 0 and row["compiled_ms"] is None
        assert row["rounds"] >= 10
    found = baselines.recorded(own_data, 0.01, "cpu")
    assert set(found) == {6, 14} and found[6] == rows[0]
    assert baselines.recorded(own_data, 0.1, "cpu") == {}  # another scale factor: not calibrated
    document = json.loads(baselines.record_path(own_data, "cpu").read_text())
    (entry,) = document["calibrations"]
    assert (
        entry["harness"] == HARNESS_VERSION and entry["hardware"] == "cpu" and entry["rule"] == baselines.RULE
    )


def test_a_record_from_another_harness_version_is_not_used(tmp_path: Path) -> None:
    row = {"query": 6, "mode": "compiled", "eager_ms": 2.0, "compiled_ms": 1.0}
    baselines.store(tmp_path, 10.0, "cpu", [row])
    assert baselines.recorded(tmp_path, 10.0, "cpu") == {6: row}
    path = baselines.record_path(tmp_path, "cpu")
    path.write_text(path.read_text().replace(HARNESS_VERSION, "0.0.1"))
    assert baselines.recorded(tmp_path, 10.0, "cpu") == {}


def test_the_rule_keeps_compiled_unless_eager_is_clearly_faster() -> None:
    assert baselines.choose(eager_ms=0.99, compiled_ms=1.0) == "compiled"  # within 2%
    assert baselines.choose(eager_ms=0.97, compiled_ms=1.0) == "eager"
    assert baselines.choose(eager_ms=1.5, compiled_ms=1.0) == "compiled"
    assert baselines.choose(eager_ms=1.5, compiled_ms=None) == "eager"
