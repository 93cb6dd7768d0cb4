"""TPC-H Q20, Potential Part Promotion (spec 2.4.20)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Dates
from evaluator.queries.spec import Query
from evaluator.queries.words import COLORS, NATIONS

DATE = Dates("1993-01-01", "1997-01-01", "year")


def random_params(rng: random.Random) -> dict:
    return {
        "color": rng.choice(COLORS),
        "date": DATE.draw(rng),
        "nation": rng.choice(NATIONS),
    }


QUERY = Query(
    number=20,
    name="Potential Part Promotion",
    sql_template="""\
SELECT s_name, s_address
FROM supplier, nation
WHERE s_suppkey IN (
        SELECT ps_suppkey
        FROM partsupp
        WHERE ps_partkey IN (
                SELECT p_partkey
                FROM part
                WHERE p_name LIKE '{color}%')
          AND ps_availqty > (
                SELECT 0.5 * sum(l_quantity)
                FROM lineitem
                WHERE l_partkey = ps_partkey
                  AND l_suppkey = ps_suppkey
                  AND l_shipdate >= DATE '{date}'
                  AND l_shipdate < DATE '{date}' + INTERVAL 1 YEAR))
  AND s_nationkey = n_nationkey
  AND n_name = '{nation}'
ORDER BY s_name""",
    defaults={"color": "forest", "date": "1994-01-01", "nation": "CANADA"},
    random_params=random_params,
    order_by=("s_name",),
    strings={"s_name": ("supplier", "s_name"), "s_address": ("supplier", "s_address")},
    ranges={"date": DATE},
)
