"""The second half of the core: compaction, GROUP BY, global aggregates, HAVING, ORDER BY, LIMIT."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from evaluator.torchplan.compiler.errors import UnsupportedSQL
from evaluator.torchplan.compiler.ir import Agg, Block, Col, Expr, columns, walk
from evaluator.torchplan.compiler.rewrites import independent_keys
from evaluator.torchplan.compiler.schema import Kind

if TYPE_CHECKING:
    from evaluator.torchplan.compiler.emit_host import HostUse

Env = Callable[[Col], str]


class Grouping:
    """Mixed into CoreEmitter (emit.py), whose state and helpers below it uses."""

    block: Block
    host: HostUse
    lines: list[str]
    tensors: dict[Col, str]
    rebound: set[Col]

    if TYPE_CHECKING:

        def var(self, col: Col) -> str: ...
        def mask(self, alias: str) -> str: ...
        def out(self, line: str = "") -> None: ...
        def expr(
            self, expr: Expr, column: Env | None = None, agg: Callable[[Agg], str] | None = None
        ) -> str: ...
        def _conjunction(self, conditions: list[Expr], *, wrap: bool = True) -> str: ...
        def _agg_name(self, agg: Agg, names: dict[Agg, str]) -> str: ...

    def _any_root_col(self) -> Col:
        root = self.block.root
        return next(c for c in self.tensors if c.alias == root)

    def _compact(self, masked: set[str]) -> None:
        block = self.block
        root = block.root
        self.out("# Late materialization: the surviving rows, then only the columns still needed.")
        if root in masked:
            self.out(f"{root}_rows = torch.nonzero({self.mask(root)}).squeeze(1)")
        else:
            cols = sorted(self._row_columns(), key=lambda c: (c.alias, c.name))
            first = self.var(cols[0] if cols else self._any_root_col())
            self.out(f"{root}_rows = torch.arange({first}.shape[0], device={first}.device)")
        row_cols = self._row_columns()
        post_cols = self._post_columns()
        needed = {c.alias for c in row_cols | post_cols} | {root}
        parents = {lk.child: lk.parent for lk in block.lookups}
        for alias in list(needed):
            while alias in parents:
                alias = parents[alias]
                needed.add(alias)
        for lookup in block.lookups:
            if lookup.child in needed:
                self.out(f"{lookup.child}_rows = {lookup.parent}_{lookup.child}[{lookup.parent}_rows]")
        for col in sorted(row_cols, key=lambda c: (c.alias != root, c.alias, c.name)):
            if col.kind is Kind.TEXT:
                continue  # free text is returned as row positions, never gathered
            name = self.var(col)
            self.out(f"{name} = {name}[{col.alias}_rows]")
            self.rebound.add(col)
        if block.residual:
            self.out("# Conditions across tables, on the joined rows.")
            self.out(f"keep = torch.nonzero({self._conjunction(block.residual, wrap=False)}).squeeze(1)")
            for col in sorted(self.rebound, key=lambda c: (c.alias, c.name)):
                self.out(f"{self.var(col)} = {self.var(col)}[keep]")
            for alias in sorted(needed):
                self.out(f"{alias}_rows = {alias}_rows[keep]")

    def _row_columns(self) -> set[Col]:
        """Columns evaluated on every joined row: residual, grouping keys, aggregate arguments."""
        block = self.block
        found: set[Col] = set()
        for expr in block.residual + independent_keys(block):
            found |= columns(expr)
        for agg in aggregates_of(block):
            found |= columns(agg)
        if not block.group_by and not aggregates_of(block):
            found |= self._post_columns()
        return found

    def _post_columns(self) -> set[Col]:
        found: set[Col] = set()
        for expr in _post_exprs(self.block):
            inside = {c for node in walk(expr) if isinstance(node, Agg) for c in columns(node)}
            found |= columns(expr) - inside
        return found

    def _row_env(self) -> Env:
        return lambda col: f"{col.alias}_rows" if col.kind is Kind.TEXT else self.var(col)

    def _group(self) -> tuple[Env, dict[Agg, str]]:
        block = self.block
        keys = independent_keys(block)
        row = self._row_env()
        dropped = [k for k in block.group_by if k not in keys]
        names: dict[Agg, str] = {}
        if all(isinstance(k, Col) and k.kind is Kind.DICT for k in keys) and len(keys) <= 3:
            sizes = [self.host.size_of(k) for k in keys if isinstance(k, Col)]
            listed = ", ".join(self.var(k) for k in keys if isinstance(k, Col))
            self.out(
                f"# GROUP BY {listed}: dense codes over the sorted dictionaries, a slot per combination."
            )
            self.out(f"ids = ops.pack([{listed}], [{', '.join(sizes)}])")
            self.out(f"groups = {' * '.join(sizes)}")
            count = self._group_aggregates(names, always_count=True)
            self.out("present = torch.nonzero(" + count + " > 0).squeeze(1)  # combinations that occur")
            decoded: dict[Col, str] = {}
            for i, key in enumerate(keys):
                assert isinstance(key, Col)
                stride = " * ".join(sizes[i + 1 :])
                code = (
                    f"present // ({stride})"
                    if len(sizes[i + 1 :]) > 1
                    else f"present // {stride}"
                    if stride
                    else "present"
                )
                code = f"{code} % {sizes[i]}" if i else code
                decoded[key] = self.var(key)
                self.out(f"{self.var(key)} = {code}")
            for name in dict.fromkeys(names.values()):
                self.out(f"{name} = {name}[present]")

            def decoded_env(col: Col) -> str:
                if col not in decoded:
                    raise UnsupportedSQL(f"column {col.name} in SELECT that is not a GROUP BY key")
                return decoded[col]

            return decoded_env, names
        parts, widths = [], []
        for i, key in enumerate(keys):
            code = self.expr(key, column=row)
            if key.kind is Kind.BYTES:
                raise UnsupportedSQL(f"GROUP BY SUBSTRING {self.expr(key, column=row)} (CAST it to a number)")
            if key.kind is Kind.TEXT:  # Q21's s_name: the strings' bytes, coded by value
                assert isinstance(key, Col)
                self.out(f"key{i} = ops.text_codes({self.var(key)}[{code}])  # exact codes of the strings")
                parts.append(f"key{i}")
                widths.append(f"int(key{i}.max()) + 1")
                continue
            if isinstance(key, Col) and key.kind is Kind.DICT:
                parts.append(code)
                widths.append(self.host.size_of(key))
                continue
            if len(keys) == 1 and key.kind in (Kind.INT, Kind.DATE):
                parts.append(code)
                break
            if key.kind in (Kind.DECIMAL, Kind.FLOAT):
                self.out(
                    f"key{i} = torch.unique({code}, return_inverse=True)[1]  # exact codes of the values"
                )
            else:
                self.out(f"key{i} = {code}")
                self.out(f"key{i} = key{i} - key{i}.min()")
            parts.append(f"key{i}")
            widths.append(f"int(key{i}.max()) + 1")
        follow = (
            f" ({', '.join(self.expr(k, column=row) for k in dropped)} follow from it)" if dropped else ""
        )
        listed = ", ".join(
            k.name if isinstance(k, Col) and k.kind is Kind.TEXT else self.expr(k, column=row) for k in keys
        )
        self.out(f"# GROUP BY {listed}: exact keys, group ids by sorting{follow}.")
        packed = (
            parts[0]
            if len(parts) == 1 and not widths
            else f"ops.pack([{', '.join(parts)}], [{', '.join(widths)}])"
        )
        self.out(f"_, ids = ops.group({packed})")
        self.out("groups = int(ids.max()) + 1 if ids.numel() else 0")
        self.out(
            "first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each"
        )
        self._group_aggregates(names, always_count=False)

        def first_row_env(col: Col) -> str:
            if col.kind is Kind.TEXT:
                return f"{col.alias}_rows[first]"
            if col in self.rebound:
                return f"{self.var(col)}[first]"
            return f"{self.var(col)}[{col.alias}_rows[first]]"

        return first_row_env, names

    def _group_aggregates(self, names: dict[Agg, str], *, always_count: bool) -> str:
        row = self._row_env()
        aggs = aggregates_of(self.block)
        count_agg = Agg("count", None, Kind.INT)
        if always_count or any(a.func == "avg" for a in aggs):
            if count_agg not in aggs:
                names[count_agg] = "count"
                aggs = [count_agg, *aggs]
        count = None
        for agg in sorted(aggs, key=lambda a: a.func != "count"):
            name = self._agg_name(agg, names)
            arg = self.expr(agg.arg, column=row) if agg.arg is not None else ""
            if agg.func == "count":
                count = count or name
                code = "ops.group_count(ids, groups)"
            elif agg.func == "count_distinct":
                code = f"ops.group_count_distinct({arg}, ids, groups)"
            elif agg.func == "sum":
                code = f"ops.group_sum({arg}, ids, groups)"
            elif agg.func == "avg":
                code = f"ops.group_sum({_double(arg, agg)}, ids, groups) / {count}"
            else:
                code = f"ops.group_{agg.func}({arg}, ids, groups)"
            self.out(f"{name} = {code}")
        return count or ""

    def _global_aggregates(self) -> tuple[Env, dict[Agg, str]]:
        row = self._row_env()
        names: dict[Agg, str] = {}
        root_rows = f"{self.block.root}_rows"
        self.out("# Aggregates over the joined rows.")
        if any(nullable(agg) for agg in aggregates_of(self.block)):
            self.out("# Over no rows SUM, AVG, MIN and MAX are SQL's NULL: NaN (docs/data-format.md).")
            self.out(
                f"sql_null = torch.full((1,), torch.nan, dtype=torch.float64, device={root_rows}.device)"
            )
        for agg in aggregates_of(self.block):
            name = self._agg_name(agg, names)
            arg = self.expr(agg.arg, column=row) if agg.arg is not None else ""
            if agg.func == "count":
                code = f"torch.tensor([{root_rows}.numel()], device={root_rows}.device)"
            elif agg.func == "count_distinct":
                code = f"torch.tensor([torch.unique({arg}).numel()], device={root_rows}.device)"
            elif agg.func == "sum":
                code = f"({arg}).sum().reshape(1)"
            elif agg.func == "avg":
                code = f"({_double(arg, agg)}).mean().reshape(1)"
            else:
                code = f"({arg}).{'amin' if agg.func == 'min' else 'amax'}().reshape(1)"
            # The rows are compacted: their count is known on the host, and amin/amax of none would raise.
            self.out(
                f"{name} = {code} if {root_rows}.numel() else sql_null"
                if nullable(agg)
                else f"{name} = {code}"
            )
        return self._no_column, names

    def _project(self) -> tuple[Env, dict[Agg, str]]:
        return self._row_env(), {}

    def _no_column(self, col: Col) -> str:
        raise UnsupportedSQL(f"column {col.name} outside an aggregate without GROUP BY")

    def _finish(self, post: tuple[Env, dict[Agg, str]]) -> list[str]:
        env, names = post
        return self._finish_outputs(env, names)

    def _finish_outputs(self, env: Env, names: dict[Agg, str]) -> list[str]:
        block = self.block
        name_of = cast(Callable[[Agg], str], names.get)  # the grouping named each aggregate of the block
        texts: dict[Expr, str] = {}
        for i, (expr, _) in enumerate(block.order_by):
            if expr.kind in (Kind.TEXT, Kind.BYTES) and expr not in texts:
                if not isinstance(expr, Col):
                    raise UnsupportedSQL("ORDER BY a free-text expression")
                # The bytes, gathered before a result column of the same name replaces the column.
                code = self.expr(expr, column=env)
                code = f"{self.var(expr)}[{code}]" if expr.kind is Kind.TEXT else code
                self.out(f"sort_text{i} = {code}  # ORDER BY text")
                texts[expr] = f"sort_text{i}"
        self.out("# The result columns.")
        result: list[str] = []
        by_expr: dict[Expr, str] = dict(texts)
        for name, expr in block.outputs:
            if expr.kind is Kind.BYTES:
                raise UnsupportedSQL(f"SUBSTRING as the result column {name}")
            var = identifier(name)
            code = self.expr(expr, column=env, agg=name_of)
            if expr.kind is Kind.DICT:
                code = f"{code}.long()"  # string results are int64 positions into the dictionary
            if code != var:
                self.out(f"{var} = {code}")
            result.append(var)
            if expr not in texts:
                by_expr.setdefault(expr, var)
        keys = []
        for i, (expr, descending) in enumerate(block.order_by):
            if expr not in by_expr:
                by_expr[expr] = f"sort_key{i}"
                self.out(f"sort_key{i} = {self.expr(expr, column=env, agg=name_of)}")
            keys.append((by_expr[expr], descending))
        carried = list(dict.fromkeys(result + [k for k, _ in keys]))
        if block.having is not None:
            self.out(f"keep = torch.nonzero({self.expr(block.having, column=env, agg=name_of)}).squeeze(1)")
            for var in carried:
                self.out(f"{var} = {var}[keep]")
        if keys:
            listed = ", ".join(
                f"*ops.text_order_keys({k}, descending={d})" if k in texts.values() else f"({k}, {d})"
                for k, d in keys
            )
            limit = f", limit={block.limit}" if block.limit is not None else ""
            self.out(f"order = ops.order([{listed}]{limit})")
            for var in dict.fromkeys(result):
                self.out(f"{var} = {var}[order]")
        elif block.limit is not None:
            for var in dict.fromkeys(result):
                self.out(f"{var} = {var}[: {block.limit}]")
        self.out(f"return ({', '.join(result)}{',' if len(result) == 1 else ''})")
        return self.lines


def nullable(agg: Agg) -> bool:
    """An ungrouped aggregate that is NULL over no rows and lands in a float column, where NULL is NaN.
    An integer one would need a NULL the encodings do not have; no benchmark query has one."""
    return agg.func in ("sum", "avg", "min", "max") and agg.kind in (Kind.DECIMAL, Kind.FLOAT)


def _double(arg: str, agg: Agg) -> str:
    # AVG is DOUBLE in SQL; an integer argument must not be averaged in integer or float32 arithmetic.
    assert agg.arg is not None
    return f"({arg}).double()" if agg.arg.kind is Kind.INT else arg


def _post_exprs(block: Block) -> list[Expr]:
    exprs = [e for _, e in block.outputs] + [e for e, _ in block.order_by]
    return exprs + ([block.having] if block.having is not None else [])


def aggregates_of(block: Block) -> list[Agg]:
    found: list[Agg] = []
    for expr in _post_exprs(block):
        for node in walk(expr):
            if isinstance(node, Agg) and node not in found:
                found.append(node)
    return found


def identifier(name: str) -> str:
    clean = "".join(ch if ch.isalnum() else "_" for ch in name).strip("_") or "value"
    return f"c_{clean}" if clean[0].isdigit() else clean
