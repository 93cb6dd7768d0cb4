from __future__ import annotations

import numpy as np
import pytest
import torch

from evaluator.torchplan import ops


def text(*rows: str, width: int = 12) -> torch.Tensor:
    return torch.from_numpy(np.array(rows, dtype=f"S{width}").view(np.uint8).reshape(len(rows), width).copy())


def test_key_index_and_lookup_join_a_foreign_key_to_its_row() -> None:
    index = ops.key_index(torch.tensor([30, 10, 20]))
    assert ops.lookup(index, torch.tensor([20, 30, 99, 10, 5])).tolist() == [2, 0, -1, 1, -1]


def test_member_is_a_semi_join() -> None:
    assert ops.member(torch.tensor([1, 2, 3, 4]), of=torch.tensor([4, 2])).tolist() == [
        False,
        True,
        False,
        True,
    ]
    # An empty subquery (no supplier complained at SF0.01) excludes nothing from NOT IN.
    assert ops.member(torch.tensor([1, 2]), of=torch.tensor([], dtype=torch.int64)).tolist() == [False, False]


def test_group_count_distinct_counts_each_value_once_per_group() -> None:
    ids = torch.tensor([0, 0, 0, 1, 1, 2])
    assert ops.group_count_distinct(torch.tensor([5, 5, 7, 5, 9, 1]), ids, 4).tolist() == [2, 2, 1, 0]
    floats = torch.tensor([0.5, 0.5, 1.5, 2.0, 2.0, 0.1])
    assert ops.group_count_distinct(floats, ids, 3).tolist() == [2, 1, 1]


def test_group_sums_counts_and_extremes_match_a_plain_loop() -> None:
    rng = np.random.default_rng(0)
    for groups in (3, 40):
        ids = torch.from_numpy(rng.integers(0, groups, 5000))
        values = torch.from_numpy(rng.uniform(0, 1e5, 5000))
        want = np.zeros(groups)
        np.add.at(want, ids.numpy(), values.numpy())
        assert np.allclose(ops.group_sum(values, ids, groups).numpy(), want, rtol=1e-12)
        assert ops.group_count(ids, groups).sum().item() == 5000
        assert ops.group_min(values, ids, groups)[0].item() == values[ids == 0].min().item()
        assert ops.group_max(values, ids, groups)[1].item() == values[ids == 1].max().item()


def test_order_sorts_by_several_keys_stably() -> None:
    a = torch.tensor([1, 2, 1, 2, 1])
    b = torch.tensor([5.0, 1.0, 7.0, 3.0, 7.0])
    perm = ops.order([(a, False), (b, True)])
    assert perm.tolist() == [2, 4, 0, 3, 1]
    assert ops.order([(a, False), (b, True)], limit=2).tolist() == [2, 4]


def test_text_predicates_follow_sql_like() -> None:
    rows = text("green apple", "forest lime", "greengreen", "apple", width=12)
    assert ops.text_contains(rows, "green").tolist() == [True, False, True, False]
    assert ops.text_prefix(rows, "forest").tolist() == [False, True, False, False]
    assert ops.text_equals(rows, "apple").tolist() == [False, False, False, True]
    assert ops.text_find(rows, "green", last=True).tolist() == [0, -1, 5, -1]
    assert ops.text_contains(rows, "a" * 13).tolist() == [False] * 4


@pytest.mark.parametrize(
    ("row", "expected"),
    [("special requests", True), ("requests special", False), ("specialrequests", True), ("special", False)],
)
def test_contains_in_order_is_like_percent_a_percent_b_percent(row: str, expected: bool) -> None:
    assert ops.text_contains_in_order(text(row, width=20), "special", "requests").tolist() == [expected]


def test_dictionary_predicates_run_on_the_host_once_per_entry() -> None:
    dictionary = ["ECONOMY BRASS", "PROMO BRUSHED TIN", "STANDARD BRASS"]
    mask = ops.dictionary_mask(dictionary, lambda s: s.endswith("BRASS"), "cpu")
    assert mask[torch.tensor([2, 1, 0])].tolist() == [True, False, True]
    assert ops.dictionary_code(dictionary, "STANDARD BRASS") == 2
    assert ops.dictionary_code(dictionary, "NOPE") == -1


def test_text_order_keys_sort_free_text_in_byte_order() -> None:
    rows = ["Supplier#10", "Supplier#9", "Supplier#1", "Supplier", "supplier", "Supplier#1000000002x"]
    matrix = text(*rows, width=20)
    permutation = ops.order(ops.text_order_keys(matrix))
    assert [rows[i] for i in permutation.tolist()] == sorted(rows, key=lambda s: s.encode())


def test_year_extracts_the_calendar_year_on_the_device() -> None:
    import datetime as dt

    days = [
        (dt.date(y, m, d) - dt.date(1970, 1, 1)).days
        for y, m, d in [(1992, 1, 1), (1995, 12, 31), (1996, 2, 29)]
    ]
    assert ops.year(torch.tensor(days, dtype=torch.int32)).tolist() == [1992, 1995, 1996]


def test_sql_like_is_a_host_predicate_with_percent_and_underscore() -> None:
    assert ops.sql_like("PROMO%")("PROMO BRUSHED TIN") and not ops.sql_like("PROMO%")("SMALL PROMO")
    assert ops.sql_like("%BRASS")("LARGE PLATED BRASS") and ops.sql_like("MED_UM%")("MEDIUM BOX")
    assert not ops.sql_like("a.c")("abc")  # regex characters are literal


def test_text_in_and_digits_read_a_substring_slice_like_sql() -> None:
    phones = text("13-555-0100", "31-555-0101", "7", "29-555-0103", width=15)
    codes = phones[:, 0:2]  # SUBSTRING(c_phone FROM 1 FOR 2): a view of the first two bytes
    assert ops.text_in(codes, ("13", "29", "130")).tolist() == [True, False, False, True]
    assert ops.text_in(codes, ("7",)).tolist() == [False, False, True, False]  # the string ends early
    assert ops.text_digits(codes).tolist() == [13, 31, 7, 29]


def test_lookup_composite_finds_the_row_with_both_key_columns() -> None:
    partkey, suppkey = torch.tensor([1, 1, 2, 2]), torch.tensor([10, 20, 10, 30])
    found = ops.lookup_composite(
        [partkey, suppkey], [torch.tensor([2, 1, 2, 3]), torch.tensor([30, 20, 20, 10])]
    )
    assert found.tolist() == [3, 1, -1, -1]


def test_match_count_counts_matches_per_key_and_zero_for_none() -> None:
    counts = ops.match_count(torch.tensor([1, 2, 3, 9]), of=torch.tensor([2, 2, 3, 5]))
    assert counts.tolist() == [0, 2, 1, 0]


def test_exists_other_asks_for_another_value_under_the_same_key() -> None:
    # Order 1 has suppliers 5 and 6, order 2 only supplier 7, order 3 no rows at all.
    low, high = ops.key_range(torch.tensor([1, 1, 2]), torch.tensor([5, 6, 7]))
    found = ops.exists_other(torch.tensor([1, 1, 2, 3, 9]), torch.tensor([5, 6, 7, 7, 1]), low, high)
    assert found.tolist() == [True, True, False, False, False]


def test_text_codes_are_equal_exactly_for_equal_strings() -> None:
    codes = ops.text_codes(text("b", "a", "b", "ab"))
    assert codes[0] == codes[2] and len(set(codes.tolist())) == 3
