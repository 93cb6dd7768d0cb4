"""TPC-H Q3, Shipping Priority (spec 2.4.3)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Dates
from evaluator.queries.spec import Query
from evaluator.queries.words import SEGMENTS

DATE = Dates("1995-03-01", "1995-03-31")


def random_params(rng: random.Random) -> dict:
    return {"segment": rng.choice(SEGMENTS), "date": DATE.draw(rng)}


QUERY = Query(
    number=3,
    name="Shipping Priority",
    sql_template="""\
SELECT
    l_orderkey,
    sum(l_extendedprice * (1 - l_discount)) AS revenue,
    o_orderdate,
    o_shippriority
FROM customer, orders, lineitem
WHERE c_mktsegment = '{segment}'
  AND c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND o_orderdate < DATE '{date}'
  AND l_shipdate > DATE '{date}'
GROUP BY l_orderkey, o_orderdate, o_shippriority
ORDER BY revenue DESC, o_orderdate
LIMIT 10""",
    defaults={"segment": "BUILDING", "date": "1995-03-15"},
    random_params=random_params,
    order_by=("revenue", "o_orderdate"),
    ranges={"date": DATE},
)
