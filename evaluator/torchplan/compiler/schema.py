"""The static TPC-H schema the compiler types columns with, and how each column lives on the device.

SQL types are DuckDB's `DESCRIBE` of dbgen's tables; the device encodings are not restated here but
derived from the data layer's own lists (`DICTIONARY_COLUMNS`, `FREE_TEXT_WIDTHS`), so a column moved
between encodings there is typed correctly here (docs/data-format.md).
"""

from __future__ import annotations

from enum import Enum

from evaluator.tpch.generate import DICTIONARY_COLUMNS, FREE_TEXT_WIDTHS


class Kind(Enum):
    """A value's device encoding; also the type of every compiled expression."""

    INT = "int"  # int64 (keys, counts, integers)
    DATE = "date"  # int32 days since 1970-01-01
    DECIMAL = "decimal"  # float64 nearest double of a DECIMAL(15,2)
    FLOAT = "float"  # float64 (AVG, division results)
    BOOL = "bool"
    DICT = "dict"  # int32 code into a sorted dictionary
    TEXT = "text"  # uint8 [rows, width] zero-padded byte matrix
    BYTES = "bytes"  # a fixed slice of a TEXT column (SUBSTRING with constant bounds), gathered like a column
    STR = "str"  # a host string (literal or parameter); never a tensor
    UNCACHED = "uncached"  # free text the cache does not hold (comments of most tables)


_SQL = {
    "region": "r_regionkey INTEGER, r_name VARCHAR, r_comment VARCHAR",
    "nation": "n_nationkey INTEGER, n_name VARCHAR, n_regionkey INTEGER, n_comment VARCHAR",
    "supplier": "s_suppkey BIGINT, s_name VARCHAR, s_address VARCHAR, s_nationkey INTEGER, "
    "s_phone VARCHAR, s_acctbal DECIMAL(15,2), s_comment VARCHAR",
    "customer": "c_custkey BIGINT, c_name VARCHAR, c_address VARCHAR, c_nationkey INTEGER, "
    "c_phone VARCHAR, c_acctbal DECIMAL(15,2), c_mktsegment VARCHAR, c_comment VARCHAR",
    "part": "p_partkey BIGINT, p_name VARCHAR, p_mfgr VARCHAR, p_brand VARCHAR, p_type VARCHAR, "
    "p_size INTEGER, p_container VARCHAR, p_retailprice DECIMAL(15,2), p_comment VARCHAR",
    "partsupp": "ps_partkey BIGINT, ps_suppkey BIGINT, ps_availqty BIGINT, "
    "ps_supplycost DECIMAL(15,2), ps_comment VARCHAR",
    "orders": "o_orderkey BIGINT, o_custkey BIGINT, o_orderstatus VARCHAR, o_totalprice DECIMAL(15,2), "
    "o_orderdate DATE, o_orderpriority VARCHAR, o_clerk VARCHAR, o_shippriority INTEGER, "
    "o_comment VARCHAR",
    "lineitem": "l_orderkey BIGINT, l_partkey BIGINT, l_suppkey BIGINT, l_linenumber BIGINT, "
    "l_quantity DECIMAL(15,2), l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2), "
    "l_tax DECIMAL(15,2), l_returnflag VARCHAR, l_linestatus VARCHAR, l_shipdate DATE, "
    "l_commitdate DATE, l_receiptdate DATE, l_shipinstruct VARCHAR, l_shipmode VARCHAR, "
    "l_comment VARCHAR",
}

# Single-column primary keys: a join on one of these is a PK-FK join, compiled as a direct-address
# lookup. partsupp and lineitem have composite keys and are never the looked-up side here.
PRIMARY_KEYS = {
    "region": "r_regionkey",
    "nation": "n_nationkey",
    "supplier": "s_suppkey",
    "customer": "c_custkey",
    "part": "p_partkey",
    "orders": "o_orderkey",
}


# Composite primary keys a join can reach a row by: lineitem -> partsupp on (partkey, suppkey) (Q9).
COMPOSITE_KEYS = {"partsupp": ("ps_partkey", "ps_suppkey")}


def sql_types() -> dict[str, dict[str, str]]:
    """Table -> column -> SQL type, the mapping sqlglot's optimizer wants as `schema`."""
    return {
        table: dict(part.strip().split(" ", 1) for part in columns.split(", "))
        for table, columns in _SQL.items()
    }


def column_kind(column: str, sql_type: str) -> Kind:
    if column in DICTIONARY_COLUMNS:
        return Kind.DICT
    if column in FREE_TEXT_WIDTHS:
        return Kind.TEXT
    if sql_type == "VARCHAR":
        return Kind.UNCACHED
    if sql_type == "DATE":
        return Kind.DATE
    if sql_type.startswith("DECIMAL"):
        return Kind.DECIMAL
    return Kind.INT


def table_of(column: str) -> str:
    """The table a TPC-H column belongs to (column names are unique across the schema)."""
    for table, columns in sql_types().items():
        if column in columns:
            return table
    raise KeyError(column)
