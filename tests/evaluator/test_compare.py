from __future__ import annotations

import numpy as np
import pytest
import torch

from evaluator.harness.compare import compare, to_numpy


def test_it_accepts_any_float64_summation_order() -> None:
    values = np.random.default_rng(0).uniform(0, 1e5, 100_000)
    forward, backward = values.sum(), values[::-1].sum()
    assert compare({"s": np.array([backward])}, {"s": np.array([forward])}) is None


def test_it_catches_float32_accumulation() -> None:
    values = np.random.default_rng(0).uniform(0, 1e5, 100_000)
    float32 = np.array([values.astype(np.float32).sum(dtype=np.float32)], dtype=np.float64)
    problem = compare({"s": float32}, {"s": np.array([values.sum()])})
    assert problem and "differs at row 0" in problem


def test_it_refuses_a_float32_column_outright() -> None:
    problem = compare({"s": np.array([1.0], np.float32)}, {"s": np.array([1.0])})
    assert problem == "column 's' is float32; float64 is required"


def test_it_compares_exact_columns_exactly_and_counts_rows() -> None:
    want = {"k": np.array([1, 2, 3]), "v": np.array([0.5, 1.5, 2.5])}
    assert "column 'k' differs" in compare({"k": np.array([1, 2, 4]), "v": want["v"]}, want, order_by=("k",))
    assert compare({"k": np.array([1, 2]), "v": want["v"][:2]}, want, order_by=("k",)) == "2 rows, expected 3"
    assert "columns are" in compare({"k": want["k"]}, want, order_by=("k",))


def test_without_order_by_rows_compare_as_a_multiset() -> None:
    want = {"k": np.array([1, 2, 3]), "v": np.array([0.5, 1.5, 2.5])}
    shuffled = {"k": np.array([3, 1, 2]), "v": np.array([2.5, 0.5, 1.5])}
    assert compare(shuffled, want, order_by=()) is None
    assert compare(shuffled, want, order_by=("k",)) is not None


def test_nan_matches_only_nan() -> None:
    assert compare({"v": np.array([np.nan])}, {"v": np.array([np.nan])}) is None
    assert compare({"v": np.array([0.0])}, {"v": np.array([np.nan])}) is not None


def test_a_zero_where_sql_answers_null_is_a_difference_and_so_is_null_where_it_answers_zero() -> None:
    null, zero = {"revenue": np.array([np.nan])}, {"revenue": np.array([0.0])}
    assert compare(zero, null) == "column 'revenue' differs at row 0: got 0.0, expected nan"
    assert compare(null, zero) == "column 'revenue' differs at row 0: got nan, expected 0.0"
    # Beside real values too: the tolerance scales with the column's largest finite value, never NaN.
    want = {"k": np.array([1, 2]), "v": np.array([np.nan, 1e6])}
    assert compare({"k": want["k"], "v": np.array([np.nan, 1e6])}, want, order_by=("k",)) is None
    assert compare({"k": want["k"], "v": np.array([0.0, 1e6])}, want, order_by=("k",)) is not None


def test_a_result_must_be_named_1d_plain_tensors() -> None:
    class Sneaky(torch.Tensor):
        pass

    with pytest.raises(TypeError, match="dict of named 1-D tensors"):
        to_numpy(torch.zeros(1))
    with pytest.raises(TypeError, match="must be 1-D"):
        to_numpy({"revenue": torch.tensor(1.0)})
    with pytest.raises(TypeError, match="not a torch.Tensor"):
        to_numpy({"revenue": torch.zeros(1).as_subclass(Sneaky)})
    assert to_numpy({"revenue": torch.ones(1, dtype=torch.float64)})["revenue"].tolist() == [1.0]


def test_ties_in_the_sort_keys_compare_as_a_set_but_the_order_is_checked() -> None:
    want = {"k": np.array([3, 1, 1]), "name": np.array(["c", "a", "b"]), "v": np.array([3.0, 1.0, 2.0])}
    tie_swapped = {
        "k": np.array([3, 1, 1]),
        "name": np.array(["c", "b", "a"]),
        "v": np.array([3.0, 2.0, 1.0]),
    }
    assert compare(tie_swapped, want, order_by=("k",)) is None
    misordered = {"k": np.array([1, 1, 3]), "name": np.array(["a", "b", "c"]), "v": np.array([1.0, 2.0, 3.0])}
    assert compare(misordered, want, order_by=("k",)).startswith("ORDER BY k: column 'k' differs at row 0")
    wrong_pair = {"k": np.array([3, 1, 1]), "name": np.array(["c", "a", "b"]), "v": np.array([3.0, 2.0, 1.0])}
    assert compare(wrong_pair, want, order_by=("k",)) is not None
