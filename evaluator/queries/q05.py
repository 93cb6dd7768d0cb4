"""TPC-H Q5, Local Supplier Volume (spec 2.4.5)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Dates
from evaluator.queries.spec import Query
from evaluator.queries.words import REGIONS

DATE = Dates("1993-01-01", "1997-01-01", "year")


def random_params(rng: random.Random) -> dict:
    return {"region": rng.choice(REGIONS), "date": DATE.draw(rng)}


QUERY = Query(
    number=5,
    name="Local Supplier Volume",
    sql_template="""\
SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM customer, orders, lineitem, supplier, nation, region
WHERE c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND l_suppkey = s_suppkey
  AND c_nationkey = s_nationkey
  AND s_nationkey = n_nationkey
  AND n_regionkey = r_regionkey
  AND r_name = '{region}'
  AND o_orderdate >= DATE '{date}'
  AND o_orderdate < DATE '{date}' + INTERVAL 1 YEAR
GROUP BY n_name
ORDER BY revenue DESC""",
    defaults={"region": "ASIA", "date": "1994-01-01"},
    random_params=random_params,
    order_by=("revenue",),
    strings={"n_name": ("nation", "n_name")},
    ranges={"date": DATE},
)
