"""TPC-H Q8, National Market Share (spec 2.4.8)."""

from __future__ import annotations

import random

from evaluator.queries.spec import Query
from evaluator.queries.words import NATION_REGIONS, TYPE_SYLLABLES


def random_params(rng: random.Random) -> dict:
    nation = rng.choice(sorted(NATION_REGIONS))
    return {
        "nation": nation,
        "region": NATION_REGIONS[nation],
        "type": " ".join(rng.choice(syllables) for syllables in TYPE_SYLLABLES),
    }


QUERY = Query(
    number=8,
    name="National Market Share",
    sql_template="""\
SELECT
    o_year,
    sum(CASE WHEN nation = '{nation}' THEN volume ELSE 0 END) / sum(volume) AS mkt_share
FROM (
    SELECT
        extract(year FROM o_orderdate) AS o_year,
        l_extendedprice * (1 - l_discount) AS volume,
        n2.n_name AS nation
    FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region
    WHERE p_partkey = l_partkey
      AND s_suppkey = l_suppkey
      AND l_orderkey = o_orderkey
      AND o_custkey = c_custkey
      AND c_nationkey = n1.n_nationkey
      AND n1.n_regionkey = r_regionkey
      AND r_name = '{region}'
      AND s_nationkey = n2.n_nationkey
      AND o_orderdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31'
      AND p_type = '{type}') AS all_nations
GROUP BY o_year
ORDER BY o_year""",
    defaults={"nation": "BRAZIL", "region": "AMERICA", "type": "ECONOMY ANODIZED STEEL"},
    random_params=random_params,
    order_by=("o_year",),
)
