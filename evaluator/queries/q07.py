"""TPC-H Q7, Volume Shipping (spec 2.4.7)."""

from __future__ import annotations

import random

from evaluator.queries.spec import Query
from evaluator.queries.words import NATIONS


def random_params(rng: random.Random) -> dict:
    nation1, nation2 = rng.sample(NATIONS, 2)  # two different nations
    return {"nation1": nation1, "nation2": nation2}


QUERY = Query(
    number=7,
    name="Volume Shipping",
    sql_template="""\
SELECT supp_nation, cust_nation, l_year, sum(volume) AS revenue
FROM (
    SELECT
        n1.n_name AS supp_nation,
        n2.n_name AS cust_nation,
        extract(year FROM l_shipdate) AS l_year,
        l_extendedprice * (1 - l_discount) AS volume
    FROM supplier, lineitem, orders, customer, nation n1, nation n2
    WHERE s_suppkey = l_suppkey
      AND o_orderkey = l_orderkey
      AND c_custkey = o_custkey
      AND s_nationkey = n1.n_nationkey
      AND c_nationkey = n2.n_nationkey
      AND ((n1.n_name = '{nation1}' AND n2.n_name = '{nation2}')
        OR (n1.n_name = '{nation2}' AND n2.n_name = '{nation1}'))
      AND l_shipdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31') AS shipping
GROUP BY supp_nation, cust_nation, l_year
ORDER BY supp_nation, cust_nation, l_year""",
    defaults={"nation1": "FRANCE", "nation2": "GERMANY"},
    random_params=random_params,
    order_by=("supp_nation", "cust_nation", "l_year"),
    strings={"supp_nation": ("nation", "n_name"), "cust_nation": ("nation", "n_name")},
)
