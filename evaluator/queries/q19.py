"""TPC-H Q19, Discounted Revenue (spec 2.4.19)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Integers, Range
from evaluator.queries.spec import Query
from evaluator.queries.words import brand

QUANTITIES: dict[str, Range] = {
    "quantity1": Integers(1, 10),
    "quantity2": Integers(10, 20),
    "quantity3": Integers(20, 30),
}


def random_params(rng: random.Random) -> dict:
    return {
        **{name: values.draw(rng) for name, values in QUANTITIES.items()},
        "brand1": brand(rng),
        "brand2": brand(rng),
        "brand3": brand(rng),
    }


QUERY = Query(
    number=19,
    name="Discounted Revenue",
    sql_template="""\
SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM lineitem, part
WHERE (p_partkey = l_partkey
       AND p_brand = '{brand1}'
       AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
       AND l_quantity >= {quantity1}
       AND l_quantity <= {quantity1} + 10
       AND p_size BETWEEN 1 AND 5
       AND l_shipmode IN ('AIR', 'AIR REG')
       AND l_shipinstruct = 'DELIVER IN PERSON')
   OR (p_partkey = l_partkey
       AND p_brand = '{brand2}'
       AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
       AND l_quantity >= {quantity2}
       AND l_quantity <= {quantity2} + 10
       AND p_size BETWEEN 1 AND 10
       AND l_shipmode IN ('AIR', 'AIR REG')
       AND l_shipinstruct = 'DELIVER IN PERSON')
   OR (p_partkey = l_partkey
       AND p_brand = '{brand3}'
       AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
       AND l_quantity >= {quantity3}
       AND l_quantity <= {quantity3} + 10
       AND p_size BETWEEN 1 AND 15
       AND l_shipmode IN ('AIR', 'AIR REG')
       AND l_shipinstruct = 'DELIVER IN PERSON')""",
    defaults={
        "quantity1": 1,
        "quantity2": 10,
        "quantity3": 20,
        "brand1": "Brand#12",
        "brand2": "Brand#23",
        "brand3": "Brand#34",
    },
    random_params=random_params,
    ranges=QUANTITIES,
)
