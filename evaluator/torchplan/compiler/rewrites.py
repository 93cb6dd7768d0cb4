"""Rewrites from the frontend's flat block to the shape the emitter compiles.

1. Semi/anti joins back from sqlglot's unnesting: `LEFT JOIN (SELECT k ... GROUP BY k) u ON u.k = t.c
   WHERE u.k IS [NOT] NULL` is `t.c [NOT] IN (SELECT k ...)`, a membership bitmap, never a join.
2. Join tree: each `a.fk = b.pk` on a single-column primary key orients an edge a -> b (b's one row per
   a row, a direct-address lookup). The root is the one relation no edge points at; the tree is
   grown from it breadth-first; equalities not used as edges stay as residual conditions (Q5's
   `c_nationkey = s_nationkey`).
3. Conditions on one relation become its filters (evaluated on that table's own rows, then carried
   to the root through the lookups); the rest are residual.
4. GROUP BY keys functionally determined by another key are dropped (grouping on `l_orderkey` already
   fixes `o_orderdate` once `l_orderkey` is the FK of the orders lookup): fewer, exact keys to pack.
"""

from __future__ import annotations

from sqlglot import exp

from evaluator.torchplan.compiler.errors import UnsupportedSQL
from evaluator.torchplan.compiler.exprs import Lowering
from evaluator.torchplan.compiler.ir import Block, Col, Expr, Lookup, Op, Relation, SemiJoin, aliases
from evaluator.torchplan.compiler.schema import COMPOSITE_KEYS, PRIMARY_KEYS, Kind
from evaluator.torchplan.compiler.select_block import Frontend, _base_table, _conjuncts


def rewrite(front: Frontend) -> Block:
    block = front.block
    block.semis = _semi_joins(front)
    _join_tree(block)
    return block


def _semi_joins(front: Frontend) -> list[SemiJoin]:
    semis = []
    block = front.block
    for alias, (body, on) in front.left_joins.items():
        tests = [t for t in front.null_tests if any(c.table == alias for c in t.find_all(exp.Column))]
        if len(tests) != 1:
            raise UnsupportedSQL(f"outer join on unnested subquery {alias} used other than by IS [NOT] NULL")
        test = tests[0]
        anti = not isinstance(test, exp.Not)
        inner_test = test.this if isinstance(test, exp.Not) else test
        if not isinstance(inner_test, exp.Is) or not isinstance(inner_test.expression, exp.Null):
            raise UnsupportedSQL(f"condition `{test.sql()}` on unnested subquery {alias}")
        group = body.args.get("group")
        if body.args.get("having") or body.args.get("joins") or not group or len(group.expressions) != 1:
            raise UnsupportedSQL("EXISTS/IN subquery with joins, HAVING or several keys (Q18/Q20/Q21 shape)")
        on_parts = _conjuncts(on) if on is not None else []
        if len(on_parts) != 1 or not isinstance(on_parts[0], exp.EQ):
            raise UnsupportedSQL("EXISTS/IN subquery correlated by more than one equality (Q21 shape)")
        eq = on_parts[0]
        inner_side, outer_side = (
            (eq.this, eq.expression) if eq.this.table == alias else (eq.expression, eq.this)
        )
        table, conditions = _base_table(body.args["from_"].this, {})
        inner_alias = f"{alias.strip('_')}_{table}"
        inner_scope = {body.args["from_"].this.alias_or_name: (inner_alias, table)}
        lowering = Lowering(front.binding, inner_scope, "in an EXISTS/IN subquery")
        where = body.args.get("where")
        filters = [lowering.lower(c) for c in (_conjuncts(where.this) if where is not None else [])]
        inner_key = lowering.lower(group.expressions[0])
        outer = Lowering(front.binding, {a: (a, r.table) for a, r in block.relations.items()}, "in WHERE")
        key = outer.lower(outer_side)
        if not isinstance(key, Col) or not isinstance(inner_key, Col):
            raise UnsupportedSQL(f"EXISTS/IN correlated on an expression `{eq.sql()}`")
        del inner_side
        semis.append(SemiJoin(key.alias, key, Relation(inner_alias, table, filters), inner_key, anti))
    return semis


def _join_tree(block: Block) -> None:
    edges: list[tuple[Lookup, Expr]] = []
    rest: list[Expr] = []
    for condition in block.residual:
        touched = aliases(condition)
        if len(touched) == 1:
            block.relations[touched.pop()].filters.append(condition)
            continue
        lookup = _as_lookup(condition, block)
        if lookup is not None:
            edges.append((lookup, condition))
        else:
            rest.append(condition)
    edges_more, rest = _composite_lookups(rest, block)
    edges.extend(edges_more)
    pointed = {lookup.child for lookup, _ in edges}
    roots = [a for a in block.relations if a not in pointed]
    if len(roots) != 1:
        what = "no relation" if not roots else f"relations {roots}"
        raise UnsupportedSQL(
            f"join graph where {what} could be the root of PK-FK lookups (a many-to-many join: "
            "no primary key, single or composite, on either side)"
        )
    block.root = roots[0]
    reached = {block.root}
    lookups: list[Lookup] = []
    frontier = [block.root]
    while frontier:
        parent = frontier.pop(0)
        for lookup, _ in edges:
            if lookup.parent == parent and lookup.child not in reached:
                reached.add(lookup.child)
                lookups.append(lookup)
                frontier.append(lookup.child)
    for lookup, condition in edges:
        if lookup not in lookups:
            rest.append(condition)
    unreached = set(block.relations) - reached
    if unreached:
        raise UnsupportedSQL(f"join that does not reach {sorted(unreached)} through PK-FK lookups")
    block.lookups = lookups
    block.residual = rest


def _as_lookup(condition: Expr, block: Block) -> Lookup | None:
    if not (isinstance(condition, Op) and condition.op == "="):
        return None
    left, right = condition.args
    if not (isinstance(left, Col) and isinstance(right, Col)):
        return None
    # A grouped subquery's key is the primary key of a relation with one row per key (derived.py); it
    # wins over a table's primary key on the other side (Q18: `u.l_orderkey = o_orderkey`).
    for fk, pk in ((left, right), (right, left)):
        derived = block.derived.get(pk.table)
        if derived is not None and not derived.more_keys and pk == derived.key and fk.alias != pk.alias:
            return Lookup(fk.alias, pk.alias, fk, pk)
    for fk, pk in ((left, right), (right, left)):
        if PRIMARY_KEYS.get(pk.table) == pk.name and fk.alias != pk.alias:
            return Lookup(fk.alias, pk.alias, fk, pk)
    return None


def _composite_lookups(conditions: list[Expr], block: Block) -> tuple[list[tuple[Lookup, Expr]], list[Expr]]:
    """Equalities that together cover a composite primary key: `l_partkey = ps_partkey AND l_suppkey =
    ps_suppkey` finds lineitem's one partsupp row (Q9). Returns the lookups and the conditions left."""
    pairs: dict[tuple[str, str], list[Op]] = {}
    columns: dict[Op, tuple[Col, Col]] = {}  # each column equality's two sides
    for condition in conditions:
        if isinstance(condition, Op) and condition.op == "=":
            left, right = condition.args
            if isinstance(left, Col) and isinstance(right, Col) and left.alias != right.alias:
                columns[condition] = (left, right)
                for fk, pk in ((left, right), (right, left)):
                    pairs.setdefault((fk.alias, pk.alias), []).append(condition)
    found: list[tuple[Lookup, Expr]] = []
    used: list[Expr] = []
    for (parent, child), equalities in pairs.items():
        sides = {eq: _facing(columns[eq], child) for eq in equalities}
        by_pk = {pk.name: (fk, pk, eq) for eq, (fk, pk) in sides.items()}
        table = next(pk for _, pk in sides.values()).table
        derived = block.derived.get(table)
        key = (
            tuple(k.name for k in [derived.key, *(d for _, d in derived.more_keys)])
            if derived is not None and derived.more_keys
            else COMPOSITE_KEYS.get(table)
        )
        if key is None or not set(key) <= set(by_pk) or any(by_pk[k][2] in used for k in key):
            continue
        (fk, pk, _), *others = (by_pk[k] for k in key)
        lookup = Lookup(parent, child, fk, pk, tuple((f, p) for f, p, _ in others))
        parts = [by_pk[k][2] for k in key]
        condition = parts[0]
        for part in parts[1:]:
            condition = Op("and", (condition, part), Kind.BOOL)
        found.append((lookup, condition))
        used.extend(parts)
    return found, [c for c in conditions if c not in used]


def _facing(columns: tuple[Col, Col], child: str) -> tuple[Col, Col]:
    """The two sides of a column equality ordered (foreign key, primary key of `child`)."""
    left, right = columns
    return (left, right) if right.alias == child else (right, left)


def independent_keys(block: Block) -> list[Expr]:
    """The GROUP BY keys left after dropping those other keys functionally determine."""
    keys = list(block.group_by)
    independent = []
    for key in keys:
        others = set()
        for other in keys:
            if other is not key and isinstance(other, Col):
                others |= _fixed_by(other, block)
        if isinstance(key, Col) and key.alias in others:
            continue
        independent.append(key)
    return independent


def _fixed_by(key: Col, block: Block) -> set[str]:
    """Relations whose row a fixed value of `key` pins down: its PK's relation, and lookups below it."""
    fixed: set[str] = set()
    if PRIMARY_KEYS.get(key.table) == key.name:
        fixed.add(key.alias)
    for lookup in block.lookups:
        if lookup.fk == key:
            fixed.add(lookup.child)
    changed = True
    while changed:
        changed = False
        for lookup in block.lookups:
            if lookup.parent in fixed and lookup.child not in fixed:
                fixed.add(lookup.child)
                changed = True
    return fixed
