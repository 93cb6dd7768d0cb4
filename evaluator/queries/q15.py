"""TPC-H Q15, Top Supplier (spec 2.4.15); the revenue view is a WITH clause, as DuckDB writes it."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Dates
from evaluator.queries.spec import Query

# The first day of a month between January 1993 and October 1997.
DATE = Dates("1993-01-01", "1997-10-01", "month")


def random_params(rng: random.Random) -> dict:
    return {"date": DATE.draw(rng)}


QUERY = Query(
    number=15,
    name="Top Supplier",
    sql_template="""\
WITH revenue AS (
    SELECT
        l_suppkey AS supplier_no,
        sum(l_extendedprice * (1 - l_discount)) AS total_revenue
    FROM lineitem
    WHERE l_shipdate >= DATE '{date}'
      AND l_shipdate < DATE '{date}' + INTERVAL 3 MONTH
    GROUP BY supplier_no
)
SELECT s_suppkey, s_name, s_address, s_phone, total_revenue
FROM supplier, revenue
WHERE s_suppkey = supplier_no
  AND total_revenue = (SELECT max(total_revenue) FROM revenue)
ORDER BY s_suppkey""",
    defaults={"date": "1996-01-01"},
    random_params=random_params,
    order_by=("s_suppkey",),
    strings={
        "s_name": ("supplier", "s_name"),
        "s_address": ("supplier", "s_address"),
        "s_phone": ("supplier", "s_phone"),
    },
    ranges={"date": DATE},
)
