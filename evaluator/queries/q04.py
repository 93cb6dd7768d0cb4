"""TPC-H Q4, Order Priority Checking (spec 2.4.4)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Dates
from evaluator.queries.spec import Query

# The first day of a month from January 1993 to October 1997.
DATE = Dates("1993-01-01", "1997-10-01", "month")


def random_params(rng: random.Random) -> dict:
    return {"date": DATE.draw(rng)}


QUERY = Query(
    number=4,
    name="Order Priority Checking",
    sql_template="""\
SELECT o_orderpriority, count(*) AS order_count
FROM orders
WHERE o_orderdate >= DATE '{date}'
  AND o_orderdate < DATE '{date}' + INTERVAL 3 MONTH
  AND EXISTS (
      SELECT * FROM lineitem
      WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)
GROUP BY o_orderpriority
ORDER BY o_orderpriority""",
    defaults={"date": "1993-07-01"},
    random_params=random_params,
    order_by=("o_orderpriority",),
    strings={"o_orderpriority": ("orders", "o_orderpriority")},
    ranges={"date": DATE},
)
