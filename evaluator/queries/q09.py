"""TPC-H Q9, Product Type Profit Measure (spec 2.4.9)."""

from __future__ import annotations

import random

from evaluator.queries.spec import Query

# The words P_NAME is generated from (spec 4.2.3).
COLORS = (
    "almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched", "blue", "blush",
    "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate", "coral", "cornflower",
    "cornsilk", "cream", "cyan", "dark", "deep", "dim", "dodger", "drab", "firebrick", "floral", "forest",
    "frosted", "gainsboro", "ghost", "goldenrod", "green", "grey", "honeydew", "hot", "indian", "ivory",
    "khaki", "lace", "lavender", "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium",
    "metallic", "midnight", "mint", "misty", "moccasin", "navajo", "navy", "olive", "orange", "orchid",
    "pale", "papaya", "peach", "peru", "pink", "plum", "powder", "puff", "purple", "red", "rose", "rosy",
    "royal", "saddle", "salmon", "sandy", "seashell", "sienna", "sky", "slate", "smoke", "snow", "spring",
    "steel", "tan", "thistle", "tomato", "turquoise", "violet", "wheat", "white", "yellow",
)  # fmt: skip


def random_params(rng: random.Random) -> dict:
    return {"color": rng.choice(COLORS)}


QUERY = Query(
    number=9,
    name="Product Type Profit Measure",
    sql_template="""\
SELECT nation, o_year, sum(amount) AS sum_profit
FROM (
    SELECT
        n_name AS nation,
        extract(year FROM o_orderdate) AS o_year,
        l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity AS amount
    FROM part, supplier, lineitem, partsupp, orders, nation
    WHERE s_suppkey = l_suppkey
      AND ps_suppkey = l_suppkey
      AND ps_partkey = l_partkey
      AND p_partkey = l_partkey
      AND o_orderkey = l_orderkey
      AND s_nationkey = n_nationkey
      AND p_name LIKE '%{color}%') AS profit
GROUP BY nation, o_year
ORDER BY nation, o_year DESC""",
    defaults={"color": "green"},
    random_params=random_params,
    order_by=("nation", "o_year"),
    strings={"nation": ("nation", "n_name")},
)
