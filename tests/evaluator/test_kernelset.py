from __future__ import annotations

import io
import json
import random
import struct
import tarfile
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from evaluator.errors import SubmissionError
from evaluator.kernelset import (
    MAX_ARCHIVE_BYTES,
    MAX_ARCHIVE_ENTRIES,
    kernel_set_from_archive,
    kernel_set_from_dir,
    kernel_set_from_files,
)

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


def test_a_manifest_missing_several_keys_is_told_all_of_them_at_once() -> None:
    with pytest.raises(SubmissionError) as refused:
        kernel_set_from_files(files({"model": "X"}, q06="x = 1"))
    assert (refused.value.code, refused.value.message) == (
        "manifest_language",
        "manifest.json needs 'language' (triton or cuda) and 'scope' (full or core)",
    )


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


# --- archives are judged by what they declare before anything is inflated ---------------------------

ZEROS_50_MB = bytes(50 * 1024 * 1024)  # deflates to about 50 KB


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, raw in members.items():
            archive.writestr(name, raw)
    return buffer.getvalue()


def archive_refusal(data: bytes, filename: str) -> tuple[str, int]:
    """The refusal's code and the peak memory, in bytes, that reading the archive allocated."""
    tracemalloc.start()
    try:
        with pytest.raises(SubmissionError) as caught:
            kernel_set_from_archive(data, filename)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return caught.value.code, peak


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the zip members whose data was read: ZipFile.open is zipfile's one way to a member."""
    names: list[str] = []
    original = zipfile.ZipFile.open

    def recording_open(self: zipfile.ZipFile, name, mode: str = "r", *args, **kwargs):
        if mode == "r":  # the test's own writes go through open too
            names.append(name.filename if isinstance(name, zipfile.ZipInfo) else name)
        return original(self, name, mode, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", recording_open)
    return names


def test_a_zip_bomb_member_is_refused_by_its_declared_size_before_it_is_inflated(opened) -> None:
    data = zip_bytes(files(q06="x = 1") | {"q07.py": ZEROS_50_MB})
    assert len(data) < 1024 * 1024
    code, peak = archive_refusal(data, "set.zip")
    assert code == "kernel_too_large"
    assert opened == [] and peak < 2 * 1024 * 1024


def test_a_zip_of_ten_thousand_empty_entries_is_refused_before_its_directory_is_read(opened) -> None:
    data = zip_bytes({f"q{i}.py": b"" for i in range(10_000)})
    code, peak = archive_refusal(data, "set.zip")
    assert code == "archive_too_many_entries"
    assert opened == [] and peak < 2 * 1024 * 1024


def test_a_member_that_packs_more_than_a_hundredfold_is_refused_unread(opened) -> None:
    data = zip_bytes(files(q06="x = 1") | {"q07.py": bytes(200 * 1024)})  # under the 256 KiB cap
    code, _ = archive_refusal(data, "set.zip")
    assert code == "archive_compression_ratio" and opened == []


def test_members_that_add_up_past_the_archive_limit_are_refused_unread(opened) -> None:
    # Hex digits pack about 2x, so no member's ratio or size is refused, only their sum (9.75 MiB).
    members = {f"q{n:02d}.py": random.Random(n).randbytes(128 * 1024).hex().encode() for n in range(1, 23)}
    members |= {f"notes/{n}.txt": random.Random(n).randbytes(128 * 1024).hex().encode() for n in range(17)}
    code, _ = archive_refusal(zip_bytes(files() | members), "set.zip")
    assert code == "archive_unpacked_too_large" and opened == []


def test_a_member_that_unpacks_past_the_size_its_directory_declares_is_refused(monkeypatch) -> None:
    data = bytearray(zip_bytes(files() | {"q06.py": b"x = 1\n" * 4000}))
    record = data.rfind(b"PK\x01\x02")  # q06.py's central-directory record, written last
    assert data[record + 46 : record + 52] == b"q06.py"
    struct.pack_into("<L", data, record + 24, 6)  # it now claims to unpack to 6 bytes
    requested: dict[str, int] = {}
    original = zipfile.ZipExtFile.read

    def recording_read(self: zipfile.ZipExtFile, n: int = -1) -> bytes:
        requested[self.name] = n
        return original(self, n)

    monkeypatch.setattr(zipfile.ZipExtFile, "read", recording_read)
    with pytest.raises(SubmissionError) as caught:
        kernel_set_from_archive(bytes(data), "set.zip")
    assert caught.value.code == "archive_member_corrupt" and "q06.py" in caught.value.message
    assert requested["q06.py"] == 7  # the declared size + 1, never the whole stream


def test_macos_folders_and_dotfiles_in_a_zip_are_skipped_unread(opened) -> None:
    members = {f"my-set/{name}": raw for name, raw in files(q06="x = 1").items()}
    members |= {"my-set/.DS_Store": b"\0" * 6148, "__MACOSX/my-set/._q06.py": b"\0" * 4096}
    kernel_set = kernel_set_from_archive(zip_bytes(members), "my-set.zip")
    assert kernel_set.kernels == {6: "x = 1"}
    assert opened == ["my-set/manifest.json", "my-set/q06.py"]


def test_a_tar_gz_bomb_is_refused_without_unpacking_it_whole() -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        info = tarfile.TarInfo("q06.py")
        info.size = len(ZEROS_50_MB)
        archive.addfile(info, io.BytesIO(ZEROS_50_MB))
    code, peak = archive_refusal(buffer.getvalue(), "set.tar.gz")
    assert code == "archive_unpacked_too_large"
    assert peak < 3 * MAX_ARCHIVE_BYTES  # the capped stream, not its 50 MB


def test_a_tar_with_more_entries_than_the_limit_is_refused() -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for i in range(MAX_ARCHIVE_ENTRIES + 1):
            archive.addfile(tarfile.TarInfo(f"empty-{i}"), io.BytesIO(b""))
    code, _ = archive_refusal(buffer.getvalue(), "set.tar")
    assert code == "archive_too_many_entries"


def test_a_compressed_archive_named_tar_is_not_silently_decompressed() -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:bz2") as archive:
        for name, raw in files(q06="x = 1").items():
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            archive.addfile(info, io.BytesIO(raw))
    code, _ = archive_refusal(buffer.getvalue(), "set.tar")
    assert code == "archive_corrupt"
