"""Filling the disk: the runner writes into its build folder (where `load_inline` puts what it compiles)
until a write fails, up to 1 GiB. The folder is in the runner's private /tmp, a tmpfs of the limits'
size, so the writes stop there; were it a folder of the host's, as it once was, they would fill the
worker's disk (the database's too, on a small host) while the query ran."""

import os

_CHUNK = b"\0" * (16 << 20)


def run_query(tables, **params):
    folder = os.path.dirname(os.environ["TORCH_EXTENSIONS_DIR"])
    os.makedirs(folder, exist_ok=True)
    written = 0
    with open(os.path.join(folder, "filler"), "wb", buffering=0) as filler:
        while written < 1 << 30:
            try:
                written += filler.write(_CHUNK)
            except OSError as exc:
                raise OSError(f"{exc.strerror} after {written >> 20} MiB in {folder}") from None
    raise RuntimeError(f"wrote {written >> 20} MiB in {folder}, and no write failed")
