"""Constructs the compiler does not translate are refused by name, never miscompiled."""

from __future__ import annotations

import pytest

from evaluator.torchplan.compiler import ParameterError, UnsupportedSQL, cli_main, compile_sql

CASES = {
    "SUBSTRING as the result column": "SELECT substring(s_name, 1, 3) AS s FROM supplier",
    "GROUP BY SUBSTRING": "SELECT count(*) AS n FROM supplier GROUP BY substring(s_name, 1, 3)",
    "correlated scalar subquery correlated other than by `=`": "SELECT count(*) AS n FROM partsupp "
    "WHERE ps_availqty > (SELECT 0.5 * sum(l_quantity) FROM lineitem "
    "WHERE l_partkey = ps_partkey AND l_suppkey < ps_suppkey)",
    "derived table (subquery in FROM) with joins": "SELECT n, count(*) AS k FROM "
    "(SELECT o_custkey, count(*) AS n FROM orders, customer WHERE o_custkey = c_custkey "
    "GROUP BY o_custkey) AS t GROUP BY n",
    "NOT IN (subquery with GROUP BY": "SELECT count(*) AS n FROM partsupp WHERE ps_suppkey NOT IN "
    "(SELECT l_suppkey FROM lineitem GROUP BY l_suppkey HAVING count(*) > 10)",
    "EXISTS correlated with `<>`": "SELECT count(*) AS n FROM lineitem l1 "
    "WHERE EXISTS (SELECT * FROM lineitem l2, orders WHERE l2.l_orderkey = l1.l_orderkey "
    "AND o_orderkey = l2.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)",
    "SUM(DISTINCT ...) other than COUNT": "SELECT sum(DISTINCT ps_suppkey) AS n FROM partsupp",
    "free-text column l_comment": "SELECT count(*) AS n FROM lineitem WHERE l_comment LIKE '%x%'",
    "view or derived table t without FROM": "WITH t AS (SELECT 1 AS x) SELECT x FROM t",
    "correlated scalar subquery in SELECT": "SELECT p_partkey, "
    "(SELECT avg(l_quantity) FROM lineitem WHERE l_partkey = p_partkey) AS a FROM part",
    "many-to-many join": "SELECT sum(ps_supplycost) AS s FROM lineitem, partsupp "
    "WHERE l_partkey = ps_partkey",
    "SELECT DISTINCT": "SELECT DISTINCT l_returnflag FROM lineitem",
    "LEFT JOIN view with WHERE or HAVING": "SELECT n, count(*) AS k FROM (SELECT c_custkey, "
    "count(o_orderkey) AS n FROM customer LEFT JOIN orders ON c_custkey = o_custkey "
    "WHERE o_totalprice > 1000 OR c_acctbal > 0 GROUP BY c_custkey) AS t GROUP BY n",
    "LEFT JOIN view column `SUM(": "SELECT n, count(*) AS k FROM (SELECT c_custkey, sum(o_totalprice) AS n "
    "FROM customer LEFT JOIN orders ON c_custkey = o_custkey GROUP BY c_custkey) AS t GROUP BY n",
    "uncorrelated scalar subquery in SELECT": "SELECT count(*) AS n, "
    "(SELECT max(o_totalprice) FROM orders) AS m FROM customer",
    "SUBSTRING `SUBSTRING(": "SELECT count(*) AS n FROM customer WHERE substring(c_phone, 2) = '13'",
}


@pytest.mark.parametrize("construct", sorted(CASES))
def test_an_unsupported_construct_is_refused_by_name(construct: str) -> None:
    with pytest.raises(UnsupportedSQL) as raised:
        compile_sql(CASES[construct], name="test")
    assert construct in str(raised.value)


def test_a_parameter_that_is_not_in_the_sql_is_an_error() -> None:
    with pytest.raises(ParameterError, match="do not occur"):
        compile_sql("SELECT count(*) AS n FROM lineitem WHERE l_quantity < 24", name="t", params={"q": 25})


def test_the_cli_prints_the_module_or_exits_2_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main("SELECT count(*) AS n FROM lineitem WHERE l_quantity < 24") == 0
    assert "def run_query(tables)" in capsys.readouterr().out
    assert cli_main(CASES["SELECT DISTINCT"]) == 2
    assert "SELECT DISTINCT" in capsys.readouterr().err
