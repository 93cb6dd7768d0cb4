"""One optimized SELECT lowered to a `Block` (frontend.py parses, binds and optimizes the SQL first).

Each source of FROM and the JOINs by its kind (a table, a grouped view, a count view, a scalar
subquery, a LEFT JOIN on an unnested EXISTS / IN), then WHERE's conjuncts wherever sqlglot put them,
SELECT, GROUP BY, HAVING, ORDER BY and LIMIT.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from evaluator.torchplan.compiler.derived import is_grouped, lower_grouped, null_rejecting
from evaluator.torchplan.compiler.errors import UnsupportedSQL
from evaluator.torchplan.compiler.exprs import Lowering
from evaluator.torchplan.compiler.ir import (
    Block,
    Col,
    Derived,
    Expr,
    MatchCount,
    Op,
    Relation,
    Scalar,
    aliases,
)
from evaluator.torchplan.compiler.params import Binding
from evaluator.torchplan.compiler.schema import PRIMARY_KEYS, sql_types


@dataclass
class Frontend:
    """The optimized tree, the bound parameters and the block lowered from them."""

    sql: str
    binding: Binding
    optimized: exp.Select
    block: Block
    # LEFT JOINs on unnested subqueries, for the semi/anti-join rewrite: alias -> (CTE select, ON)
    left_joins: dict[str, tuple[exp.Select, exp.Expr | None]]
    # WHERE conjuncts that mention a LEFT-JOINed alias (the IS [NOT] NULL tests)
    null_tests: list[exp.Expr]


def lower_select(
    sql: str,
    binding: Binding,
    tree: exp.Select,
    names: list[str],
    ctes: dict[str, exp.Select] | None = None,
) -> Frontend:
    """`ctes`: the top-level query's CTEs, when `tree` is the body of one of them (a scalar subquery)."""
    if ctes is None:
        ctes = {cte.alias: cte.this for cte in (tree.args.get("with_") or exp.With()).expressions}
    sources = _Sources(sql, binding, ctes)
    sources.add(tree.args["from_"].this, None)
    for join in tree.args.get("joins") or []:
        sources.add(join.this, join)
    conjuncts, null_tests = _where_conjuncts(tree, sources)
    conditions = _lower_conditions(sources, conjuncts)
    outputs = _lower_outputs(sources, tree, names)
    group = tree.args.get("group")
    group_by = [sources.lowering("in GROUP BY").lower(g) for g in (group.expressions if group else [])]
    having_node = tree.args.get("having")
    having = sources.lowering("in HAVING").lower(having_node.this) if having_node else None
    order_by = _lower_order_by(sources, tree, outputs)
    limit = _limit(tree)
    derived_by_alias = {d.alias: d for d in sources.grouped.values()}
    block = Block(
        sources.relations,
        "",
        [],
        [],
        conditions,
        group_by,
        outputs,
        having,
        order_by,
        limit,
        derived_by_alias,
    )
    block.scalars = sources.scalars
    return Frontend(sql, binding, tree, block, sources.left_joins, null_tests)


@dataclass
class _Sources:
    """The FROM clause and its JOINs, lowered source by source: each kind of source adds to these."""

    sql: str
    binding: Binding
    ctes: dict[str, exp.Select]
    scope: dict[str, tuple[str, str]] = field(default_factory=dict)
    relations: dict[str, Relation] = field(default_factory=dict)
    pending: list[tuple[str, exp.Expr]] = field(default_factory=list)  # (alias, condition) from CTE bodies
    left_joins: dict[str, tuple[exp.Select, exp.Expr | None]] = field(default_factory=dict)
    on_conditions: list[exp.Expr] = field(default_factory=list)
    grouped: dict[str, Derived] = field(default_factory=dict)
    scalars: dict[str, Block] = field(default_factory=dict)
    inner_grouped: set[str] = field(default_factory=set)  # grouped views joined inner: no NULL row to reject
    derived_columns: dict[str, dict[str, Expr]] = field(default_factory=dict)

    def lowering(self, where: str) -> Lowering:
        return Lowering(self.binding, self.scope, where, self.derived_columns)

    def add(self, source: exp.Expr, join: exp.Join | None) -> None:
        """One source: FROM's (`join` None) or a JOIN's."""
        if not isinstance(source, exp.Table):
            raise UnsupportedSQL("derived table (subquery in FROM)")
        body = self.ctes.get(source.name)
        joined_inner = join is None or not (join.side or join.kind)
        if body is not None and is_grouped(body) and joined_inner:
            self._grouped_view(source.alias_or_name, body, join)
        elif body is not None and _is_count_view(body) and joined_inner:
            self._count_view(source.alias_or_name, body, join)
        elif body is not None and _is_scalar(body) and join is not None:
            self._scalar(source.alias_or_name, body, join)
        elif join is not None and join.side == "LEFT":
            self._left_join(source.alias_or_name, body, join)
        else:
            self._table(source, join)

    def _on(self, join: exp.Join | None) -> None:
        if join is not None and join.args.get("on") is not None:
            self.on_conditions.extend(_conjuncts(join.args["on"]))

    def _grouped_view(self, alias: str, body: exp.Select, join: exp.Join | None) -> None:
        """A grouped view joined inner (Q15's revenue): a relation with one row per key."""
        name = f"sub{len(self.grouped)}"
        derived, self.relations[name], self.derived_columns[alias] = lower_grouped(name, body, self.binding)
        self.grouped[alias] = derived
        self.inner_grouped.add(alias)
        self._on(join)

    def _count_view(self, alias: str, body: exp.Select, join: exp.Join | None) -> None:
        """A LEFT JOIN's counts per key (Q13's c_orders): the outer table, its rows counting matches."""
        self.relations[alias], view_conditions, self.derived_columns[alias] = _count_view(
            alias, body, self.ctes, self.binding
        )
        self.scope[alias] = (alias, self.relations[alias].table)
        self.pending.extend((alias, c) for c in view_conditions)
        self._on(join)

    def _scalar(self, alias: str, body: exp.Select, join: exp.Join) -> None:
        """An uncorrelated scalar subquery, one value: `JOIN _u_0 ON _u_0._col_0 < c_acctbal` (Q22)."""
        var = f"scalar{len(self.scalars)}"
        self.scalars[var], self.derived_columns[alias] = _scalar_subquery(
            self.sql, self.binding, body, self.ctes, var
        )
        self._on(join)

    def _left_join(self, alias: str, body: exp.Select | None, join: exp.Join) -> None:
        """An unnested subquery: grouped (a lookup that must reject NULL), else EXISTS / IN for the
        semi/anti-join rewrite (rewrites.py)."""
        if body is None:
            raise UnsupportedSQL("LEFT OUTER JOIN (only unnested EXISTS/IN subqueries)")
        if is_grouped(body) or _is_grouped_join(body):
            name = f"sub{len(self.grouped)}"  # sqlglot's `_u_0` reads worse in the emitted code
            derived, self.relations[name], self.derived_columns[alias] = (
                lower_grouped(name, body, self.binding)
                if is_grouped(body)
                else _grouped_join(self.sql, self.binding, body, self.ctes, name)
            )
            self.grouped[alias] = derived
            self.on_conditions.extend(_conjuncts(join.args["on"]))
            return
        self.left_joins[alias] = (body, join.args.get("on"))

    def _table(self, source: exp.Table, join: exp.Join | None) -> None:
        """A base table, or a CTE that is one filtered table."""
        if join is not None and (join.side or join.kind) and join.kind not in ("INNER", "CROSS"):
            raise UnsupportedSQL(f"{(join.side or join.kind)} JOIN")
        # A CROSS JOIN (sqlglot's join order puts one in Q2) is joined by WHERE's conditions, or refused
        # by the join tree as unreachable.
        self._on(join)
        alias = source.alias_or_name
        table, base_conditions = _base_table(source, self.ctes)
        self.scope[alias] = (alias, table)
        self.relations[alias] = Relation(alias, table)
        self.pending.extend((alias, c) for c in base_conditions)


def _where_conjuncts(tree: exp.Select, sources: _Sources) -> tuple[list[exp.Expr], list[exp.Expr]]:
    """The conjuncts of WHERE and the ONs, ORs factored; and apart, the tests on LEFT-JOINed aliases.

    A grouped subquery joined outer is looked up as if inner: only when WHERE rejects its missing keys.
    """
    where = tree.args.get("where")
    conjuncts = factor_or(sources.on_conditions + (_conjuncts(where.this) if where is not None else []))
    null_tests = [
        c for c in conjuncts if any(col.table in sources.left_joins for col in c.find_all(exp.Column))
    ]
    conjuncts = [c for c in conjuncts if c not in null_tests]
    for alias in set(sources.grouped) - sources.inner_grouped:
        uses = [
            c
            for c in conjuncts
            if c not in sources.on_conditions and any(col.table == alias for col in c.find_all(exp.Column))
        ]
        if not any(null_rejecting(c, alias) for c in uses):
            raise UnsupportedSQL(
                f"grouped subquery {alias} whose missing keys must give NULL (an outer join)"
            )
        # `NOT u.k IS NULL` is what the inner lookup does anyway.
        conjuncts = [c for c in conjuncts if not (isinstance(c, exp.Not) and c in uses)]
    return conjuncts, null_tests


def _lower_conditions(sources: _Sources, conjuncts: list[exp.Expr]) -> list[Expr]:
    """The CTE bodies' conditions, each in its relation's scope, then the WHERE conjuncts."""
    lowering = sources.lowering("in WHERE")
    conditions: list[Expr] = []
    for alias, condition in sources.pending:
        table = sources.relations[alias].table
        inner_scope = {k: v for k, v in sources.scope.items()} | {table: (alias, table)}
        inner = Lowering(sources.binding, inner_scope, "in WHERE", sources.derived_columns)
        conditions.append(inner.lower(condition))
    conditions.extend(lowering.lower(c) for c in conjuncts)
    return conditions


def _lower_outputs(sources: _Sources, tree: exp.Select, names: list[str]) -> list[tuple[str, Expr]]:
    """The SELECT list, named as DuckDB names its result columns (`names`)."""
    select_lowering = sources.lowering("in SELECT")
    if len(names) != len(tree.expressions):  # SELECT * expanded by the optimizer
        names = [p.alias_or_name for p in tree.expressions]
    return [
        (name, select_lowering.lower(projection.unalias()))
        for projection, name in zip(tree.expressions, names, strict=True)
    ]


def _lower_order_by(
    sources: _Sources, tree: exp.Select, outputs: list[tuple[str, Expr]]
) -> list[tuple[Expr, bool]]:
    """ORDER BY's keys (a result column's name stands for its expression) and whether descending."""
    order_by = []
    order = tree.args.get("order")
    by_name = dict(outputs)
    for ordered in order.expressions if order else []:
        key = ordered.this
        if isinstance(key, exp.Column) and not key.table and key.name in by_name:
            expr = by_name[key.name]
        else:
            expr = sources.lowering("in ORDER BY").lower(key)
        order_by.append((expr, bool(ordered.args.get("desc"))))
    return order_by


def _is_count_view(body: exp.Select) -> bool:
    """`SELECT a.pk, COUNT(b.x) FROM a LEFT JOIN b ON ... GROUP BY a.pk`, Q13's c_orders."""
    joins = body.args.get("joins") or []
    group = body.args.get("group")
    return len(joins) == 1 and joins[0].side == "LEFT" and group is not None and len(group.expressions) == 1


def _count_view(
    alias: str, body: exp.Select, ctes: dict[str, exp.Select], binding: Binding
) -> tuple[Relation, list[exp.Expr], dict[str, Expr]]:
    """A LEFT JOIN view grouped by the left table's primary key: one row per left row, and each
    COUNT(b.x) is the number of matching right rows (`MatchCount`, 0 for none). Returns the left
    table as the view's relation, the left table's own conditions, and the view's columns."""
    left, join = body.args["from_"].this, body.args["joins"][0]
    right = join.this
    if not isinstance(left, exp.Table) or not isinstance(right, exp.Table):
        raise UnsupportedSQL("LEFT JOIN of derived tables in a view")
    if body.args.get("where") is not None or body.args.get("having") is not None:
        # A WHERE on the right table would drop the unmatched rows: not a count with zeros any more.
        raise UnsupportedSQL("LEFT JOIN view with WHERE or HAVING")
    left_table, left_conditions = _base_table(left, ctes)
    right_table, right_conditions = _base_table(right, ctes)
    inner_alias = f"{alias}_{right_table}"
    scope = {left.alias_or_name: (alias, left_table), right.alias_or_name: (inner_alias, right_table)}
    lowering = Lowering(binding, scope, "in a LEFT JOIN view")
    key = lowering.lower(body.args["group"].expressions[0])
    if not (isinstance(key, Col) and key.alias == alias and PRIMARY_KEYS.get(left_table) == key.name):
        raise UnsupportedSQL("LEFT JOIN view not grouped by its left table's primary key")
    inner = Lowering(binding, {right_table: (inner_alias, right_table)}, "in a LEFT JOIN view")
    inner_filters = [inner.lower(c) for c in right_conditions]
    inner_key = None
    for condition in _conjuncts(join.args["on"]):
        lowered = lowering.lower(condition)
        if aliases(lowered) == {inner_alias}:
            inner_filters.append(lowered)  # ON conditions on the right table only filter what matches
        elif isinstance(lowered, Op) and lowered.op == "=" and key in lowered.args and inner_key is None:
            other = lowered.args[1] if lowered.args[0] == key else lowered.args[0]
            if not (isinstance(other, Col) and other.alias == inner_alias):
                raise UnsupportedSQL(f"LEFT JOIN view on `{condition.sql()}`")
            inner_key = other
        else:
            raise UnsupportedSQL(f"LEFT JOIN view condition `{condition.sql()}`")
    if inner_key is None:
        raise UnsupportedSQL("LEFT JOIN view without an equality on the left table's primary key")
    count = MatchCount(key, inner_alias, right_table, tuple(inner_filters), inner_key)
    columns: dict[str, Expr] = {}
    for projection in body.expressions:
        node = projection.unalias()
        if isinstance(node, exp.Count) and isinstance(node.this, exp.Column):
            if lowering.lower(node.this).alias != inner_alias:  # type: ignore[union-attr]
                raise UnsupportedSQL("LEFT JOIN view counting a column of its left table")
            columns[projection.alias_or_name] = count  # a NOT NULL column: counts the matches
        elif lowering.lower(node) == key:
            columns[projection.alias_or_name] = key
        else:
            raise UnsupportedSQL(f"LEFT JOIN view column `{node.sql()}` (only its key and COUNT(column))")
    return Relation(alias, left_table), left_conditions, columns


def _is_grouped_join(body: exp.Select) -> bool:
    """A grouped subquery over a join (Q2's correlated MIN) or on several keys (Q20's SUM per
    (l_partkey, l_suppkey)), unnested by sqlglot: compiled as a block of its own."""
    group = body.args.get("group")
    return group is not None and (bool(body.args.get("joins")) or len(group.expressions) > 1)


def _grouped_join(
    sql: str, binding: Binding, body: exp.Select, ctes: dict[str, exp.Select], alias: str
) -> tuple[Derived, Relation, dict[str, Expr]]:
    """The subquery as a block of its own (one row per key): a relation whose primary key is its key."""
    from evaluator.torchplan.compiler.rewrites import rewrite  # rewrites imports this module

    block = rewrite(lower_select(sql, binding, body, [p.alias_or_name for p in body.expressions], ctes))
    keys = block.group_by
    if not all(isinstance(k, Col) for k in keys):
        raise UnsupportedSQL("subquery grouped by an expression")
    columns: dict[str, Expr] = {}
    outputs: list[tuple[str, Expr]] = []
    for name, expr in block.outputs:
        # sqlglot's `_u_1` and `_col_0` become the keys' names and agg0, agg1, ...
        column = expr.name if expr in keys else f"agg{sum(e not in keys for _, e in outputs)}"  # type: ignore[union-attr]
        outputs.append((column, expr))
        columns[name] = Col(alias, alias, column, expr.kind)
    block.outputs = outputs
    derived_keys = [Col(alias, alias, k.name, k.kind) for k in keys]  # type: ignore[union-attr]
    if not set(derived_keys) <= set(columns.values()):
        raise UnsupportedSQL("grouped subquery that does not return its keys")
    more = tuple(zip(keys[1:], derived_keys[1:], strict=True))
    derived = Derived(alias, None, keys[0], derived_keys[0], [], block, more)  # type: ignore[arg-type]
    return derived, Relation(alias, alias), columns


def _is_scalar(body: exp.Select) -> bool:
    """An unnested uncorrelated scalar subquery: one aggregate value, no GROUP BY (one row)."""
    return (
        not body.args.get("group")
        and len(body.expressions) == 1
        and body.expressions[0].find(exp.AggFunc) is not None
    )


def _scalar_subquery(
    sql: str, binding: Binding, body: exp.Select, ctes: dict[str, exp.Select], var: str
) -> tuple[Block, dict[str, Expr]]:
    """The subquery as a block of its own, and its one column as a `Scalar` for the outer query."""
    from evaluator.torchplan.compiler.rewrites import rewrite  # rewrites imports this module

    name = body.expressions[0].alias_or_name
    block = rewrite(lower_select(sql, binding, body, [name], ctes))
    if block.group_by or block.having is not None:
        raise UnsupportedSQL("scalar subquery with GROUP BY or HAVING")
    return block, {name: Scalar(var, block.outputs[0][1].kind)}


def _base_table(source: exp.Table, ctes: dict[str, exp.Select]) -> tuple[str, list[exp.Expr]]:
    """The TPC-H table behind a FROM item and the filters sqlglot pushed into its CTE."""
    body = ctes.get(source.name)
    if body is None:
        if source.name not in sql_types():
            raise UnsupportedSQL(f"table {source.name!r} (not a TPC-H table)")
        return source.name, []
    if body.args.get("from_") is None:
        raise UnsupportedSQL(f"view or derived table {source.name} without FROM")
    inner = body.args["from_"].this
    if body.args.get("joins") or body.args.get("group") or not isinstance(inner, exp.Table):
        parts = (("joins", body.args.get("joins")), ("GROUP BY", body.args.get("group")))
        what = " and ".join(name for name, present in parts if present) or "a derived table"
        raise UnsupportedSQL(
            f"derived table (subquery in FROM) with {what} that sqlglot cannot merge into the outer query"
        )
    table, _ = _base_table(inner, ctes)
    where = body.args.get("where")
    return table, _conjuncts(where.this) if where is not None else []


def _conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    if isinstance(condition, exp.And):
        return _conjuncts(condition.this) + _conjuncts(condition.expression)
    if isinstance(condition, exp.Paren):
        return _conjuncts(condition.this)
    if isinstance(condition, exp.Boolean) and condition.this:
        return []
    return [condition]


def factor_or(conjuncts: list[exp.Expr]) -> list[exp.Expr]:
    """Conjuncts with duplicates dropped and each OR's common conjuncts hoisted out of it.

    Q19 repeats its join key `p_partkey = l_partkey` inside each OR branch (and sqlglot copies the OR
    into both JOIN ON and WHERE): hoisted, it is a PK-FK edge. Per relation, the OR of each branch's
    conditions on that relation alone is implied too: it becomes that table's filter, so most rows
    drop out before the join, while the whole OR still runs on the joined rows.
    """
    result: list[exp.Expr] = []
    seen: set[str] = set()

    def add(condition: exp.Expr) -> None:
        if condition.sql() not in seen:
            seen.add(condition.sql())
            result.append(condition)

    for conjunct in conjuncts:
        if not isinstance(conjunct, exp.Or):
            add(conjunct)
            continue
        branches = [_conjuncts(b) for b in _disjuncts(conjunct)]
        common = set.intersection(*({c.sql() for c in b} for b in branches))
        for c in branches[0]:
            if c.sql() in common:
                add(c)
        rest = [[c for c in b if c.sql() not in common] for b in branches]
        if any(not r for r in rest):
            continue  # one branch is the common part alone: the OR adds nothing to it
        for implied in _implied_filters(rest):
            add(implied)
        add(exp.or_(*(exp.and_(*r) for r in rest)))
    return result


def _implied_filters(branches: list[list[exp.Expr]]) -> list[exp.Expr]:
    """For each relation every branch constrains alone: OR over branches of those constraints."""

    def alone(condition: exp.Expr) -> str | None:
        tables = {c.table for c in condition.find_all(exp.Column)}
        return tables.pop() if len(tables) == 1 else None

    per_branch = [{only for c in b if (only := alone(c)) is not None} for b in branches]
    implied: list[exp.Expr] = []
    for table in sorted(set.intersection(*per_branch)):
        parts = [exp.and_(*(c for c in b if alone(c) == table)) for b in branches]
        implied.append(exp.or_(*parts))
    return implied


def _disjuncts(condition: exp.Expr) -> list[exp.Expr]:
    if isinstance(condition, exp.Or):
        return _disjuncts(condition.this) + _disjuncts(condition.expression)
    if isinstance(condition, exp.Paren):
        return _disjuncts(condition.this)
    return [condition]


def _limit(tree: exp.Select) -> int | None:
    limit = tree.args.get("limit")
    if limit is None:
        return None
    value = limit.expression
    if not isinstance(value, exp.Literal) or value.is_string:
        raise UnsupportedSQL("LIMIT that is not an integer literal")
    return int(value.this)
