"""Compare a kernel's result with the reference answer (docs/evaluation.md, "Correctness").

Exact for row counts, integers, dates and strings; floats pass when
|c - e| <= 1e-9 * |e| + 1e-9 * max|column|, tight enough to catch float32 accumulation or a float32
literal, loose enough for any float64 summation order. NaN must match NaN.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from evaluator.results import checked_columns

RTOL = 1e-9
ATOL_SCALE = 1e-9


def to_numpy(result: object) -> dict[str, np.ndarray]:
    """The result of `run_query` on the host: a mapping of names to 1-D tensors. Anything else is refused."""
    return {name: tensor.detach().cpu().numpy() for name, tensor, _ in checked_columns(result)}


def compare(
    actual: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray], order_by: tuple[str, ...] = ()
) -> str | None:
    """None when the results match, else a one-line description of the first difference.

    With `order_by`, the sort-key columns must match row by row (the order is part of the answer) and
    rows with equal keys compare as a set; without, all rows compare as a multiset.
    """
    if set(actual) != set(expected):
        return f"result columns are {sorted(actual)}, expected {sorted(expected)}"
    names = list(expected)
    lengths = {name: len(actual[name]) for name in names}
    if len(set(lengths.values())) > 1:
        return f"result columns have different lengths: {lengths}"
    expected_rows = len(expected[names[0]]) if names else 0
    actual_rows = lengths[names[0]] if names else 0
    if actual_rows != expected_rows:
        return f"{actual_rows} rows, expected {expected_rows}"
    for name in order_by:
        problem = _compare_column(name, actual[name], expected[name])
        if problem:
            return f"ORDER BY {', '.join(order_by)}: {problem}"
    # The order is right; a canonical sort inside groups of equal sort keys makes their ties irrelevant.
    actual, expected = _sorted_rows(actual, names, order_by), _sorted_rows(expected, names, order_by)
    for name in names:
        problem = _compare_column(name, actual[name], expected[name])
        if problem:
            return problem
    return None


def _compare_column(name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    if _is_float(want):
        if not _is_float(got) or got.dtype.itemsize < 8:
            return f"column {name!r} is {got.dtype}; float64 is required"
        scale = float(np.nanmax(np.abs(want))) if len(want) and not np.isnan(want).all() else 0.0
        bad = ~(np.isclose(got, want, rtol=RTOL, atol=ATOL_SCALE * scale, equal_nan=True))
    else:
        if _is_float(got):
            return f"column {name!r} is {got.dtype}; expected an exact {want.dtype} column"
        bad = got != want
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        return f"column {name!r} differs at row {row}: got {got[row].item()!r}, expected {want[row].item()!r}"
    return None


def _sorted_rows(
    columns: Mapping[str, np.ndarray], names: list[str], order_by: tuple[str, ...]
) -> dict[str, np.ndarray]:
    # Groups of equal sort keys keep their place; inside a group (or everywhere, without ORDER BY) rows
    # sort by the exact columns first and floats last, so equal rows differ only within the tolerance.
    rest = sorted((n for n in names if n not in order_by), key=lambda n: _is_float(columns[n]))
    keys = [columns[n] for n in reversed(rest)]
    if order_by:
        keys.append(_group_ids(columns, order_by))
    if not keys:
        return dict(columns)
    order = np.lexsort(keys)
    return {n: columns[n][order] for n in names}


def _group_ids(columns: Mapping[str, np.ndarray], order_by: tuple[str, ...]) -> np.ndarray:
    """Consecutive rows with equal sort keys share an id; ids increase down the rows."""
    change = np.zeros(len(columns[order_by[0]]), dtype=bool)
    for name in order_by:
        change[1:] |= columns[name][1:] != columns[name][:-1]
    return np.cumsum(change)


def _is_float(column: np.ndarray) -> bool:
    return np.issubdtype(column.dtype, np.floating)
