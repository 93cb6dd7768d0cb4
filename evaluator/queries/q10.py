"""TPC-H Q10, Returned Item Reporting (spec 2.4.10)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Dates
from evaluator.queries.spec import Query

# The first day of a month from February 1993 to January 1995.
DATE = Dates("1993-02-01", "1995-01-01", "month")


def random_params(rng: random.Random) -> dict:
    return {"date": DATE.draw(rng)}


QUERY = Query(
    number=10,
    name="Returned Item Reporting",
    sql_template="""\
SELECT
    c_custkey,
    c_name,
    sum(l_extendedprice * (1 - l_discount)) AS revenue,
    c_acctbal,
    n_name,
    c_address,
    c_phone,
    c_comment
FROM customer, orders, lineitem, nation
WHERE c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND o_orderdate >= DATE '{date}'
  AND o_orderdate < DATE '{date}' + INTERVAL 3 MONTH
  AND l_returnflag = 'R'
  AND c_nationkey = n_nationkey
GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
ORDER BY revenue DESC
LIMIT 20""",
    defaults={"date": "1993-10-01"},
    random_params=random_params,
    order_by=("revenue",),
    strings={
        "c_name": ("customer", "c_name"),
        "n_name": ("nation", "n_name"),
        "c_address": ("customer", "c_address"),
        "c_phone": ("customer", "c_phone"),
        "c_comment": ("customer", "c_comment"),
    },
    ranges={"date": DATE},
)
