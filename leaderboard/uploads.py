"""Turn an upload (web form or API) into a validated KernelSet, the same way for both.

All checks are `evaluator.kernelset`'s, so a researcher sees the same error code from
`python -m evaluator run`, the web form and `POST /api/submissions/`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from django.core.files.uploadedfile import UploadedFile

from evaluator.errors import SubmissionError
from evaluator.kernelset import (
    MAX_ARCHIVE_BYTES,
    MAX_FILE_BYTES,
    MAX_FILES,
    KernelSet,
    kernel_set_from_archive,
    kernel_set_from_files,
)


@dataclass(frozen=True)
class Upload:
    kernel_set: KernelSet
    sha256: str  # of the archive, or of the files in name order when sent one by one


def kernel_set_read(
    *,
    archive: UploadedFile | None = None,
    manifest: UploadedFile | str | None = None,
    files: Iterable[UploadedFile] = (),
) -> Upload:
    """Read either an archive, or a manifest plus qNN.py files; raises SubmissionError."""
    files = list(files)
    if archive is not None and (manifest is not None or files):
        raise SubmissionError(
            "upload_ambiguous", "send either an archive or a manifest with qNN.py files, not both"
        )
    if archive is not None:
        data = _read(archive, MAX_ARCHIVE_BYTES)
        return Upload(kernel_set_from_archive(data, archive.name or ""), hashlib.sha256(data).hexdigest())
    if manifest is None and not files:
        raise SubmissionError("upload_empty", "send an archive, or manifest.json and qNN.py files")
    if len(files) >= MAX_FILES:
        raise SubmissionError("too_many_files", f"a kernel set has at most {MAX_FILES} files")
    contents: dict[str, bytes] = {}
    for upload in files:
        name = upload.name or ""
        if name in contents:
            raise SubmissionError("duplicate_file", f"{name} appears twice in the kernel set")
        contents[name] = _read(upload, MAX_FILE_BYTES)
    if manifest is not None:
        if "manifest.json" in contents:
            raise SubmissionError("duplicate_file", "manifest.json appears twice in the kernel set")
        contents["manifest.json"] = (
            manifest.encode() if isinstance(manifest, str) else _read(manifest, MAX_FILE_BYTES)
        )
    digest = hashlib.sha256()
    for name in sorted(contents):
        digest.update(name.encode() + b"\0" + contents[name] + b"\0")
    return Upload(kernel_set_from_files(contents), digest.hexdigest())


def _read(upload: UploadedFile, limit: int) -> bytes:
    # Check the declared size first so an oversized upload is never read into memory whole.
    if upload.size is not None and upload.size > limit:
        raise SubmissionError("upload_too_large", f"{upload.name} is larger than {limit // 1024} KiB")
    return upload.read(limit + 1)[: limit + 1]
