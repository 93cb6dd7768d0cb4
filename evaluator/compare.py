"""Compare a kernel's result with the reference answer (docs/evaluation.md, "Correctness").

Exact for row counts, integers, dates and codes; floats pass when
|c - e| <= 1e-9 * |e| + 1e-9 * max|column|, tight enough to catch float32 accumulation or a float32
literal, loose enough for any float64 summation order. NaN must match NaN.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

RTOL = 1e-9
ATOL_SCALE = 1e-9


def to_numpy(result: object) -> dict[str, np.ndarray]:
    """The result of `run_query`: a mapping of names to 1-D tensors. Anything else is refused."""
    if not isinstance(result, Mapping):
        raise TypeError(f"run_query must return a dict of named 1-D tensors, got {type(result).__name__}")
    arrays = {}
    for name, value in result.items():
        # type() rather than isinstance(): a tensor subclass could lie about its values when read.
        if type(value) is not torch.Tensor:
            raise TypeError(f"result column {name!r} is a {type(value).__name__}, not a torch.Tensor")
        if value.dim() != 1:
            raise TypeError(f"result column {name!r} has shape {tuple(value.shape)}; it must be 1-D")
        arrays[str(name)] = value.detach().cpu().numpy()
    return arrays


def compare(
    actual: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray], ordered: bool
) -> str | None:
    """None when the results match, else a one-line description of the first difference."""
    if set(actual) != set(expected):
        return f"result columns are {sorted(actual)}, expected {sorted(expected)}"
    names = list(expected)
    rows = {len(v) for v in expected.values()}
    lengths = {name: len(actual[name]) for name in names}
    if len(set(lengths.values())) > 1:
        return f"result columns have different lengths: {lengths}"
    (expected_rows,) = rows or {0}
    actual_rows = next(iter(lengths.values()), 0)
    if actual_rows != expected_rows:
        return f"{actual_rows} rows, expected {expected_rows}"
    if not ordered:
        actual, expected = _sorted_rows(actual, names), _sorted_rows(expected, names)
    for name in names:
        problem = _compare_column(name, actual[name], expected[name])
        if problem:
            return problem
    return None


def _compare_column(name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    if np.issubdtype(want.dtype, np.floating):
        if not np.issubdtype(got.dtype, np.floating) or got.dtype.itemsize < 8:
            return f"column {name!r} is {got.dtype}; float64 is required"
        scale = float(np.nanmax(np.abs(want))) if len(want) and not np.isnan(want).all() else 0.0
        bad = ~(np.isclose(got, want, rtol=RTOL, atol=ATOL_SCALE * scale, equal_nan=True))
    else:
        if np.issubdtype(got.dtype, np.floating):
            return f"column {name!r} is {got.dtype}; expected an exact {want.dtype} column"
        bad = got != want
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        return f"column {name!r} differs at row {row}: got {got[row].item()!r}, expected {want[row].item()!r}"
    return None


def _sorted_rows(columns: Mapping[str, np.ndarray], names: list[str]) -> dict[str, np.ndarray]:
    # Exact columns first, floats last: equal keys then differ only within the float tolerance.
    keys = sorted(names, key=lambda n: np.issubdtype(columns[n].dtype, np.floating))
    order = np.lexsort([columns[n] for n in reversed(keys)]) if names else np.array([], dtype=int)
    return {n: columns[n][order] for n in names}
