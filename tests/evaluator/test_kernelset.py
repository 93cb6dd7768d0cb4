from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from evaluator.errors import SubmissionError
from evaluator.kernelset import kernel_set_from_archive, kernel_set_from_dir, kernel_set_from_files

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MANIFEST = {"model": "gpt-x", "language": "triton", "scope": "full"}


def files(manifest=MANIFEST, **kernels: str) -> dict[str, bytes]:
    out = {"manifest.json": json.dumps(manifest).encode()}
    out |= {f"{name}.py": source.encode() for name, source in kernels.items()}
    return out


def code_of(files_: dict[str, bytes]) -> str:
    with pytest.raises(SubmissionError) as caught:
        kernel_set_from_files(files_)
    return caught.value.code


def test_it_reads_the_example_sets() -> None:
    for example in ("triton-q06-full", "triton-q06-core"):
        kernel_set = kernel_set_from_dir(EXAMPLES / example)
        assert kernel_set.manifest.language == "triton"
        assert set(kernel_set.kernels) == {6}


def test_it_defaults_context_to_none_and_keeps_the_rest() -> None:
    kernel_set = kernel_set_from_files(files(MANIFEST | {"agent": "loop", "repair_rounds": 3}, q06="x = 1"))
    assert kernel_set.manifest.context == "none"
    assert (kernel_set.manifest.agent, kernel_set.manifest.repair_rounds) == ("loop", 3)


@pytest.mark.parametrize(
    ("manifest", "code"),
    [
        ({"language": "triton", "scope": "full"}, "manifest_model"),
        (MANIFEST | {"language": "rust"}, "manifest_language"),
        (MANIFEST | {"scope": "half"}, "manifest_scope"),
        (MANIFEST | {"context": "everything"}, "manifest_context"),
        (MANIFEST | {"repair_rounds": -1}, "manifest_repair_rounds"),
        (MANIFEST | {"repair_rounds": True}, "manifest_repair_rounds"),
        (MANIFEST | {"temperature": 0.2}, "manifest_unknown_key"),
        ([1, 2], "manifest_not_object"),
    ],
)
def test_it_rejects_a_bad_manifest_with_a_stable_code(manifest, code: str) -> None:
    assert code_of(files(manifest, q06="x = 1")) == code


def test_it_rejects_a_manifest_that_is_not_json() -> None:
    assert code_of({"manifest.json": b"{model: x", "q06.py": b""}) == "manifest_invalid_json"


def test_it_rejects_a_set_without_manifest_or_kernels() -> None:
    assert code_of({"q06.py": b"x = 1"}) == "manifest_missing"
    assert code_of(files()) == "no_kernels"


def test_it_rejects_files_outside_the_format() -> None:
    assert code_of(files(q23="x = 1")) == "unexpected_file"
    assert code_of(files() | {"helpers.py": b""}) == "unexpected_file"
    assert code_of(files() | {"sub/q06.py": b""}) == "nested_path"


def test_it_reports_a_syntax_error_with_its_line() -> None:
    with pytest.raises(SubmissionError) as caught:
        kernel_set_from_files(files(q06="import torch\n\ndef run_query(:\n    pass\n"))
    assert caught.value.code == "kernel_syntax"
    assert "q06.py, line 3" in caught.value.message


def test_it_reads_a_zip_with_one_top_level_folder() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, raw in files(q06="x = 1").items():
            archive.writestr(f"my-set/{name}", raw)
        archive.writestr("my-set/.DS_Store", b"junk")
    kernel_set = kernel_set_from_archive(buffer.getvalue(), "my-set.zip")
    assert kernel_set.kernels == {6: "x = 1"}


def test_it_rejects_an_archive_with_a_path_outside_the_set() -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, raw in (files(q06="x = 1") | {"../../etc/cron.d/evil": b"* * * * * root sh"}).items():
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            archive.addfile(info, io.BytesIO(raw))
    with pytest.raises(SubmissionError) as caught:
        kernel_set_from_archive(buffer.getvalue(), "set.tar.gz")
    assert caught.value.code == "archive_path"


def test_it_rejects_a_symlink_inside_a_tar() -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        link = tarfile.TarInfo("q06.py")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        archive.addfile(link)
    with pytest.raises(SubmissionError) as caught:
        kernel_set_from_archive(buffer.getvalue(), "set.tar")
    assert caught.value.code == "archive_link"


def test_it_rejects_a_corrupt_or_unknown_archive() -> None:
    with pytest.raises(SubmissionError) as caught:
        kernel_set_from_archive(b"not a zip", "set.zip")
    assert caught.value.code == "archive_corrupt"
    with pytest.raises(SubmissionError) as caught:
        kernel_set_from_archive(b"", "set.rar")
    assert caught.value.code == "archive_type"


def test_a_kernel_set_writes_back_to_the_same_set(tmp_path: Path) -> None:
    original = kernel_set_from_dir(EXAMPLES / "triton-q06-core")
    original.write(tmp_path / "copy")
    assert kernel_set_from_dir(tmp_path / "copy") == original
