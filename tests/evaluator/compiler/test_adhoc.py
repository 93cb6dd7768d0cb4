"""SQL beyond the 22 queries: each construct the compiler supports, compiled, run and checked by DuckDB."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from evaluator.harness.compare import compare, to_numpy
from evaluator.torchplan.compiler import compile_sql
from evaluator.tpch.load import decode_strings, load_tables
from evaluator.tpch.reference import reference_answer

CASES = {
    "uncorrelated scalar subquery in WHERE": (
        "SELECT count(*) AS n, sum(c_acctbal) AS total FROM customer "
        "WHERE c_acctbal > (SELECT avg(c_acctbal) FROM customer WHERE c_mktsegment = 'BUILDING')",
        (),
    ),
    "scalar subquery over a join in HAVING": (
        "SELECT ps_partkey, sum(ps_availqty) AS v FROM partsupp, supplier "
        "WHERE ps_suppkey = s_suppkey AND s_acctbal > 0 GROUP BY ps_partkey "
        "HAVING sum(ps_availqty) > (SELECT sum(ps_availqty) * 0.0005 FROM partsupp) "
        "ORDER BY v DESC, ps_partkey",
        ("v", "ps_partkey"),
    ),
    "SUBSTRING equality and CAST of digits as a group key": (
        "SELECT CAST(substring(c_phone FROM 1 FOR 2) AS INTEGER) AS code, count(*) AS n FROM customer "
        "WHERE substring(c_phone FROM 4 FOR 3) <> '123' "
        "GROUP BY CAST(substring(c_phone FROM 1 FOR 2) AS INTEGER) "
        "ORDER BY code",
        ("code",),
    ),
    "NOT IN (subquery), NOT LIKE and COUNT(DISTINCT) by group": (
        "SELECT p_size, count(DISTINCT ps_suppkey) AS suppliers, count(*) AS n FROM partsupp, part "
        "WHERE p_partkey = ps_partkey AND p_type NOT LIKE '%BRASS' AND ps_suppkey NOT IN "
        "(SELECT s_suppkey FROM supplier WHERE s_acctbal < 0) GROUP BY p_size ORDER BY p_size",
        ("p_size",),
    ),
    "COUNT(DISTINCT) without GROUP BY, masked and joined": (
        "SELECT count(DISTINCT l_suppkey) AS a, count(DISTINCT l_shipmode) AS b FROM lineitem "
        "WHERE l_quantity < 10",
        (),
    ),
    "COUNT(DISTINCT) over a join": (
        "SELECT count(DISTINCT o_custkey) AS a FROM lineitem, orders "
        "WHERE l_orderkey = o_orderkey AND l_discount > 0.05",
        (),
    ),
    "composite-key join (lineitem to partsupp)": (
        "SELECT l_returnflag, sum(ps_supplycost * l_quantity) AS cost, count(*) AS n FROM lineitem, partsupp "
        "WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey AND ps_availqty > 5000 "
        "GROUP BY l_returnflag ORDER BY l_returnflag",
        ("l_returnflag",),
    ),
    "a grouped view joined to a table, and a scalar subquery over the view (Q15 shape)": (
        "WITH t AS (SELECT o_custkey AS k, sum(o_totalprice) AS v FROM orders GROUP BY o_custkey) "
        "SELECT c_custkey, c_name, v FROM customer, t WHERE c_custkey = k "
        "AND v > (SELECT avg(v) * 3 FROM t) ORDER BY c_custkey",
        ("c_custkey",),
    ),
    "a grouped derived table as the FROM of a GROUP BY": (
        "SELECT n, count(*) AS k FROM (SELECT o_custkey, count(*) AS n FROM orders GROUP BY o_custkey) AS t "
        "GROUP BY n ORDER BY n",
        ("n",),
    ),
    "a LEFT JOIN view counting matches, 0 for none (Q13 shape)": (
        "SELECT n, count(*) AS k FROM (SELECT s_suppkey, count(ps_partkey) AS n FROM supplier "
        "LEFT OUTER JOIN partsupp ON s_suppkey = ps_suppkey AND ps_availqty < 100 GROUP BY s_suppkey) AS t "
        "GROUP BY n ORDER BY n",
        ("n",),
    ),
    "a correlated MIN over a join, ORDER BY free text both ways (Q2 shape)": (
        "SELECT p_partkey, s_name, ps_supplycost FROM part, partsupp, supplier "
        "WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND p_size < 10 "
        "AND ps_supplycost = (SELECT min(ps_supplycost) FROM partsupp, supplier "
        "WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND s_acctbal > 0) "
        "ORDER BY s_name DESC, p_partkey LIMIT 50",
        ("s_name", "p_partkey"),
    ),
    "ORDER BY free text ascending, and by a SUBSTRING of it": (
        "SELECT s_suppkey, s_name FROM supplier WHERE s_acctbal < 0 "
        "ORDER BY substring(s_phone, 1, 2) DESC, s_name",
        ("s_name",),
    ),
    "EXISTS and NOT EXISTS another row of the same key (Q21 shape), GROUP BY free text": (
        "SELECT s_name, count(*) AS n FROM lineitem l1, supplier WHERE s_suppkey = l1.l_suppkey "
        "AND EXISTS (SELECT * FROM lineitem l2 WHERE l2.l_orderkey = l1.l_orderkey "
        "AND l2.l_suppkey <> l1.l_suppkey) "
        "AND NOT EXISTS (SELECT * FROM lineitem l3 WHERE l3.l_orderkey = l1.l_orderkey "
        "AND l3.l_suppkey <> l1.l_suppkey AND l3.l_shipmode = 'AIR') "
        "GROUP BY s_name ORDER BY n DESC, s_name LIMIT 20",
        ("n", "s_name"),
    ),
    "IN (subquery over a correlated SUM on two columns) (Q20 shape)": (
        "SELECT s_suppkey, s_name FROM supplier WHERE s_suppkey IN (SELECT ps_suppkey FROM partsupp "
        "WHERE ps_availqty > (SELECT 0.5 * sum(l_quantity) FROM lineitem "
        "WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey AND l_returnflag = 'R')) "
        "ORDER BY s_suppkey",
        ("s_suppkey",),
    ),
    "SUBSTRING IN list": (
        "SELECT count(*) AS n FROM supplier WHERE substring(s_phone, 1, 2) IN ('10', '11', '12', '2')",
        (),
    ),
}


@pytest.mark.parametrize("construct", sorted(CASES))
def test_a_supported_construct_compiles_to_duckdbs_answer(construct: str, sf001: Path) -> None:
    sql, order_by = CASES[construct]
    namespace: dict = {}
    exec(compile(compile_sql(sql, name="test"), "<compiled>", "exec"), namespace)  # noqa: S102 - our output
    actual = to_numpy(namespace["run_query"](load_tables(sf001, namespace["COLUMNS"])))
    for name, (table, column) in namespace["STRINGS"].items():
        actual[name] = decode_strings(sf001, table, column, actual[name])
    expected = reference_answer(sf001, SimpleNamespace(sql=lambda: sql), {})
    assert compare(actual, expected, order_by) is None
