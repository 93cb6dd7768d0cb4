"""Grouped subqueries sqlglot unnested into `LEFT JOIN (SELECT k, agg ... GROUP BY k [HAVING]) u ON u.k = c`.

Such a subquery has one row per key, so it is a relation whose primary key is `k`: the outer query
reaches it by a PK-FK lookup, like any dimension table. That is an inner join, which equals SQL's
LEFT JOIN only when every use of `u` rejects NULLs: `u.k IS NOT NULL` (Q18's IN ... HAVING) or a
comparison with one of its columns (Q17's `l_quantity < 0.2 * avg`, the correlated aggregate
computed once per key and gathered back). Other uses are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sqlglot import exp

from evaluator.torchplan.compiler.errors import UnsupportedSQL
from evaluator.torchplan.compiler.exprs import Lowering
from evaluator.torchplan.compiler.ir import Agg, Case, Col, Derived, Expr, Op, Relation
from evaluator.torchplan.compiler.params import Binding


def is_grouped(body: exp.Select) -> bool:
    """A single-table subquery with one GROUP BY key and aggregates or HAVING (not a plain EXISTS/IN)."""
    group = body.args.get("group")
    if not group or len(group.expressions) != 1 or body.args.get("joins"):
        return False
    has_agg = any(p.find(exp.AggFunc) for p in body.expressions)
    return bool(has_agg or body.args.get("having"))


def null_rejecting(condition: exp.Expr, alias: str) -> bool:
    """The WHERE conjunct is false or NULL whenever the columns of `alias` are NULL."""
    if isinstance(condition, exp.Not) and isinstance(condition.this, exp.Is):
        return isinstance(condition.this.expression, exp.Null)
    comparisons = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)
    if isinstance(condition, comparisons):
        return any(c.table == alias for c in condition.find_all(exp.Column))
    return False


def lower_grouped(alias: str, body: exp.Select, binding: Binding) -> tuple[Derived, Relation, dict]:
    """The derived relation, its Relation (HAVING as its filter) and its columns by SQL name."""
    source = body.args["from_"].this
    if not isinstance(source, exp.Table):
        raise UnsupportedSQL("grouped subquery over a derived table")
    table = source.name
    inner_alias = f"{alias.strip('_')}_{table}"
    lowering = Lowering(binding, {source.alias_or_name: (inner_alias, table)}, "in a grouped subquery")
    where = body.args.get("where")
    filters = [lowering.lower(c) for c in _conjuncts(where.this)] if where is not None else []
    source_key = lowering.lower(body.args["group"].expressions[0])
    if not isinstance(source_key, Col):
        raise UnsupportedSQL("subquery grouped by an expression")
    key = Col(alias, alias, source_key.name, source_key.kind)
    aggs: list[tuple[str, Agg]] = []

    def as_column(agg: Agg) -> Col:
        for name, known in aggs:
            if known == agg:
                return Col(alias, alias, name, agg.kind)
        aggs.append((f"agg{len(aggs)}", agg))
        return Col(alias, alias, aggs[-1][0], agg.kind)

    columns: dict[str, Expr] = {}
    for projection in body.expressions:
        lowered = lowering.lower(projection.unalias())
        columns[projection.alias_or_name] = (
            key if lowered == source_key else _replace_aggs(lowered, as_column)
        )
    having_node = body.args.get("having")
    having = [_replace_aggs(lowering.lower(having_node.this), as_column)] if having_node else []
    derived = Derived(alias, Relation(inner_alias, table, filters), source_key, key, aggs)
    return derived, Relation(alias, alias, having), columns


def _replace_aggs(expr: Expr, column: Callable[[Agg], Col]) -> Expr:
    if isinstance(expr, Agg):
        return column(expr)
    if isinstance(expr, Op):
        return replace(expr, args=tuple(_replace_aggs(a, column) for a in expr.args))
    if isinstance(expr, Case):
        whens = tuple((_replace_aggs(c, column), _replace_aggs(v, column)) for c, v in expr.whens)
        return replace(expr, whens=whens, default=_replace_aggs(expr.default, column))
    return expr


def _conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    if isinstance(condition, exp.And):
        return _conjuncts(condition.this) + _conjuncts(condition.expression)
    if isinstance(condition, exp.Paren):
        return _conjuncts(condition.this)
    return [condition]
