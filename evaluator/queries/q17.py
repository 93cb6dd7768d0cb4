"""TPC-H Q17, Small-Quantity-Order Revenue (spec 2.4.17)."""

from __future__ import annotations

import random

from evaluator.queries.spec import Query
from evaluator.queries.words import CONTAINER_SIZES, CONTAINER_TYPES, brand


def random_params(rng: random.Random) -> dict:
    return {
        "brand": brand(rng),
        "container": f"{rng.choice(CONTAINER_SIZES)} {rng.choice(CONTAINER_TYPES)}",
    }


QUERY = Query(
    number=17,
    name="Small-Quantity-Order Revenue",
    sql_template="""\
SELECT sum(l_extendedprice) / 7.0 AS avg_yearly
FROM lineitem, part
WHERE p_partkey = l_partkey
  AND p_brand = '{brand}'
  AND p_container = '{container}'
  AND l_quantity < (
        SELECT 0.2 * avg(l_quantity)
        FROM lineitem
        WHERE l_partkey = p_partkey)""",
    defaults={"brand": "Brand#23", "container": "MED BOX"},
    random_params=random_params,
)
