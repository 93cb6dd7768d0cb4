"""TPC-H Q11, Important Stock Identification (spec 2.4.11)."""

from __future__ import annotations

import random

from evaluator.queries.spec import Query
from evaluator.queries.words import NATIONS


def random_params(rng: random.Random) -> dict:
    # The spec's FRACTION is 0.0001 / SF; the parameters do not know the scale factor, so it keeps
    # DuckDB's validation value 0.0001 (at SF10 fewer parts qualify than the spec intends).
    return {"nation": rng.choice(NATIONS)}


QUERY = Query(
    number=11,
    name="Important Stock Identification",
    sql_template="""\
SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value
FROM partsupp, supplier, nation
WHERE ps_suppkey = s_suppkey
  AND s_nationkey = n_nationkey
  AND n_name = '{nation}'
GROUP BY ps_partkey
HAVING sum(ps_supplycost * ps_availqty) > (
    SELECT sum(ps_supplycost * ps_availqty) * {fraction}
    FROM partsupp, supplier, nation
    WHERE ps_suppkey = s_suppkey
      AND s_nationkey = n_nationkey
      AND n_name = '{nation}')
ORDER BY value DESC""",
    defaults={"nation": "GERMANY", "fraction": "0.0001000000"},
    random_params=random_params,
    order_by=("value",),
)
