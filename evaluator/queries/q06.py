"""TPC-H Q6, Forecasting Revenue Change (spec 2.4.6)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Dates, Decimals, Integers
from evaluator.queries.spec import Query

RANGES = {
    "date": Dates("1993-01-01", "1997-01-01", "year"),
    "discount": Decimals("0.02", "0.09"),
    "quantity": Integers(24, 25),
}


def random_params(rng: random.Random) -> dict:
    return {name: values.draw(rng) for name, values in RANGES.items()}


QUERY = Query(
    number=6,
    name="Forecasting Revenue Change",
    sql_template="""\
SELECT sum(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_shipdate >= DATE '{date}'
  AND l_shipdate < DATE '{date}' + INTERVAL 1 YEAR
  AND l_discount BETWEEN {discount} - 0.01 AND {discount} + 0.01
  AND l_quantity < {quantity}""",
    defaults={"date": "1994-01-01", "discount": 0.06, "quantity": 24},
    random_params=random_params,
    ranges=RANGES,
)
