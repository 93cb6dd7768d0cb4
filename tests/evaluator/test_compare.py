from __future__ import annotations

import numpy as np
import pytest
import torch

from evaluator.compare import compare, to_numpy


def test_it_accepts_any_float64_summation_order() -> None:
    values = np.random.default_rng(0).uniform(0, 1e5, 100_000)
    forward, backward = values.sum(), values[::-1].sum()
    assert compare({"s": np.array([backward])}, {"s": np.array([forward])}, ordered=True) is None


def test_it_catches_float32_accumulation() -> None:
    values = np.random.default_rng(0).uniform(0, 1e5, 100_000)
    float32 = np.array([values.astype(np.float32).sum(dtype=np.float32)], dtype=np.float64)
    problem = compare({"s": float32}, {"s": np.array([values.sum()])}, ordered=True)
    assert problem and "differs at row 0" in problem


def test_it_refuses_a_float32_column_outright() -> None:
    problem = compare({"s": np.array([1.0], np.float32)}, {"s": np.array([1.0])}, ordered=True)
    assert problem == "column 's' is float32; float64 is required"


def test_it_compares_exact_columns_exactly_and_counts_rows() -> None:
    want = {"k": np.array([1, 2, 3]), "v": np.array([0.5, 1.5, 2.5])}
    assert compare({"k": np.array([1, 2, 4]), "v": want["v"]}, want, ordered=True).startswith("column 'k'")
    assert compare({"k": np.array([1, 2]), "v": want["v"][:2]}, want, ordered=True) == "2 rows, expected 3"
    assert "columns are" in compare({"k": want["k"]}, want, ordered=True)


def test_without_order_by_rows_compare_as_a_multiset() -> None:
    want = {"k": np.array([1, 2, 3]), "v": np.array([0.5, 1.5, 2.5])}
    shuffled = {"k": np.array([3, 1, 2]), "v": np.array([2.5, 0.5, 1.5])}
    assert compare(shuffled, want, ordered=False) is None
    assert compare(shuffled, want, ordered=True) is not None


def test_nan_matches_only_nan() -> None:
    assert compare({"v": np.array([np.nan])}, {"v": np.array([np.nan])}, ordered=True) is None
    assert compare({"v": np.array([0.0])}, {"v": np.array([np.nan])}, ordered=True) is not None


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
