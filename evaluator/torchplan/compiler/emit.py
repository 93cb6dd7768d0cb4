"""Emit a TorchPlan module from a rewritten block: COLUMNS, `_query_core(...)`, `run_query(tables, ...)`.

The core's shape: (1) each relation's filters on its own rows; (2) EXISTS / IN as membership bitmaps;
(3) PK-FK lookups, child masks carried up to the root; (4) one compaction of the root's surviving
rows, then gathers of only the columns still needed (late materialization); (5) residual conditions;
(6) aggregation: masked reductions (no join, no GROUP BY), dense mixed-radix codes (all keys
dictionary codes) or exact packed keys with `torch.unique`; (7) HAVING, ORDER BY, LIMIT.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from evaluator.torchplan.compiler.emit_group import Env, Grouping, aggregates_of, identifier, nullable
from evaluator.torchplan.compiler.emit_host import HostArgs, HostUse, signature
from evaluator.torchplan.compiler.errors import UnsupportedSQL
from evaluator.torchplan.compiler.exprcode import PRECEDENCE, ExprCode
from evaluator.torchplan.compiler.ir import (
    Agg,
    Block,
    Col,
    Derived,
    ExistsOther,
    Expr,
    MatchCount,
    Relation,
    columns,
    has_agg,
    walk,
)
from evaluator.torchplan.compiler.schema import Kind


class CoreEmitter(Grouping):
    """Lines of `_query_core`'s body for one block; the grouping half lives in emit_group.py."""

    def __init__(self, block: Block, host: HostArgs, functions: dict[str, str] | None = None) -> None:
        self.block = block
        self.host = HostUse(host)
        self.lines: list[str] = []
        self.tensors: dict[Col, str] = {}  # full-length column arguments of the core
        self.rebound: set[Col] = set()  # columns gathered to the compacted rows
        self.functions = functions if functions is not None else {}  # subqueries' functions, by name
        self.given: set[str] = set()  # grouped subqueries the caller computed and passes in
        # a LEFT JOIN count's counts per key; an EXISTS-another's (least, greatest) per key
        self.match_keys: dict[MatchCount | ExistsOther, str] = {}

    # --- naming ------------------------------------------------------------------------------

    def var(self, col: Col) -> str:
        if col.table in self.block.derived:  # a grouped subquery's column: computed in the core
            name = f"{col.alias.strip('_')}_{col.name}"
            if col.table in self.given:  # computed by the caller: an argument of this function
                self.tensors.setdefault(col, name)
            return name
        name = col.name if col.alias == col.table else f"{col.alias}_{col.name}"
        if col.span is not None:  # SUBSTRING(c_phone FROM 1 FOR 2) -> c_phone_1_2
            name += f"_{col.span[0] + 1}_{col.span[1]}"
        self.tensors.setdefault(Col(col.alias, col.table, col.name, col.kind, col.span), name)
        return name

    def mask(self, alias: str) -> str:
        return f"{alias}_mask"

    def out(self, line: str = "") -> None:
        if line.startswith("# ") and len(line) > 100:  # long comments wrap; ruff format leaves them be
            self.lines.extend(f"    # {part}" for part in textwrap.wrap(line[2:], 98))
            return
        self.lines.append(f"    {line}" if line else "")

    def expr(self, expr: Expr, column: Env | None = None, agg: Callable[[Agg], str] | None = None) -> str:
        return self._expr_prec(expr, column, agg)[0]

    def _expr_prec(
        self, expr: Expr, column: Env | None = None, agg: Callable[[Agg], str] | None = None
    ) -> tuple[str, int]:
        """The code and its operator precedence (to parenthesize it as an operand)."""
        coder = ExprCode(column or self.var, self.host.name_for, agg, self.match_keys.__getitem__)
        code = coder.code_prec(expr)
        return code

    # --- phases ------------------------------------------------------------------------------

    def emit(self) -> list[str]:
        block = self.block
        for derived in block.derived.values():
            if derived.alias not in self.given:
                self._derived(derived)
        self._scalars()
        masked = self._filters()
        outputs = [e for _, e in block.outputs]
        aggregates = any(has_agg(e) for e in outputs)
        if block.having is not None and not block.group_by:
            raise UnsupportedSQL("HAVING without GROUP BY")
        if not block.group_by and aggregates and not all(_agg_only(e) for e in outputs):
            raise UnsupportedSQL("a column outside an aggregate without GROUP BY")
        if not block.group_by and aggregates and not block.lookups and not block.residual:
            return self._masked_aggregates(masked)
        self._compact(masked)
        if block.group_by:
            post = self._group()
        elif aggregates:
            post = self._global_aggregates()
        else:
            post = self._project()
        return self._finish(post)

    def _filters(self) -> set[str]:
        """Masks of each relation on its own rows; returns the aliases that have one."""
        block = self.block
        masked: set[str] = set()
        self._match_counts()
        ordered = [block.relations[block.root]] + [block.relations[lk.child] for lk in block.lookups]
        if any(r.filters for r in ordered) or block.semis:
            self.out("# Filters, each on its own table's rows.")
        for relation in ordered:
            if relation.filters:
                self.out(f"{self.mask(relation.alias)} = {self._conjunction(relation.filters)}")
                masked.add(relation.alias)
        for semi in block.semis:
            kind = "NOT EXISTS / NOT IN" if semi.anti else "EXISTS / IN"
            self.out(f"# {kind}: membership of {semi.key.name} among the subquery's {semi.inner_key.name}.")
            inner = self._inner_keys(semi.inner, semi.inner_key)
            test = f"ops.member({self.var(semi.key)}, of={inner})"
            self._and_into(semi.parent, f"~{test}" if semi.anti else test, masked)
        if block.lookups:
            self.out("# PK-FK joins: the row of the referenced table for each referencing row (-1: none).")
        for lookup in block.lookups:
            at = f"{lookup.parent}_{lookup.child}"
            if lookup.more:  # a composite key: sorted packed keys and a binary search
                pks = ", ".join(self.var(c) for c in [lookup.pk, *(pk for _, pk in lookup.more)])
                fks = ", ".join(self.var(c) for c in [lookup.fk, *(fk for fk, _ in lookup.more)])
                self.out(f"{at} = ops.lookup_composite([{pks}], [{fks}])")
            else:
                self.out(f"{at} = ops.lookup(ops.key_index({self.var(lookup.pk)}), {self.var(lookup.fk)})")
        for lookup in reversed(block.lookups):  # children first, so a grandchild's filter reaches the root
            at = f"{lookup.parent}_{lookup.child}"
            found = f"({at} >= 0)"
            if lookup.child in masked:
                found += f" & {self.mask(lookup.child)}[{at}]"
            self._and_into(lookup.parent, found, masked)
        return masked

    def _scalars(self) -> None:
        """Uncorrelated scalar subqueries: each a function of its own, called once, a 1-element tensor."""
        for var, sub in self.block.scalars.items():
            # A grouped subquery this block has too (Q15's view, read by the MAX as well) is passed in,
            # not recomputed: float sums by atomics differ in their last bits from run to run.
            given = {a for a, d in sub.derived.items() if self.block.derived.get(a) == d}
            doc = "An uncorrelated scalar subquery: its one value, a 1-element tensor."
            self._call_block(f"_{var}", sub, doc, [var], given)

    def _derived_block(self, derived: Derived, block: Block) -> None:
        """A grouped subquery over a join or on several keys: a function of its own, one row per key."""
        outputs = [self.var(Col(derived.alias, derived.alias, n, e.kind)) for n, e in block.outputs]
        keys = ", ".join(k.name for k in [derived.source_key, *(s for s, _ in derived.more_keys)])
        self.out(f"# Subquery {derived.alias}: grouped by {keys}, one row per key.")
        self._call_block(f"_{derived.alias}", block, f"A grouped subquery: one row per {keys}.", outputs)

    def _call_block(
        self, name: str, block: Block, doc: str, outputs: list[str], given: set[str] | None = None
    ) -> None:
        """Emit `block` as a function of the module and call it here, its results bound to `outputs`."""
        emitter = CoreEmitter(block, self.host.host, self.functions)
        emitter.given = given or set()
        body = emitter.emit()
        taken, count = name, 1
        while name in self.functions:  # a nested subquery named like its parent's
            count += 1
            name = f"{taken}_{count}"
        params = signature(list(emitter.tensors.values()), emitter.host.used)
        self.functions[name] = (
            f'def {name}(\n{params}\n) -> tuple[torch.Tensor, ...]:\n    """{doc}"""\n' + "\n".join(body)
        )
        for col in emitter.tensors:
            if col.table not in emitter.given:
                self.var(col)
        for arg in emitter.host.used:
            self.host.use(arg.name)
        args = list(emitter.tensors.values()) + [f"{a.name}={a.name}" for a in emitter.host.used]
        self.out(f"({', '.join(outputs)},) = {name}({', '.join(args)})")

    def _match_counts(self) -> None:
        """The inner keys of each LEFT JOIN count, filtered once, before any row of the outer is dropped."""
        block = self.block
        exprs = [e for _, e in block.outputs] + block.group_by + block.residual
        exprs += [f for r in block.relations.values() for f in r.filters] + [e for e, _ in block.order_by]
        exprs += [block.having] if block.having is not None else []
        for node in (n for e in exprs for n in walk(e)):
            if isinstance(node, ExistsOther) and node not in self.match_keys:
                inner = Relation(node.inner_alias, node.inner_table, list(node.inner_filters))
                self.out(f"# EXISTS another {node.inner_value.name} of the same {node.inner_key.name}: the")
                self.out(f"# least and greatest {node.inner_value.name} per {node.inner_key.name}.")
                keys = self._inner_keys(inner, node.inner_key)
                values = self.var(node.inner_value)
                values = f"{values}[{self.mask(inner.alias)}]" if inner.filters else values
                name = f"{node.inner_alias}_range"
                self.out(f"{name} = ops.key_range({keys}, {values})")
                self.match_keys[node] = name
            if isinstance(node, MatchCount) and node not in self.match_keys:
                inner = Relation(node.inner_alias, node.inner_table, list(node.inner_filters))
                self.out(
                    f"# LEFT JOIN {node.inner_table} ... COUNT: its {node.inner_key.name}s, counted per key."
                )
                name = f"{node.inner_alias}_counts"
                self.out(f"{name} = ops.key_counts({self._inner_keys(inner, node.inner_key)})")
                self.match_keys[node] = name

    def _derived(self, derived: Derived) -> None:
        """A grouped subquery: one row per key, its aggregates by sorting the keys once."""
        if derived.block is not None:
            self._derived_block(derived, derived.block)
            return
        assert derived.source is not None  # None only for a subquery with a block of its own
        source, key = derived.source, self.var(derived.key)
        grouped = f"{source.table} grouped by {derived.source_key.name}"
        self.out(f"# Subquery {derived.alias}: {grouped}, one row per key (a grouped subquery or view).")
        column = self.var
        if source.filters:
            mask = self.mask(source.alias)
            self.out(f"{mask} = {self._conjunction(source.filters)}")
            column = lambda col: f"{self.var(col)}[{mask}]"  # noqa: E731
        ids, groups = f"{key}_ids", f"{derived.alias.strip('_')}_groups"
        self.out(f"{key}, {ids} = ops.group({column(derived.source_key)})")
        self.out(f"{groups} = {key}.numel()")
        count = f"ops.group_count({ids}, {groups})"
        for name, agg in derived.aggs:
            target = self.var(Col(derived.alias, derived.alias, name, agg.kind))
            arg = self.expr(agg.arg, column=column) if agg.arg is not None else ""
            if agg.func == "count":
                code = count
            elif agg.func == "avg":
                arg = f"({arg}).double()" if agg.arg is not None and agg.arg.kind is Kind.INT else arg
                code = f"ops.group_sum({arg}, {ids}, {groups}) / {count}"
            else:
                code = f"ops.group_{agg.func}({arg}, {ids}, {groups})"
            self.out(f"{target} = {code}  # {agg.func.upper()} per key")

    def _inner_keys(self, relation: Relation, key: Col) -> str:
        if not relation.filters:
            return self.var(key)
        self.out(f"{self.mask(relation.alias)} = {self._conjunction(relation.filters)}")
        return f"{self.var(key)}[{self.mask(relation.alias)}]"

    def _and_into(self, alias: str, condition: str, masked: set[str]) -> None:
        if alias in masked:
            self.out(f"{self.mask(alias)} &= {condition}")
        else:
            self.out(f"{self.mask(alias)} = {condition}")
            masked.add(alias)

    def _conjunction(self, conditions: list[Expr], *, wrap: bool = True) -> str:
        """`(a) & (b)` over several lines; `wrap=False` inside a call's own parentheses."""
        coded = [self._expr_prec(c) for c in conditions]
        if len(coded) == 1:
            return coded[0][0]
        # `&` binds tighter than comparisons and `|`: an operand below it needs parentheses, even one
        # that happens to start with "(" such as `(a == b) | (c == d)`.
        parts = [f"({p})" if prec < PRECEDENCE["and"] else p for p, prec in coded]
        joined = "\n        & ".join(parts)
        return f"(\n        {joined}\n    )" if wrap else joined

    def _masked_aggregates(self, masked: set[str]) -> list[str]:
        """No join, no GROUP BY: reduce under the mask, no compaction (no host synchronisation)."""
        mask = self.mask(self.block.root) if self.block.root in masked else None
        names: dict[Agg, str] = {}
        self.out("# Aggregates over the qualifying rows, without gathering them.")
        for agg in aggregates_of(self.block):
            name = self._agg_name(agg, names)
            arg = self.expr(agg.arg) if agg.arg is not None else None
            zero = (
                "0.0"
                if agg.kind in (Kind.DECIMAL, Kind.FLOAT) or (agg.arg and agg.arg.kind is not Kind.INT)
                else "0"
            )
            if agg.func == "count":
                code = f"{mask}.sum()" if mask else f"torch.tensor({self.var(self._any_root_col())}.shape[0])"
            elif agg.func == "count_distinct":
                rows = f"({arg})[{mask}]" if mask else f"({arg})"
                device = f"{mask or self.var(self._any_root_col())}.device"
                code = f"torch.tensor(torch.unique({rows}).numel(), device={device})"
            elif agg.func in ("sum", "avg"):
                total = f"torch.where({mask}, {arg}, {zero}).sum()" if mask else f"({arg}).sum()"
                code = f"{total} / {mask}.sum()" if agg.func == "avg" and mask else total
                if agg.func == "avg" and not mask:
                    code = f"({arg}).double().mean()"
                elif agg.func == "sum" and mask and nullable(agg):
                    # SUM over no rows is SQL's NULL, NaN here (docs/data-format.md); AVG is 0 / 0 already.
                    code = f"torch.where({mask}.any(), {total}, torch.nan)"
            elif mask and nullable(agg):
                # MIN/MAX over no rows is NULL; indexing by the mask would leave amin/amax nothing (an error).
                extreme = "torch.inf" if agg.func == "min" else "-torch.inf"
                reduced = f"torch.where({mask}, {arg}, {extreme}).{'amin' if agg.func == 'min' else 'amax'}()"
                code = f"torch.where({mask}.any(), {reduced}, torch.nan)"
            else:
                code = (
                    f"({arg})[{mask}].{'amin' if agg.func == 'min' else 'amax'}()"
                    if mask
                    else f"({arg}).{'amin' if agg.func == 'min' else 'amax'}()"
                )
            self.out(f"{name} = {code}.reshape(1)" if _is_call(code) else f"{name} = ({code}).reshape(1)")
        return self._finish_outputs(lambda c: self._no_column(c), names)

    def _agg_name(self, agg: Agg, names: dict[Agg, str]) -> str:
        if agg in names:
            return names[agg]
        wanted = next((n for n, e in self.block.outputs if e == agg), f"agg{len(names)}")
        names[agg] = identifier(wanted)
        return names[agg]


def _agg_only(expr: Expr) -> bool:
    """Every column of the expression is inside an aggregate."""
    inside = {c for node in walk(expr) if isinstance(node, Agg) for c in columns(node)}
    return columns(expr) <= inside


def _is_call(code: str) -> bool:
    """`f(a, b).g()` is one operand; `f(a) / g(b)` is not (a space outside every parenthesis)."""
    depth = 0
    for ch in code:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == " " and depth == 0:
            return False
    return code.endswith(")")
