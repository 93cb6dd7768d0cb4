"""TPC-H Q21, Suppliers Who Kept Orders Waiting (spec 2.4.21)."""

from __future__ import annotations

import random

from evaluator.queries.spec import Query
from evaluator.queries.words import NATIONS


def random_params(rng: random.Random) -> dict:
    return {"nation": rng.choice(NATIONS)}


QUERY = Query(
    number=21,
    name="Suppliers Who Kept Orders Waiting",
    sql_template="""\
SELECT s_name, count(*) AS numwait
FROM supplier, lineitem l1, orders, nation
WHERE s_suppkey = l1.l_suppkey
  AND o_orderkey = l1.l_orderkey
  AND o_orderstatus = 'F'
  AND l1.l_receiptdate > l1.l_commitdate
  AND EXISTS (
      SELECT * FROM lineitem l2
      WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)
  AND NOT EXISTS (
      SELECT * FROM lineitem l3
      WHERE l3.l_orderkey = l1.l_orderkey
        AND l3.l_suppkey <> l1.l_suppkey
        AND l3.l_receiptdate > l3.l_commitdate)
  AND s_nationkey = n_nationkey
  AND n_name = '{nation}'
GROUP BY s_name
ORDER BY numwait DESC, s_name
LIMIT 100""",
    defaults={"nation": "SAUDI ARABIA"},
    random_params=random_params,
    order_by=("numwait", "s_name"),
    strings={"s_name": ("supplier", "s_name")},
)
