"""TPC-H Q20, Potential Part Promotion (spec 2.4.20)."""

from __future__ import annotations

import random

from evaluator.queries.spec import Query

# The words of P_NAME (spec 4.2.3): COLOR is one of them.
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
NATIONS = (
    "ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA", "FRANCE", "GERMANY", "INDIA",
    "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA", "MOROCCO", "MOZAMBIQUE", "PERU", "CHINA",
    "ROMANIA", "SAUDI ARABIA", "VIETNAM", "RUSSIA", "UNITED KINGDOM", "UNITED STATES",
)  # fmt: skip


def random_params(rng: random.Random) -> dict:
    return {
        "color": rng.choice(COLORS),
        "date": f"{rng.randint(1993, 1997)}-01-01",
        "nation": rng.choice(NATIONS),
    }


QUERY = Query(
    number=20,
    name="Potential Part Promotion",
    sql_template="""\
SELECT s_name, s_address
FROM supplier, nation
WHERE s_suppkey IN (
        SELECT ps_suppkey
        FROM partsupp
        WHERE ps_partkey IN (
                SELECT p_partkey
                FROM part
                WHERE p_name LIKE '{color}%')
          AND ps_availqty > (
                SELECT 0.5 * sum(l_quantity)
                FROM lineitem
                WHERE l_partkey = ps_partkey
                  AND l_suppkey = ps_suppkey
                  AND l_shipdate >= DATE '{date}'
                  AND l_shipdate < DATE '{date}' + INTERVAL 1 YEAR))
  AND s_nationkey = n_nationkey
  AND n_name = '{nation}'
ORDER BY s_name""",
    defaults={"color": "forest", "date": "1994-01-01", "nation": "CANADA"},
    random_params=random_params,
    order_by=("s_name",),
    strings={"s_name": ("supplier", "s_name"), "s_address": ("supplier", "s_address")},
)
