from __future__ import annotations

import json
from pathlib import Path

from evaluator.queries import QUERIES
from evaluator.tools.taskpack import write_taskpack


def test_the_taskpack_holds_each_querys_sql_plan_signature_and_workload(sf001: Path, tmp_path: Path) -> None:
    folders = write_taskpack(tmp_path / "pack", sf001, "h200")
    assert [f.name for f in folders] == [q.slug for q in QUERIES.values()]
    q06 = tmp_path / "pack" / "q06"
    assert "l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01" in (q06 / "query.sql").read_text()
    assert "def run_query(" in (q06 / "torchplan.py").read_text()
    assert (q06 / "core_signature.txt").read_text().startswith("def _query_core(l_shipdate")
    workload = json.loads((q06 / "workload.json").read_text())
    assert workload["tables"]["lineitem"]["rows"] == 60175
    assert workload["bytes_read"] == 60175 * (4 + 8 + 8 + 8)
    assert workload["result_rows_with_default_parameters"] == 1
    q03 = json.loads((tmp_path / "pack" / "q03" / "workload.json").read_text())
    assert q03["tables"]["customer"]["columns"]["c_custkey"]["distinct"] == 1500
    hardware = json.loads((tmp_path / "pack" / "hardware.json").read_text())
    assert hardware["peak_bandwidth_gbs"] == 4800 and hardware["sm_count"] == 132
