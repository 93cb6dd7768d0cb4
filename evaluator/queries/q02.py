"""TPC-H Q2, Minimum Cost Supplier (spec 2.4.2)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Integers
from evaluator.queries.spec import Query
from evaluator.queries.words import REGIONS, TYPE_SYLLABLES

SIZE = Integers(1, 50)


def random_params(rng: random.Random) -> dict:
    return {
        "size": SIZE.draw(rng),
        "type": rng.choice(TYPE_SYLLABLES[2]),
        "region": rng.choice(REGIONS),
    }


QUERY = Query(
    number=2,
    name="Minimum Cost Supplier",
    sql_template="""\
SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
FROM part, supplier, partsupp, nation, region
WHERE p_partkey = ps_partkey
  AND s_suppkey = ps_suppkey
  AND p_size = {size}
  AND p_type LIKE '%{type}'
  AND s_nationkey = n_nationkey
  AND n_regionkey = r_regionkey
  AND r_name = '{region}'
  AND ps_supplycost = (
      SELECT min(ps_supplycost)
      FROM partsupp, supplier, nation, region
      WHERE p_partkey = ps_partkey
        AND s_suppkey = ps_suppkey
        AND s_nationkey = n_nationkey
        AND n_regionkey = r_regionkey
        AND r_name = '{region}')
ORDER BY s_acctbal DESC, n_name, s_name, p_partkey
LIMIT 100""",
    defaults={"size": 15, "type": "BRASS", "region": "EUROPE"},
    random_params=random_params,
    order_by=("s_acctbal", "n_name", "s_name", "p_partkey"),
    strings={
        "s_name": ("supplier", "s_name"),
        "n_name": ("nation", "n_name"),
        "p_mfgr": ("part", "p_mfgr"),
        "s_address": ("supplier", "s_address"),
        "s_phone": ("supplier", "s_phone"),
        "s_comment": ("supplier", "s_comment"),
    },
    ranges={"size": SIZE},
)
