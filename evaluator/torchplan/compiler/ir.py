"""The compiler's IR: typed scalar expressions and one query block over a PK-FK join tree.

Expressions are frozen dataclasses (hashable, so equal subexpressions are computed once). Column-free
parts of an expression (parameters, literals, date arithmetic) become `Host` scalars: Python code
that `run_query` evaluates once and passes to `_query_core` as a plain int, float or small tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from evaluator.torchplan.compiler.schema import Kind


@dataclass(frozen=True)
class Col:
    alias: str  # the relation as the query names it (a table may appear twice, e.g. nation n1, n2)
    table: str
    name: str
    kind: Kind
    # SUBSTRING(text, start, length) of a free-text column: (start - 1, length); a byte matrix of its
    # own (Kind.BYTES) that run_query slices out of the column, gathered like any other column.
    span: tuple[int, int] | None = None


@dataclass(frozen=True)
class Lit:
    """A number written inline in the emitted code (`1 - l_discount`)."""

    value: int | float
    kind: Kind


@dataclass(frozen=True)
class Host:
    """A value computed on the host in `run_query` from parameters and literals.

    `code` is a Python expression over the parameter names; `hint` is a readable name for it.
    """

    code: str
    kind: Kind
    hint: str
    params: tuple[str, ...] = ()


@dataclass(frozen=True)
class Op:
    """Arithmetic, comparison and boolean operators: + - * / neg = <> < <= > >= and or not, year."""

    op: str
    args: tuple[Expr, ...]
    kind: Kind


@dataclass(frozen=True)
class Scalar:
    """The one value of an uncorrelated scalar subquery (`Block.scalars[var]`): a 1-element tensor."""

    var: str
    kind: Kind


@dataclass(frozen=True)
class MatchCount:
    """`COUNT(b.x)` of a view `a LEFT JOIN b ON a.pk = b.fk [AND conditions on b] GROUP BY a.pk`, per
    row of a: how many filtered b rows have `fk` equal to this row's `key` (0 for none, Q13)."""

    key: Col
    inner_alias: str
    inner_table: str
    inner_filters: tuple[Expr, ...]
    inner_key: Col
    kind: Kind = Kind.INT


@dataclass(frozen=True)
class ExistsOther:
    """`EXISTS (SELECT * FROM t x WHERE x.k = key AND x.v <> value AND filters)`, per row (Q21): true
    when the filtered rows of `key` hold a v other than `value`, i.e. their least or greatest v."""

    key: Col
    value: Col
    inner_alias: str
    inner_table: str
    inner_filters: tuple[Expr, ...]
    inner_key: Col
    inner_value: Col
    kind: Kind = Kind.BOOL


@dataclass(frozen=True)
class Case:
    whens: tuple[tuple[Expr, Expr], ...]
    default: Expr
    kind: Kind


@dataclass(frozen=True)
class DictPred:
    """A string predicate on a dictionary-coded column, evaluated once per dictionary entry.

    op: "eq"/"ne" (compare codes with the host code of `values[0]`), "in" or "like" (gather a host
    boolean table by code). `values` are host strings.
    """

    op: str
    column: Col
    values: tuple[Host, ...]
    negate: bool = False
    kind: ClassVar[Kind] = Kind.BOOL  # a class attribute, not a field: equality and repr stay as they are


@dataclass(frozen=True)
class TextPred:
    """A predicate on a free-text byte matrix: "eq", "prefix", "contains" or "in_order" (two needles)."""

    op: str
    column: Col
    needles: tuple[Host, ...]
    negate: bool = False
    kind: ClassVar[Kind] = Kind.BOOL  # a class attribute, not a field: equality and repr stay as they are


@dataclass(frozen=True)
class Agg:
    func: str  # sum, count, avg, min, max
    arg: Expr | None  # None for COUNT(*)
    kind: Kind


Expr = Col | Lit | Host | Scalar | MatchCount | ExistsOther | Op | Case | DictPred | TextPred | Agg


@dataclass
class Relation:
    alias: str
    table: str
    filters: list[Expr] = field(default_factory=list)


@dataclass
class Lookup:
    """PK-FK inner join: each `parent` row finds its one `child` row where `fk` equals the child's PK."""

    parent: str
    child: str
    fk: Col
    pk: Col
    more: tuple[tuple[Col, Col], ...] = ()  # the other (fk, pk) pairs of a composite key (partsupp's)


@dataclass
class SemiJoin:
    """`parent.key IN (SELECT inner_key FROM inner WHERE filters)`; anti for NOT EXISTS / NOT IN."""

    parent: str
    key: Col
    inner: Relation
    inner_key: Col
    anti: bool


@dataclass
class Derived:
    """A subquery grouped by one key (`SELECT k, agg(...) FROM t WHERE ... GROUP BY k [HAVING ...]`)
    that sqlglot unnested into a LEFT JOIN on `k`: a relation with one row per key, so `k` is its
    primary key and a PK-FK lookup reaches it (Q17's correlated AVG, Q18's IN ... HAVING).

    Its columns are Cols with `table == alias`: `key.name` (the key) and `aggs`' names.
    """

    alias: str
    source: Relation | None  # the base table with the subquery's WHERE as filters (None: `block`)
    source_key: Col  # the GROUP BY column on the base table
    key: Col  # the same key as a column of the derived relation
    aggs: list[tuple[str, Agg]]
    # a subquery over a join (Q2) is a block of its own, grouped by the key; its outputs are the columns
    block: Block | None = None
    # the other GROUP BY columns of a composite key (Q20's (l_partkey, l_suppkey)): (source, derived)
    more_keys: tuple[tuple[Col, Col], ...] = ()


@dataclass
class Block:
    relations: dict[str, Relation]
    root: str
    lookups: list[Lookup]  # parents before children (BFS from the root)
    semis: list[SemiJoin]
    residual: list[Expr]  # conditions across relations, evaluated on the joined rows
    group_by: list[Expr]
    outputs: list[tuple[str, Expr]]
    having: Expr | None
    order_by: list[tuple[Expr, bool]]  # (expression, descending)
    limit: int | None
    derived: dict[str, Derived] = field(default_factory=dict)
    # uncorrelated scalar subqueries, each a block of its own computed before this one: var -> block
    scalars: dict[str, Block] = field(default_factory=dict)


def walk(expr: Expr):
    """Every node of an expression, parents first."""
    yield expr
    children: tuple = ()
    if isinstance(expr, Op):
        children = expr.args
    elif isinstance(expr, Case):
        children = tuple(x for pair in expr.whens for x in pair) + (expr.default,)
    elif isinstance(expr, DictPred | TextPred):
        children = (expr.column,)
    elif isinstance(expr, MatchCount):
        children = (expr.key,)  # the inner filters run on the inner table's rows, not on this row
    elif isinstance(expr, ExistsOther):
        children = (expr.key, expr.value)
    elif isinstance(expr, Agg) and expr.arg is not None:
        children = (expr.arg,)
    for child in children:
        yield from walk(child)


def columns(expr: Expr) -> set[Col]:
    return {node for node in walk(expr) if isinstance(node, Col)}


def aliases(expr: Expr) -> set[str]:
    return {c.alias for c in columns(expr)}


def has_agg(expr: Expr) -> bool:
    return any(isinstance(node, Agg) for node in walk(expr))
