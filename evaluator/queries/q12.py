"""TPC-H Q12, Shipping Modes and Order Priority (spec 2.4.12)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Dates
from evaluator.queries.spec import Query
from evaluator.queries.words import SHIP_MODES

DATE = Dates("1993-01-01", "1997-01-01", "year")


def random_params(rng: random.Random) -> dict:
    shipmode1, shipmode2 = rng.sample(SHIP_MODES, 2)
    return {"shipmode1": shipmode1, "shipmode2": shipmode2, "date": DATE.draw(rng)}


QUERY = Query(
    number=12,
    name="Shipping Modes and Order Priority",
    sql_template="""\
SELECT
    l_shipmode,
    sum(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH' THEN 1 ELSE 0 END)
        AS high_line_count,
    sum(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH' THEN 1 ELSE 0 END)
        AS low_line_count
FROM orders, lineitem
WHERE o_orderkey = l_orderkey
  AND l_shipmode IN ('{shipmode1}', '{shipmode2}')
  AND l_commitdate < l_receiptdate
  AND l_shipdate < l_commitdate
  AND l_receiptdate >= DATE '{date}'
  AND l_receiptdate < DATE '{date}' + INTERVAL 1 YEAR
GROUP BY l_shipmode
ORDER BY l_shipmode""",
    defaults={"shipmode1": "MAIL", "shipmode2": "SHIP", "date": "1994-01-01"},
    random_params=random_params,
    order_by=("l_shipmode",),
    strings={"l_shipmode": ("lineitem", "l_shipmode")},
    ranges={"date": DATE},
)
