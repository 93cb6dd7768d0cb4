"""TPC-H Q16, Parts/Supplier Relationship (spec 2.4.16)."""

from __future__ import annotations

import random

from evaluator.queries.ranges import Integers
from evaluator.queries.spec import Query
from evaluator.queries.words import TYPE_SYLLABLES, brand

SIZES = ("size1", "size2", "size3", "size4", "size5", "size6", "size7", "size8")
SIZE = Integers(1, 50)


def random_params(rng: random.Random) -> dict:
    return {
        "brand": brand(rng),
        "type": " ".join(rng.choice(syllables) for syllables in TYPE_SYLLABLES[:2]),
        **dict(zip(SIZES, rng.sample(SIZE.values(), len(SIZES)), strict=True)),
    }


QUERY = Query(
    number=16,
    name="Parts/Supplier Relationship",
    sql_template="""\
SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt
FROM partsupp, part
WHERE p_partkey = ps_partkey
  AND p_brand <> '{brand}'
  AND p_type NOT LIKE '{type}%'
  AND p_size IN ({size1}, {size2}, {size3}, {size4}, {size5}, {size6}, {size7}, {size8})
  AND ps_suppkey NOT IN (
      SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%')
GROUP BY p_brand, p_type, p_size
ORDER BY supplier_cnt DESC, p_brand, p_type, p_size""",
    defaults={
        "brand": "Brand#45",
        "type": "MEDIUM POLISHED",
        **dict(zip(SIZES, (49, 14, 23, 45, 19, 3, 36, 9), strict=True)),
    },
    random_params=random_params,
    order_by=("supplier_cnt", "p_brand", "p_type", "p_size"),
    strings={"p_brand": ("part", "p_brand"), "p_type": ("part", "p_type")},
    # The eight sizes are one IN list drawn without repeats, so its ends are the list holding 1 and the
    # list holding 50: one name carries the range (the defaults hold neither).
    ranges={"size1": SIZE},
)
