"""SQL text -> sqlglot (parse, bind parameters, optimize) -> one IR `Block`.

sqlglot's optimizer qualifies every column, pushes single-table filters into per-table CTEs
(`leave_tables_isolated=True`) and unnests EXISTS / IN into LEFT JOINs on grouped CTEs. Its planner's
steps are not used: it has no Filter step and splits join keys from their conditions (see
docs/torchplan-compiler.md); the optimized SELECT is the skeleton instead, and every condition,
wherever sqlglot put it, is reclassified by the relations it touches (select_block.py lowers it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer import optimize

from evaluator.torchplan.compiler.errors import UnsupportedSQL
from evaluator.torchplan.compiler.params import bind, sentinels
from evaluator.torchplan.compiler.schema import sql_types, table_of
from evaluator.torchplan.compiler.select_block import Frontend, _conjuncts, lower_select


def parse(sql: str, params: dict[str, Any] | None, template: str | None = None) -> Frontend:
    """`template`: the SQL with `{param}` fields; rendered with sentinels, its parameters bind exactly."""
    spelled = sentinels(params or {}) if template is not None else None
    text = template.format(**spelled) if template is not None and spelled is not None else sql
    try:
        tree = sqlglot.parse_one(text, read="duckdb")
    except SqlglotError as exc:
        raise UnsupportedSQL(f"SQL sqlglot cannot parse ({str(exc).splitlines()[0]})") from exc
    if not isinstance(tree, exp.Select):
        raise UnsupportedSQL(f"top-level {tree.key.upper()} (only a single SELECT)")
    _not_in_as_not_exists(tree)
    # DuckDB names an unaliased `sum(l_quantity)` by its text; sqlglot's optimizer calls it `_col_5`.
    names = [
        p.alias_or_name
        if p.alias or isinstance(p, exp.Column)
        else p.sql(dialect="duckdb", normalize_functions="lower")
        for p in tree.expressions
    ]
    binding = bind(tree, params, spelled)
    binding.exists = _exists_with_other(tree)
    _refuse_before_optimizing(tree)
    try:
        optimized = optimize(
            tree, schema=dict[str, object](sql_types()), dialect="duckdb", leave_tables_isolated=True
        )
    except SqlglotError as exc:
        raise UnsupportedSQL(f"SQL sqlglot cannot optimize ({str(exc).splitlines()[0]})") from exc
    # The optimizer rewrites a SELECT into a SELECT.
    return lower_select(sql, binding, cast(exp.Select, optimized), names)


def _refuse_before_optimizing(tree: exp.Select) -> None:
    """Shapes the optimizer would rewrite beyond recognition get named while still recognisable."""
    for sub in tree.find_all(exp.Select):
        if sub is tree or isinstance(sub.parent, exp.CTE):
            continue  # a WITH view is checked where it is used, as a table
        if isinstance(sub.parent, exp.Subquery) and isinstance(sub.parent.parent, exp.From | exp.Join):
            where = "in FROM"
        else:
            clause = sub.find_ancestor(exp.Where, exp.Having)
            where = f"in {clause.key.upper()}" if clause is not None else "in SELECT"
        # A column no TPC-H table has is a view's (Q15's total_revenue): local to its FROM.
        correlated = any(_owner(c) not in _local_tables(sub) | {""} for c in sub.find_all(exp.Column))
        if where == "in FROM":
            # sqlglot's merge_subqueries folds a plain SELECT-FROM-WHERE derived table into the outer
            # query (Q7, Q8); one it cannot merge comes back as a CTE and is refused in _base_table.
            continue
        if isinstance(sub.parent, exp.Subquery) and not isinstance(sub.parent.parent, exp.Exists | exp.In):
            if not correlated:
                if where not in ("in WHERE", "in HAVING"):
                    raise UnsupportedSQL(f"uncorrelated scalar subquery {where}")
                continue  # sqlglot joins it as a one-row CTE: a block of its own (select_block.py)
            if where != "in WHERE":
                raise UnsupportedSQL(f"correlated scalar subquery {where}")
            if _correlations(sub) < 1:
                raise UnsupportedSQL(f"correlated scalar subquery correlated other than by `=` {where}")
            continue  # one equality: sqlglot makes it a grouped LEFT JOIN (derived.py, Q17; over a join, Q2)
        if correlated and any(isinstance(n, exp.AggFunc) for n in sub.find_all(exp.AggFunc)):
            raise UnsupportedSQL(f"correlated aggregate subquery {where} (Q2/Q17/Q20 shape)")
        if correlated and any(isinstance(n, exp.NEQ) for n in sub.find_all(exp.NEQ)):
            raise UnsupportedSQL(f"EXISTS correlated with `<>` {where} (Q21 shape)")
        if isinstance(sub.parent, exp.Subquery | exp.In) and sub.args.get("group"):
            if correlated or sub.args.get("joins") or len(sub.args["group"].expressions) != 1:
                raise UnsupportedSQL(f"IN (subquery with joins or several GROUP BY keys) {where}")
    if tree.args.get("distinct"):
        raise UnsupportedSQL("SELECT DISTINCT")


def _not_in_as_not_exists(tree: exp.Select) -> None:
    """`x NOT IN (SELECT k FROM t WHERE c)` -> `NOT EXISTS (SELECT * FROM t WHERE c AND k = x)`.

    The two differ only when k or x can be NULL, and no TPC-H column can. sqlglot unnests the NOT
    EXISTS into a LEFT JOIN + IS NULL, which rewrites.py turns into an anti-join bitmap (Q16).
    """
    for negation in list(tree.find_all(exp.Not)):
        test = negation.this
        if not isinstance(test, exp.In) or test.args.get("query") is None:
            continue
        query = test.args["query"]
        select = query.this if isinstance(query, exp.Subquery) else query
        if not isinstance(select, exp.Select) or len(select.expressions) != 1:
            raise UnsupportedSQL("NOT IN (subquery) that is not a SELECT of one column")
        if select.args.get("group") or select.args.get("having") or select.args.get("distinct"):
            raise UnsupportedSQL("NOT IN (subquery with GROUP BY, HAVING or DISTINCT)")
        key = select.expressions[0].unalias()
        exists = select.copy()
        exists.set("expressions", [exp.Star()])
        exists = exists.where(exp.EQ(this=key.copy(), expression=test.this.copy()), copy=False)
        negation.replace(exp.Not(this=exp.Exists(this=exists)))


@dataclass(frozen=True)
class ExistsOther:
    """`EXISTS (SELECT * FROM t x WHERE x.k = o.k AND x.v <> o.v AND ...)`, taken out of the tree."""

    qualifier: str  # the subquery's name for its table
    table: str
    key: str  # x.k
    value: str  # x.v
    filters: tuple[exp.Expr, ...]  # the conditions on x alone


def _exists_with_other(tree: exp.Select) -> dict[str, ExistsOther]:
    """EXISTS correlated by one equality and one `<>` (Q21's "another supplier of the same order").

    sqlglot would unnest it into ARRAY_AGG and LIST_FILTER lambdas; each becomes a call
    `dkb_exists_other_N(o.k, o.v)` instead (the optimizer qualifies its arguments and leaves it be),
    lowered to an `ExistsOther` expression: per key, the least and greatest v of the matching rows.
    """
    found: dict[str, ExistsOther] = {}
    for exists in list(tree.find_all(exp.Exists)):
        select = exists.this.this if isinstance(exists.this, exp.Subquery) else exists.this
        if not isinstance(select, exp.Select) or select.args.get("joins") or select.args.get("group"):
            continue
        source = select.args["from_"].this
        where = select.args.get("where")
        if not isinstance(source, exp.Table) or where is None:
            continue
        local = {source.alias_or_name, source.name}

        def inner(column: exp.Column) -> bool:
            # SQL scoping: an unqualified column belongs to the innermost table that has it.
            return column.table in local if column.table else _owner(column) == source.name  # noqa: B023

        pairs: dict[type, tuple[exp.Column, exp.Column]] = {}
        filters = []
        for condition in _conjuncts(where.this):
            columns = list(condition.find_all(exp.Column))
            if all(inner(c) for c in columns):
                filters.append(condition)
            elif (
                isinstance(condition, exp.EQ | exp.NEQ)
                and type(condition) not in pairs
                and all(isinstance(side, exp.Column) for side in (condition.this, condition.expression))
            ):
                ours, theirs = (condition.this, condition.expression)
                ours, theirs = (ours, theirs) if inner(ours) else (theirs, ours)
                if not inner(ours) or inner(theirs):
                    break
                pairs[type(condition)] = (ours, theirs)
            else:
                break  # a conjunct of another shape: left to sqlglot (and refused if it cannot)
        else:  # every conjunct was classified
            if set(pairs) != {exp.EQ, exp.NEQ}:
                continue
            name = f"dkb_exists_other_{len(found)}"
            (key, outer_key), (value, outer_value) = pairs[exp.EQ], pairs[exp.NEQ]
            found[name] = ExistsOther(source.alias_or_name, source.name, key.name, value.name, tuple(filters))
            exists.replace(exp.Anonymous(this=name, expressions=[outer_key.copy(), outer_value.copy()]))
    return found


def _correlations(sub: exp.Select) -> int:
    """How many WHERE conjuncts of a subquery mention the outer query; -1 if one is not `inner = outer`."""
    where = sub.args.get("where")
    count = 0
    for condition in _conjuncts(where.this) if where is not None else []:
        outer = [c for c in condition.find_all(exp.Column) if _owner(c) not in _local_tables(sub)]
        if not outer:
            continue
        if not isinstance(condition, exp.EQ) or len(outer) != 1:
            return -1
        count += 1
    return count


def _local_tables(select: exp.Select) -> set[str]:
    return {t.alias_or_name for t in select.find_all(exp.Table)} | {
        t.name for t in select.find_all(exp.Table)
    }


def _owner(column: exp.Column) -> str:
    """The qualifier of a column, or (unqualified, as in TPC-H's SQL) the table that has it."""
    if column.table:
        return column.table
    try:
        return table_of(column.name)
    except KeyError:
        return ""
