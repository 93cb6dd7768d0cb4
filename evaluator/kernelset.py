"""The kernel-set format: `manifest.json` plus `qNN.py` files (docs/kernel-format.md).

Everything here validates untrusted input and raises `SubmissionError` with a stable code and a message
meant for the uploader; nothing is executed.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tarfile
import zipfile
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
    """Read a .zip, .tar, .tar.gz or .tgz archive; the set may sit in one top-level folder."""
    if len(data) > MAX_ARCHIVE_BYTES:
        raise SubmissionError(
            "archive_too_large", f"the archive is larger than {MAX_ARCHIVE_BYTES >> 20} MiB"
        )
    files: dict[str, bytes] = {}
    try:
        if filename.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for info in archive.infolist():
                    if info.is_dir():
                        continue
                    _check_member(info.filename, info.file_size)
                    files[info.filename] = archive.read(info)
        elif filename.endswith((".tar", ".tar.gz", ".tgz")):
            with tarfile.open(fileobj=io.BytesIO(data)) as archive:
                for member in archive.getmembers():
                    if member.isdir():
                        continue
                    if not member.isfile():
                        raise SubmissionError(
                            "archive_link", f"{member.name} is a link or device: not allowed"
                        )
                    _check_member(member.name, member.size)
                    extracted = archive.extractfile(member)
                    assert extracted is not None
                    files[member.name] = extracted.read()
        else:
            raise SubmissionError("archive_type", "upload a .zip, .tar, .tar.gz or .tgz archive")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        raise SubmissionError("archive_corrupt", f"the archive could not be read: {exc}") from exc
    if len(files) > MAX_FILES:
        raise SubmissionError("too_many_files", f"a kernel set has at most {MAX_FILES} files")
    return kernel_set_from_files(_strip_common_folder(files))


def _check_member(name: str, size: int) -> None:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise SubmissionError("archive_path", f"{name} points outside the kernel set")
    if size > MAX_FILE_BYTES:
        raise SubmissionError("kernel_too_large", f"{name} is larger than {MAX_FILE_BYTES // 1024} KiB")


def _strip_common_folder(files: dict[str, bytes]) -> dict[str, bytes]:
    parts = [PurePosixPath(name).parts for name in files]
    if parts and all(len(p) == 2 for p in parts) and len({p[0] for p in parts}) == 1:
        return {PurePosixPath(name).name: raw for name, raw in files.items()}
    return files


def _safe_name(path: str) -> str | None:
    """The file's name inside the set, None for files to ignore, SubmissionError for nested paths."""
    pure = PurePosixPath(path)
    if pure.name.startswith(".") or "__MACOSX" in pure.parts or "__pycache__" in pure.parts:
        return None
    if len(pure.parts) != 1:
        raise SubmissionError("nested_path", f"{path}: files must sit at the top of the kernel set")
    return pure.name
