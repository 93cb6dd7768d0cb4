"""TPC-H Q6, Forecasting Revenue Change (spec 2.4.6)."""

from __future__ import annotations

import random

from evaluator.queries.spec import Query


def random_params(rng: random.Random) -> dict:
    return {
        "date": f"{rng.randint(1993, 1997)}-01-01",
        "discount": rng.randint(2, 9) / 100,
        "quantity": rng.randint(24, 25),
    }


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
)
