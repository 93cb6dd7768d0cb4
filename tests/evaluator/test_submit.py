"""The submit client's own parts (the whole of it runs against the site in tests/leaderboard)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from evaluator.errors import SubmissionError
from evaluator.tools.submit import archive_of, multipart, progress_line, results_table

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = ROOT / "examples" / "triton-q06-full"


def test_it_imports_no_django_and_no_torch() -> None:
    # A researcher's machine has neither the web app's dependencies nor, necessarily, a GPU build.
    code = (
        "import evaluator.__main__, evaluator.tools.submit, sys; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'rest_framework', 'torch'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.strip() == "[]", done.stderr[-2000:]


def test_the_archive_is_the_same_bytes_for_the_same_set() -> None:
    archive = archive_of(EXAMPLE)
    assert archive == archive_of(EXAMPLE)
    names = zipfile.ZipFile(BytesIO(archive)).namelist()
    assert names == ["manifest.json", "q06.py"]


def test_the_archive_leaves_out_files_that_are_not_the_set(tmp_path: Path) -> None:
    for name in ("manifest.json", "q06.py"):
        (tmp_path / name).write_bytes((EXAMPLE / name).read_bytes())
    (tmp_path / ".DS_Store").write_bytes(b"\0")
    assert zipfile.ZipFile(BytesIO(archive_of(tmp_path))).namelist() == ["manifest.json", "q06.py"]


def test_a_folder_without_a_set_is_refused_before_any_upload(tmp_path: Path) -> None:
    with pytest.raises(SubmissionError) as caught:
        archive_of(tmp_path / "missing")
    assert caught.value.code == "not_a_directory"


def test_a_multipart_body_carries_its_fields_and_file() -> None:
    body, content_type = multipart({"kind": "feedback"}, {"archive": ("set.zip", b"PK\x03\x04data")})
    boundary = content_type.split("boundary=")[1]
    assert content_type.startswith("multipart/form-data; ")
    assert body.startswith(f"--{boundary}\r\n".encode()) and body.endswith(f"--{boundary}--\r\n".encode())
    assert b'name="kind"\r\n\r\nfeedback\r\n' in body
    assert b'name="archive"; filename="set.zip"' in body and b"PK\x03\x04data\r\n" in body


@pytest.mark.parametrize(
    ("run", "line"),
    [
        ({"status": "queued", "progress": None}, "queued"),
        ({"status": "running", "progress": None}, "running"),
        (
            {"status": "running", "progress": {"done": 1, "total": 3, "query": 14, "phase": "started"}},
            "running: query 2 of 3, Q14 started",
        ),
        (
            {
                "status": "running",
                "progress": {"done": 2, "total": 3, "query": 14, "phase": "ended", "status": "timeout"},
            },
            "running: query 2 of 3, Q14 ended (timeout)",
        ),
        (
            {"status": "succeeded", "progress": {"done": 3, "total": 3, "query": 1, "phase": "ended"}},
            "succeeded",
        ),
    ],
)
def test_a_runs_progress_reads_as_the_run_page_says_it(run: dict[str, object], line: str) -> None:
    assert progress_line(run) == line


def test_the_result_table_shows_missing_values_as_dashes_and_the_first_line_of_a_reason() -> None:
    table = results_table(
        {
            "rows": [
                {"query": 6, "status": "passed", "reason": "", "baseline_ms": 2.0, "kernel_ms": 0.5,
                 "speedup": 4.0},
                {"query": 14, "status": "wrong_answer", "reason": "row 3:\n 1.5 != 1.25", "baseline_ms": 2.0,
                 "kernel_ms": None, "speedup": None},
            ],
            "overall_speedup": 1.3, "geomean_speedup": None, "pass_rate": 0.5, "ranked": True,
        }
    )  # fmt: skip
    assert table.splitlines()[1:] == [
        "Q06   passed                2.000      0.500    4.00x",
        "Q14   wrong_answer          2.000          -        -  row 3: 1.5 != 1.25",
        "overall speedup 1.30x, geomean -, pass rate 50%",
    ]
