"""TPC-H Q18, Large Volume Customer (spec 2.4.18)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Integers
from evaluator.queries.spec import Query

QUANTITY = Integers(312, 315)


def random_params(rng: random.Random) -> dict:
    return {"quantity": QUANTITY.draw(rng)}


QUERY = Query(
    number=18,
    name="Large Volume Customer",
    sql_template="""\
SELECT
    c_name,
    c_custkey,
    o_orderkey,
    o_orderdate,
    o_totalprice,
    sum(l_quantity)
FROM customer, orders, lineitem
WHERE o_orderkey IN (
        SELECT l_orderkey
        FROM lineitem
        GROUP BY l_orderkey
        HAVING sum(l_quantity) > {quantity})
  AND c_custkey = o_custkey
  AND o_orderkey = l_orderkey
GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
ORDER BY o_totalprice DESC, o_orderdate
LIMIT 100""",
    defaults={"quantity": 300},
    random_params=random_params,
    order_by=("o_totalprice", "o_orderdate"),
    strings={"c_name": ("customer", "c_name")},
    ranges={"quantity": QUANTITY},
    # The largest order's quantity is 305 at SF0.01 and 312 at SF0.1: QUANTITY's 312-315 select no order
    # below SF0.3 (2 orders there, about 10 at SF1).
    coverage_scale_factor=0.3,
)
