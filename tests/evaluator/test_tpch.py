from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from evaluator.errors import EvaluatorError
from evaluator.queries import QUERIES
from evaluator.tpch.encoding import parse_date
from evaluator.tpch.generate import connect, prepare
from evaluator.tpch.load import decode_strings, load_tables


def test_the_cache_holds_every_table_with_dbgens_row_counts(sf001: Path) -> None:
    meta = json.loads((sf001 / "meta.json").read_text())
    con = connect(sf001 / "tpch.duckdb", read_only=True)
    for table, entry in meta["tables"].items():
        (rows,) = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        assert entry["rows"] == rows
        for column, info in entry["columns"].items():
            array = np.load(sf001 / table / f"{column}.npy")
            assert array.shape == ((rows,) if info["dtype"] != "uint8" else (rows, info["width"]))
            assert info["dtype"] in ("int32", "int64", "float64", "uint8")
    assert meta["tables"]["lineitem"]["rows"] == 60175


def test_columns_keep_dbgens_row_order_and_decode_to_the_sql_values(sf001: Path) -> None:
    con = connect(sf001 / "tpch.duckdb", read_only=True)
    rows = con.execute("SELECT l_shipdate::VARCHAR, l_shipmode, l_discount::VARCHAR FROM lineitem").fetchall()
    tables = load_tables(sf001, {"lineitem": ("l_shipdate", "l_shipmode", "l_discount")})
    lineitem = tables["lineitem"]
    modes = lineitem.dictionary("l_shipmode")
    assert modes == sorted(modes)
    for i in (0, 1, 777, len(rows) - 1):
        shipdate, mode, discount = rows[i]
        assert lineitem["l_shipdate"][i].item() == parse_date(shipdate)
        assert modes[lineitem["l_shipmode"][i].item()] == mode
        assert lineitem["l_discount"][i].item() == float(discount)
    assert lineitem["l_shipdate"].dtype == torch.int32


def test_string_columns_decode_back_to_duckdbs_strings(sf001: Path) -> None:
    con = connect(sf001 / "tpch.duckdb", read_only=True)
    parts = [row[0] for row in con.execute("SELECT p_name FROM part").fetchall()]
    rows = np.array([0, 5, len(parts) - 1, 5])
    assert decode_strings(sf001, "part", "p_name", rows).tolist() == [parts[i] for i in rows]
    modes = [row[0] for row in con.execute("SELECT l_shipmode FROM lineitem LIMIT 50").fetchall()]
    codes = load_tables(sf001, {"lineitem": ("l_shipmode",)})["lineitem"]["l_shipmode"][:50].numpy()
    assert decode_strings(sf001, "lineitem", "l_shipmode", codes).tolist() == modes
    with pytest.raises(TypeError, match="integer positions"):
        decode_strings(sf001, "part", "p_name", np.array([0.0]))


def test_free_text_is_a_zero_padded_byte_matrix_of_the_specs_width(sf001: Path) -> None:
    tables = load_tables(sf001, {"orders": ("o_comment",)})
    comments = tables["orders"]["o_comment"]
    assert comments.dtype == torch.uint8 and comments.shape == (15000, 79)
    con = connect(sf001 / "tpch.duckdb", read_only=True)
    first = con.execute("SELECT o_comment FROM orders LIMIT 1").fetchone()[0]
    assert bytes(comments[0, : len(first)].tolist()).decode() == first
    assert comments[0, len(first) :].eq(0).all()


def test_prepare_is_idempotent_and_never_leaves_a_half_built_folder(data_root: Path, sf001: Path) -> None:
    before = (sf001 / "meta.json").stat().st_mtime_ns
    assert prepare(data_root, 0.01, progress=False) == sf001
    assert (sf001 / "meta.json").stat().st_mtime_ns == before
    assert not list(data_root.glob("*.building"))


def test_loading_missing_data_says_how_to_make_it(tmp_path: Path) -> None:
    with pytest.raises(EvaluatorError, match="python -m evaluator prepare"):
        load_tables(tmp_path / "sf3", {"lineitem": ("l_tax",)})


def test_q06_random_parameters_stay_in_the_specs_ranges() -> None:
    rng = random.Random(0)
    for _ in range(200):
        params = QUERIES[6].random_params(rng)
        assert params["date"][5:] == "01-01" and 1993 <= int(params["date"][:4]) <= 1997
        assert 0.02 <= params["discount"] <= 0.09 and params["quantity"] in (24, 25)


def test_date_arithmetic_matches_the_calendar_without_datetime() -> None:
    import datetime as dt

    from evaluator.tpch.encoding import add_interval, date_to_days, days_to_date

    epoch = dt.date(1970, 1, 1)
    day = dt.date(1899, 12, 25)
    while day < dt.date(2101, 1, 7):
        days = (day - epoch).days
        assert date_to_days(day.year, day.month, day.day) == days
        assert days_to_date(days) == (day.year, day.month, day.day)
        day += dt.timedelta(days=5)
    assert add_interval(date_to_days(1995, 1, 31), 1, "month") == date_to_days(1995, 2, 28)  # clamps
    assert add_interval(date_to_days(1996, 2, 29), 1, "year") == date_to_days(1997, 2, 28)
    assert add_interval(date_to_days(1994, 12, 1), 3, "month") == date_to_days(1995, 3, 1)
    assert add_interval(date_to_days(1998, 12, 1), -90, "day") == date_to_days(1998, 9, 2)


def test_the_reference_keeps_sqls_null_for_an_aggregate_over_no_rows(sf001: Path) -> None:
    from evaluator.tpch.reference import reference_answer

    # At SF0.01 no part is Brand#23 in a MED BOX (the spec's defaults): SUM over no rows is NULL.
    answer = reference_answer(sf001, QUERIES[17], QUERIES[17].defaults)
    assert answer["avg_yearly"].dtype == np.float64 and np.isnan(answer["avg_yearly"]).all()
    assert len(answer["avg_yearly"]) == 1
    # Q6 outside the spec's years: a NULL revenue, not 0.0; COUNT over the same rows stays 0.
    q6 = replace(
        QUERIES[6], sql_template=QUERIES[6].sql_template.replace(" AS revenue", " AS revenue, count(*) AS n")
    )
    answer = reference_answer(sf001, q6, {"date": "2030-01-01"})
    assert np.isnan(answer["revenue"]).all() and answer["n"].tolist() == [0]


def test_a_null_in_an_exact_column_is_refused_rather_than_filled(sf001: Path) -> None:
    from types import SimpleNamespace

    from evaluator.tpch.reference import reference_answer

    empty_min = SimpleNamespace(sql=lambda: "SELECT min(l_shipdate) AS d FROM lineitem WHERE l_quantity < 0")
    with pytest.raises(EvaluatorError, match="holds a NULL"):
        reference_answer(sf001, empty_min, {})
