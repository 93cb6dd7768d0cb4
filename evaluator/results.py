"""Results on the wire: a runner packs the results of its calls into one buffer, the harness unpacks it.

`pack` runs in the runner, after the last call of a batch and inside the harness's timed window: every
column of every result is viewed as bytes and concatenated on the device, then copied to the host
once, so a batch of ten small results costs one copy, not one per column. A result that is still
being computed when it is packed (work left on a side stream, a value computed when read) is packed
as it stands and shows up as wrong. `unpack` runs in the harness on bytes a hostile process sent: it
checks the layout against the payload before it makes a single array, and never unpickles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

# Result column types a kernel may return (docs/kernel-format.md); anything else is refused.
DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64"})
MAX_COLUMNS = 64
MAX_NAME = 128

Layout = list[list[list[Any]]]  # per result, per column: [name, dtype, length, offset]


def pack(results: list[object]) -> tuple[Layout, bytes]:
    """The results of one batch as a layout (JSON-ready) and their bytes; TypeError for a result that
    is not a mapping of names to 1-D tensors of a plain dtype."""
    import torch

    views, layout, offset = [], [], 0
    for result in results:
        columns = []
        for name, tensor in checked_columns(result):
            dtype = str(tensor.dtype).removeprefix("torch.")
            raw = tensor.detach().contiguous().view(torch.uint8) if tensor.numel() else None
            columns.append([name, dtype, int(tensor.numel()), offset])
            if raw is not None:
                views.append(raw.reshape(-1))
                offset += raw.numel()
        layout.append(columns)
    if not views:
        return layout, b""
    return layout, torch.cat(views).cpu().numpy().tobytes()


def checked_columns(result: object) -> list[tuple[str, Any]]:
    """A result's columns, (name, tensor) each; TypeError for anything but a mapping of names to plain
    1-D tensors of a dtype in `DTYPES`."""
    import torch

    if not isinstance(result, Mapping):
        raise TypeError(f"run_query must return a dict of named 1-D tensors, got {type(result).__name__}")
    columns = []
    for name, value in result.items():
        # type() rather than isinstance(): a tensor subclass could lie about its values when read.
        if type(value) is not torch.Tensor:
            raise TypeError(f"result column {name!r} is a {type(value).__name__}, not a torch.Tensor")
        if value.dim() != 1:
            raise TypeError(f"result column {name!r} has shape {tuple(value.shape)}; it must be 1-D")
        if str(value.dtype).removeprefix("torch.") not in DTYPES:
            raise TypeError(f"result column {name!r} is {value.dtype}; use {', '.join(sorted(DTYPES))}")
        columns.append((str(name), value))
    return columns


def unpack(layout: object, payload: bytes, count: int) -> list[dict[str, np.ndarray]]:
    """`count` results from a layout and payload a runner sent; ValueError when they do not fit."""
    if not isinstance(layout, list) or len(layout) != count:
        raise ValueError(f"expected {count} results, the runner sent {_size(layout)}")
    results = []
    for columns in layout:
        if not isinstance(columns, list) or len(columns) > MAX_COLUMNS:
            raise ValueError("a result's columns are not a list of at most 64 columns")
        arrays: dict[str, np.ndarray] = {}
        for column in columns:
            name, array = _array(column, payload)
            if name in arrays:
                raise ValueError(f"column {name!r} appears twice in a result")
            arrays[name] = array
        results.append(arrays)
    return results


def _array(column: object, payload: bytes) -> tuple[str, np.ndarray]:
    if not (isinstance(column, list) and len(column) == 4):
        raise ValueError("a column is not [name, dtype, length, offset]")
    name, dtype, length, offset = column
    if not (isinstance(name, str) and 0 < len(name) <= MAX_NAME and dtype in DTYPES):
        raise ValueError(f"a column's name or type is not allowed: {str(name)[:MAX_NAME]!r}, {dtype!r}")
    if not (type(length) is int and type(offset) is int and length >= 0 and offset >= 0):
        raise ValueError(f"column {name!r} has a bad length or offset")
    size = np.dtype(dtype).itemsize * length
    if offset + size > len(payload):
        raise ValueError(f"column {name!r} runs past the end of the results' bytes")
    return name, np.frombuffer(payload, dtype=dtype, count=length, offset=offset).copy()


def _size(layout: object) -> int | str:
    return len(layout) if isinstance(layout, list) else type(layout).__name__
