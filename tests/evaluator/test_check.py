"""`python -m evaluator check`: one kernel, stable JSON, an exit status an agent loop can branch on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.__main__ import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def check(capsys: pytest.CaptureFixture[str], data_root: Path, kernel: Path, *extra: str) -> tuple[int, dict]:
    code = main(["check", str(kernel), "--data-dir", str(data_root), "--trials", "2", "--seed", "3", *extra])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def test_a_good_kernel_passes_with_its_timing(capsys, data_root: Path) -> None:
    code, result = check(capsys, data_root, EXAMPLES / "triton-q06-core" / "q06.py", "--scope", "core")
    assert code == 0
    assert result["schema_version"] == 1 and result["query"] == 6 and result["status"] == "passed"
    assert result["kernel_ms"] > 0 and result["baseline_ms"] > 0 and result["admission"] == []


def test_a_wrong_kernel_says_where_it_differs_and_exits_1(capsys, data_root: Path, tmp_path: Path) -> None:
    source = (EXAMPLES / "triton-q06-core" / "q06.py").read_text()
    (tmp_path / "q06.py").write_text(source.replace("disc_lo = tl.load(bounds)", "disc_lo = 0.05"))
    code, result = check(capsys, data_root, tmp_path / "q06.py", "--scope", "core")
    assert code == 1
    assert result["status"] == "wrong_answer"
    assert "column 'revenue' differs at row 0" in result["reason"]


def test_a_refused_kernel_lists_the_rules_it_broke(capsys, data_root: Path, tmp_path: Path) -> None:
    (tmp_path / "q06.py").write_text("import ctypes\n\ndef run_query(tables, **params):\n    pass\n")
    code, result = check(capsys, data_root, tmp_path / "q06.py")
    assert code == 1 and result["status"] == "refused"
    assert result["admission"] == [
        {"rule": "forbidden-import", "line": 1, "message": "importing ctypes is not allowed"}
    ]


def test_a_file_not_named_after_its_query_is_an_error(capsys, data_root: Path, tmp_path: Path) -> None:
    (tmp_path / "revenue.py").write_text("x = 1\n")
    assert main(["check", str(tmp_path / "revenue.py"), "--data-dir", str(data_root)]) == 2
    assert "name the file after its query" in capsys.readouterr().err


def test_an_unknown_query_number_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["validate", "--queries", "6,23"])
    assert exited.value.code == 2
    assert "no such query: [23]" in capsys.readouterr().err
