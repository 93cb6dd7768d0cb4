"""TPC-H Q1, Pricing Summary Report (spec 2.4.1)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Integers
from evaluator.queries.spec import Query

DELTA = Integers(60, 120)


def random_params(rng: random.Random) -> dict:
    return {"delta": DELTA.draw(rng)}


QUERY = Query(
    number=1,
    name="Pricing Summary Report",
    sql_template="""\
SELECT
    l_returnflag,
    l_linestatus,
    sum(l_quantity) AS sum_qty,
    sum(l_extendedprice) AS sum_base_price,
    sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
    sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
    avg(l_quantity) AS avg_qty,
    avg(l_extendedprice) AS avg_price,
    avg(l_discount) AS avg_disc,
    count(*) AS count_order
FROM lineitem
WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL {delta} DAY
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus""",
    defaults={"delta": 90},
    random_params=random_params,
    order_by=("l_returnflag", "l_linestatus"),
    strings={"l_returnflag": ("lineitem", "l_returnflag"), "l_linestatus": ("lineitem", "l_linestatus")},
    ranges={"delta": DELTA},
)
