"""The kernel-set format: `manifest.json` plus `qNN.py` files (docs/kernel-format.md).

Everything here validates untrusted input and raises `SubmissionError` with a stable code and a message
meant for the uploader; nothing is executed.
"""

from __future__ import annotations

import ast
import gzip
import io
import json
import lzma
import re
import tarfile
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from evaluator.errors import SubmissionError

LANGUAGES = ("triton", "cuda")
SCOPES = ("full", "core")
CONTEXTS = ("workload", "hardware", "both", "none")
KERNEL_NAME = re.compile(r"^q(0[1-9]|1[0-9]|2[0-2])\.py$")
MAX_FILE_BYTES = 256 * 1024
MAX_ARCHIVE_BYTES = 8 * 1024 * 1024
MAX_FILES = 40
# Room for folder entries and the __MACOSX/ copies macOS adds beside each file, which are skipped unread.
MAX_ARCHIVE_ENTRIES = 4 * MAX_FILES
# Python source packs 3-10x; a member of zeros packs about 1000x.
MAX_COMPRESSION_RATIO = 100
RATIO_FLOOR_BYTES = 8 * 1024  # below this a high ratio is harmless and short files can show one
# A tar unpacked from gzip: the files, plus a header and padding per entry and the end blocks.
MAX_TAR_BYTES = MAX_ARCHIVE_BYTES + MAX_ARCHIVE_ENTRIES * 1024 + 20 * 512
_ZIP_DIRECTORY_RECORD = b"PK\x01\x02"
# What zipfile raises for a member that is truncated, fails its CRC, is encrypted or uses an unknown method.
_MEMBER_READ_ERRORS = (
    zipfile.BadZipFile,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    RuntimeError,
    NotImplementedError,
)


@dataclass(frozen=True)
class Manifest:
    model: str
    language: str
    scope: str
    context: str = "none"
    agent: str = ""
    repair_rounds: int = 0
    notes: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "language": self.language,
            "scope": self.scope,
            "context": self.context,
            "agent": self.agent,
            "repair_rounds": self.repair_rounds,
            "notes": self.notes,
        }


@dataclass(frozen=True)
class KernelSet:
    manifest: Manifest
    kernels: dict[int, str] = field(default_factory=dict)  # query number -> Python source

    def write(self, directory: Path) -> None:
        """Write the set as a folder the evaluator can run."""
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "manifest.json").write_text(json.dumps(self.manifest.to_dict(), indent=2))
        for number, source in self.kernels.items():
            (directory / f"q{number:02d}.py").write_text(source)


def parse_manifest(raw: bytes | str) -> Manifest:
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SubmissionError("manifest_invalid_json", f"manifest.json is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise SubmissionError("manifest_not_object", "manifest.json must be a JSON object")
    known = {"model", "language", "scope", "context", "agent", "repair_rounds", "notes"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise SubmissionError("manifest_unknown_key", f"manifest.json has unknown keys: {', '.join(unknown)}")
    missing = [key for key in ("model", "language", "scope") if key not in data]
    if missing:  # all of them at once, not one upload per key
        needs = {"model": "the LLM's name", "language": " or ".join(LANGUAGES), "scope": " or ".join(SCOPES)}
        wanted = " and ".join(f"'{key}' ({needs[key]})" for key in missing)
        raise SubmissionError(f"manifest_{missing[0]}", f"manifest.json needs {wanted}")
    model = data.get("model")
    if not isinstance(model, str) or not model.strip() or len(model) > 100:
        raise SubmissionError("manifest_model", "manifest.json needs 'model': the LLM's name (1-100 chars)")
    choices = {"language": LANGUAGES, "scope": SCOPES, "context": CONTEXTS}
    values: dict[str, str] = {}
    for key, allowed in choices.items():
        value = data.get(key, "none" if key == "context" else None)
        if value not in allowed:
            raise SubmissionError(
                f"manifest_{key}", f"manifest.json '{key}' must be one of {', '.join(allowed)}; got {value!r}"
            )
        values[key] = value
    rounds = data.get("repair_rounds", 0)
    if not isinstance(rounds, int) or isinstance(rounds, bool) or not 0 <= rounds <= 1000:
        raise SubmissionError(
            "manifest_repair_rounds", "manifest.json 'repair_rounds' must be an integer 0-1000"
        )
    for key in ("agent", "notes"):
        if not isinstance(data.get(key, ""), str):
            raise SubmissionError(f"manifest_{key}", f"manifest.json '{key}' must be a string")
    return Manifest(
        model=model.strip(),
        agent=data.get("agent", "")[:200],
        notes=data.get("notes", "")[:5000],
        repair_rounds=rounds,
        **values,
    )


def check_kernel_source(name: str, raw: bytes) -> str:
    """Decode one kernel file and check that it is Python; the line number goes into the error."""
    if len(raw) > MAX_FILE_BYTES:
        raise SubmissionError("kernel_too_large", f"{name} is larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SubmissionError("kernel_not_utf8", f"{name} is not UTF-8 text") from exc
    try:
        ast.parse(source, filename=name)
    except SyntaxError as exc:
        raise SubmissionError("kernel_syntax", f"{name}, line {exc.lineno}: {exc.msg}") from exc
    return source


def kernel_set_from_files(files: Mapping[str, bytes]) -> KernelSet:
    """Validate a kernel set given as {relative path: bytes}; raises SubmissionError on any problem."""
    if len(files) > MAX_FILES:
        raise SubmissionError("too_many_files", f"a kernel set has at most {MAX_FILES} files")
    names: dict[str, bytes] = {}
    for path, raw in files.items():
        name = _safe_name(path)
        if name is None:
            continue
        if name in names:
            raise SubmissionError("duplicate_file", f"{name} appears twice in the kernel set")
        names[name] = raw
    if "manifest.json" not in names:
        raise SubmissionError("manifest_missing", "the kernel set has no manifest.json")
    manifest = parse_manifest(names.pop("manifest.json"))
    kernels: dict[int, str] = {}
    for name, raw in sorted(names.items()):
        if not KERNEL_NAME.match(name):
            raise SubmissionError(
                "unexpected_file", f"{name} is not part of the format: only manifest.json and q01.py..q22.py"
            )
        kernels[int(name[1:3])] = check_kernel_source(name, raw)
    if not kernels:
        raise SubmissionError("no_kernels", "the kernel set has no qNN.py file")
    return KernelSet(manifest=manifest, kernels=kernels)


def kernel_set_from_dir(directory: Path) -> KernelSet:
    if not directory.is_dir():
        raise SubmissionError("not_a_directory", f"{directory} is not a folder")
    files = {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}
    return kernel_set_from_files(files)


def kernel_set_from_archive(data: bytes, filename: str) -> KernelSet:
    """Read a .zip, .tar, .tar.gz or .tgz archive; the set may sit in one top-level folder.

    Every limit is checked on what the archive declares (a zip's central directory, a tar's headers)
    before any member is inflated, and each member is then read only up to its declared size: a small
    upload never unpacks into a large one in this process.
    """
    if len(data) > MAX_ARCHIVE_BYTES:
        raise SubmissionError(
            "archive_too_large", f"the archive is larger than {MAX_ARCHIVE_BYTES >> 20} MiB"
        )
    try:
        if filename.endswith(".zip"):
            files = _zip_members(data)
        elif filename.endswith((".tar", ".tar.gz", ".tgz")):
            files = _tar_members(data, compressed=not filename.endswith(".tar"))
        else:
            raise SubmissionError("archive_type", "upload a .zip, .tar, .tar.gz or .tgz archive")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise SubmissionError("archive_corrupt", f"the archive could not be read: {exc}") from exc
    return kernel_set_from_files(_strip_common_folder(files))


def _zip_members(data: bytes) -> dict[str, bytes]:
    # zipfile builds an object for every central-directory record as it opens the archive, and each
    # record starts with this signature: counting it first bounds that work (100,000 empty entries fit
    # in 8 MiB and cost 55 MB to open).
    if data.count(_ZIP_DIRECTORY_RECORD) > MAX_ARCHIVE_ENTRIES:
        raise _too_many_entries()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()  # the central directory only: nothing is inflated yet
        if len(infos) > MAX_ARCHIVE_ENTRIES:
            raise _too_many_entries()
        for info in infos:
            _check_member(info.filename, info.file_size)
            if (
                info.file_size > RATIO_FLOOR_BYTES
                and info.file_size > MAX_COMPRESSION_RATIO * info.compress_size
            ):
                raise SubmissionError(
                    "archive_compression_ratio",
                    f"{info.filename} unpacks to more than {MAX_COMPRESSION_RATIO} times its packed size",
                )
        kept = [info for info in infos if not info.is_dir() and not _ignored(info.filename)]
        _check_totals(len(kept), sum(info.file_size for info in infos))
        return {info.filename: _read_zip_member(archive, info) for info in kept}


def _read_zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The member's bytes, refused when they do not match the size and CRC its directory record claims."""
    try:
        with archive.open(info) as member:
            raw = member.read(info.file_size + 1)
    except _MEMBER_READ_ERRORS as exc:
        raise _member_corrupt(info.filename, str(exc)) from exc
    if len(raw) != info.file_size:
        raise _member_corrupt(info.filename, f"{len(raw)} bytes, {info.file_size} declared")
    return raw


def _tar_members(data: bytes, *, compressed: bool) -> dict[str, bytes]:
    if compressed:
        # Headers (a pax header's data included) are read whole by tarfile, so the stream is unpacked,
        # capped, before tarfile sees it.
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            data = stream.read(MAX_TAR_BYTES + 1)
        if len(data) > MAX_TAR_BYTES:
            raise _unpacked_too_large()
    kept: list[tarfile.TarInfo] = []
    declared = 0
    # Mode "r:": an archive named .tar is read as plain tar, never silently decompressed.
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for count, member in enumerate(archive, start=1):  # headers one at a time, data skipped
            if count > MAX_ARCHIVE_ENTRIES:
                raise _too_many_entries()
            if member.isdir():
                continue
            if not member.isfile():
                raise SubmissionError("archive_link", f"{member.name} is a link or device: not allowed")
            _check_member(member.name, member.size)
            declared += member.size
            if not _ignored(member.name):
                kept.append(member)
        _check_totals(len(kept), declared)
        files: dict[str, bytes] = {}
        for member in kept:
            extracted = archive.extractfile(member)
            assert extracted is not None
            files[member.name] = extracted.read(member.size + 1)
        return files


def _check_member(name: str, size: int) -> None:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise SubmissionError("archive_path", f"{name} points outside the kernel set")
    if size > MAX_FILE_BYTES:
        raise SubmissionError("kernel_too_large", f"{name} is larger than {MAX_FILE_BYTES // 1024} KiB")


def _check_totals(files: int, declared_bytes: int) -> None:
    if files > MAX_FILES:
        raise SubmissionError("too_many_files", f"a kernel set has at most {MAX_FILES} files")
    if declared_bytes > MAX_ARCHIVE_BYTES:
        raise _unpacked_too_large()


def _too_many_entries() -> SubmissionError:
    return SubmissionError(
        "archive_too_many_entries", f"the archive has more than {MAX_ARCHIVE_ENTRIES} entries"
    )


def _unpacked_too_large() -> SubmissionError:
    return SubmissionError(
        "archive_unpacked_too_large", f"the archive unpacks to more than {MAX_ARCHIVE_BYTES >> 20} MiB"
    )


def _member_corrupt(name: str, detail: str) -> SubmissionError:
    return SubmissionError(
        "archive_member_corrupt", f"{name} does not match its record in the archive's directory: {detail}"
    )


def _strip_common_folder(files: dict[str, bytes]) -> dict[str, bytes]:
    parts = [PurePosixPath(name).parts for name in files]
    if parts and all(len(p) == 2 for p in parts) and len({p[0] for p in parts}) == 1:
        return {PurePosixPath(name).name: raw for name, raw in files.items()}
    return files


def _ignored(path: str) -> bool:
    """Files an archiver or an editor adds beside a set (.DS_Store, __MACOSX/, __pycache__/)."""
    pure = PurePosixPath(path)
    return pure.name.startswith(".") or "__MACOSX" in pure.parts or "__pycache__" in pure.parts


def _safe_name(path: str) -> str | None:
    """The file's name inside the set, None for files to ignore, SubmissionError for nested paths."""
    if _ignored(path):
        return None
    pure = PurePosixPath(path)
    if len(pure.parts) != 1:
        raise SubmissionError("nested_path", f"{path}: files must sit at the top of the kernel set")
    return pure.name
