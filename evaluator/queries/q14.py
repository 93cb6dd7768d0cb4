"""TPC-H Q14, Promotion Effect (spec 2.4.14)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Dates
from evaluator.queries.spec import Query

# The first day of a month of a year in 1993..1997.
DATE = Dates("1993-01-01", "1997-12-01", "month")


def random_params(rng: random.Random) -> dict:
    return {"date": DATE.draw(rng)}


QUERY = Query(
    number=14,
    name="Promotion Effect",
    sql_template="""\
SELECT
    100.00 * sum(
        CASE WHEN p_type LIKE 'PROMO%' THEN
            l_extendedprice * (1 - l_discount)
        ELSE
            0
        END) / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
FROM lineitem, part
WHERE l_partkey = p_partkey
  AND l_shipdate >= DATE '{date}'
  AND l_shipdate < DATE '{date}' + INTERVAL 1 MONTH""",
    defaults={"date": "1995-09-01"},
    random_params=random_params,
    ranges={"date": DATE},
)
