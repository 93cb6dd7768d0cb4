"""TPC-H Q13, Customer Distribution (spec 2.4.13)."""

from __future__ import annotations

import random

from evaluator.queries.spec import Query

WORDS1 = ("special", "pending", "unusual", "express")
WORDS2 = ("packages", "requests", "accounts", "deposits")


def random_params(rng: random.Random) -> dict:
    return {"word1": rng.choice(WORDS1), "word2": rng.choice(WORDS2)}


QUERY = Query(
    number=13,
    name="Customer Distribution",
    sql_template="""\
SELECT c_count, count(*) AS custdist
FROM (
    SELECT c_custkey, count(o_orderkey)
    FROM customer
    LEFT OUTER JOIN orders ON c_custkey = o_custkey
        AND o_comment NOT LIKE '%{word1}%{word2}%'
    GROUP BY c_custkey) AS c_orders (c_custkey, c_count)
GROUP BY c_count
ORDER BY custdist DESC, c_count DESC""",
    defaults={"word1": "special", "word2": "requests"},
    random_params=random_params,
    order_by=("custdist", "c_count"),
)
