"""The TPC-H spec's word lists that substitution parameters are drawn from (spec 4.2.2.13, 4.2.3)."""

from __future__ import annotations

import random

# Nations and their regions, in N_NATIONKEY order.
NATION_REGIONS = {
    "ALGERIA": "AFRICA", "ARGENTINA": "AMERICA", "BRAZIL": "AMERICA", "CANADA": "AMERICA",
    "EGYPT": "MIDDLE EAST", "ETHIOPIA": "AFRICA", "FRANCE": "EUROPE", "GERMANY": "EUROPE",
    "INDIA": "ASIA", "INDONESIA": "ASIA", "IRAN": "MIDDLE EAST", "IRAQ": "MIDDLE EAST", "JAPAN": "ASIA",
    "JORDAN": "MIDDLE EAST", "KENYA": "AFRICA", "MOROCCO": "AFRICA", "MOZAMBIQUE": "AFRICA",
    "PERU": "AMERICA", "CHINA": "ASIA", "ROMANIA": "EUROPE", "SAUDI ARABIA": "MIDDLE EAST",
    "VIETNAM": "ASIA", "RUSSIA": "EUROPE", "UNITED KINGDOM": "EUROPE", "UNITED STATES": "AMERICA",
}  # fmt: skip
NATIONS = tuple(NATION_REGIONS)
REGIONS = ("AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST")
SEGMENTS = ("AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY")
SHIP_MODES = ("REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB")
# P_TYPE is one word from each of the three syllable lists.
TYPE_SYLLABLES = (
    ("STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"),
    ("ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"),
    ("TIN", "NICKEL", "BRASS", "STEEL", "COPPER"),
)
# P_CONTAINER is a size and a type.
CONTAINER_SIZES = ("SM", "LG", "MED", "JUMBO", "WRAP")
CONTAINER_TYPES = ("CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM")
# The words P_NAME is generated from.
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


def brand(rng: random.Random) -> str:
    """A P_BRAND value, 'Brand#MN' with M and N in 1..5."""
    return f"Brand#{rng.randint(1, 5)}{rng.randint(1, 5)}"
