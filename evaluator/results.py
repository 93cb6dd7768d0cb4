"""Results on the wire: a runner packs the results of its calls into one buffer, the harness unpacks it.

The runner packs inside the harness's timed window, so it takes each result in two steps. `take`, as
soon as a call returns and before the device is synchronized, checks the result and views each dense
column as bytes: it reads shapes and types only, on the host, while the device still computes.
`gather`, after the batch's last call, concatenates those bytes on the device and copies them to the
host once, so a batch of ten small results costs one copy, not one per column. A result that is still
being computed when it is gathered (work left on a side stream, a value computed when read) is copied
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
    layout, views, offset = [], [], 0
    for result in results:
        columns, taken, offset = take(result, offset)
        layout.append(columns)
        views += taken
    return layout, gather(views)


def take(result: object, offset: int) -> tuple[list[list[Any]], list[Any], int]:
    """One result's layout entries (its bytes from `offset` on), the views `gather` reads, and the
    offset after it. A dense column (stride 1) is viewed as bytes here, without reading it; any other
    is kept as it is and copied dense by `gather`, once the device is synchronized (a copy made here
    could run before work the device-wide synchronize after the call would have waited for)."""
    import torch

    columns, views = [], []
    for name, tensor, dtype in checked_columns(result):
        columns.append([name, dtype, int(tensor.numel()), offset])
        if tensor.numel():
            column = tensor.detach()
            views.append(column.view(torch.uint8) if column.stride(0) == 1 else column)
            offset += column.numel() * column.element_size()
    return columns, views, offset


def gather(views: list[Any]) -> bytes:
    """The bytes of every view `take` made, in order: one concatenation and one copy to the host."""
    import torch

    if not views:
        return b""
    # `take`'s byte views are dense; a column it kept is copied dense now, then viewed as bytes.
    flat = [v if v.stride(0) == 1 else v.new_empty(v.shape).copy_(v).view(torch.uint8) for v in views]
    return torch.cat(flat).cpu().numpy().tobytes()


def checked_columns(result: object) -> list[tuple[str, Any, str]]:
    """A result's columns, (name, tensor, dtype name) each; TypeError for anything but a mapping of names
    to plain 1-D tensors of a dtype in `DTYPES`."""
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
        dtype = str(value.dtype).removeprefix("torch.")
        if dtype not in DTYPES:
            raise TypeError(f"result column {name!r} is {value.dtype}; use {', '.join(sorted(DTYPES))}")
        columns.append((str(name), value, dtype))
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
