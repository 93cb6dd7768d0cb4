"""Lower sqlglot scalar expressions to IR expressions, typing them with the static schema.

Column-free subtrees become `Host` code (run once in `run_query`); string predicates become
`DictPred` on dictionary codes or `TextPred` on byte matrices, decided by the column's encoding.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from sqlglot import exp

from evaluator.torchplan.compiler.errors import UnsupportedSQL
from evaluator.torchplan.compiler.ir import (
    Agg,
    Case,
    Col,
    DictPred,
    ExistsOther,
    Expr,
    Host,
    Lit,
    Op,
    Scalar,
    TextPred,
)
from evaluator.torchplan.compiler.params import Binding
from evaluator.torchplan.compiler.schema import Kind, column_kind, sql_types

_ARITH: dict[type[exp.Expr], str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/"}
_COMPARE: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
_NUMERIC = (Kind.INT, Kind.DECIMAL, Kind.FLOAT)


class Lowering:
    """Lowers expressions of one SELECT; `scope` maps a SQL qualifier to (relation alias, table)."""

    def __init__(
        self,
        binding: Binding,
        scope: Mapping[str, tuple[str, str]],
        where: str,
        derived: Mapping[str, Mapping[str, Expr]] | None = None,
    ) -> None:
        self.binding = binding
        self.scope = scope
        self.where = where
        self.types = sql_types()
        # columns of grouped subqueries (derived.py), by qualifier and name: IR over their relation
        self.derived = derived or {}

    def lower(self, node: exp.Expr) -> Expr:
        if isinstance(node, exp.Paren):
            return self.lower(node.this)
        if node.args.get("negate"):  # sqlglot spells `x NOT LIKE p` as Like(negate=True)
            plain = node.copy()
            plain.set("negate", None)
            return self.lower(exp.Not(this=plain))
        if _column_free(node):
            return self.host(node)
        if isinstance(node, exp.Column):
            return self.column(node)
        if isinstance(node, tuple(_ARITH)):
            return self.arith(_ARITH[type(node)], self.lower(node.this), self.lower(node.expression))
        if isinstance(node, exp.Neg):
            arg = self.lower(node.this)
            return Op("neg", (arg,), arg.kind)
        if isinstance(node, tuple(_COMPARE)):
            return self.compare(_COMPARE[type(node)], node.this, node.expression)
        if isinstance(node, exp.Between):
            low = self.compare(">=", node.this, node.args["low"])
            high = self.compare("<=", node.this, node.args["high"])
            return Op("and", (low, high), Kind.BOOL)
        if isinstance(node, exp.And | exp.Or):
            args = (self.lower(node.this), self.lower(node.expression))
            return Op("and" if isinstance(node, exp.And) else "or", args, Kind.BOOL)
        if isinstance(node, exp.Not):
            inner = self.lower(node.this)
            if isinstance(inner, DictPred | TextPred):
                return type(inner)(
                    inner.op,
                    inner.column,
                    inner.values if isinstance(inner, DictPred) else inner.needles,
                    not inner.negate,
                )
            return Op("not", (inner,), Kind.BOOL)
        if isinstance(node, exp.In):
            return self.in_list(node)
        if isinstance(node, exp.Like):
            return self.like(node.this, node.expression)
        if isinstance(node, exp.Case):
            return self.case(node)
        if isinstance(node, exp.If):
            return self.case(exp.Case(ifs=[node], default=node.args.get("false")))
        if isinstance(node, exp.Extract) and node.this.name.upper() == "YEAR":
            arg = self.lower(node.expression)
            if arg.kind is not Kind.DATE:
                raise UnsupportedSQL("EXTRACT(YEAR ...) of a non-date", self.where)
            return Op("year", (arg,), Kind.INT)
        if isinstance(node, exp.AggFunc):
            return self.aggregate(node)
        if isinstance(node, exp.Substring):
            return self.substring(node)
        if isinstance(node, exp.Anonymous) and node.name.lower() in self.binding.exists:
            return self.exists_other(node)
        if isinstance(node, exp.Cast) and node.to.is_type(*exp.DataType.INTEGER_TYPES):
            arg = self.lower(node.this)
            if arg.kind is not Kind.BYTES:
                raise UnsupportedSQL(f"CAST of `{node.this.sql()}` to an integer", self.where)
            return Op("digits", (arg,), Kind.INT)
        if isinstance(node, exp.Subquery | exp.Exists | exp.Select):
            raise UnsupportedSQL(
                "subquery that sqlglot could not unnest (e.g. NOT IN, Q16 shape)", self.where
            )
        raise UnsupportedSQL(f"{node.key.upper()} expression `{node.sql(dialect='duckdb')}`", self.where)

    # --- leaves ------------------------------------------------------------------------------

    def column(self, node: exp.Column) -> Expr:
        qualifier = node.table
        if qualifier in self.derived and node.name in self.derived[qualifier]:
            return self.derived[qualifier][node.name]
        if qualifier not in self.scope:
            raise UnsupportedSQL(f"column {node.sql()} from a derived table or outer query", self.where)
        alias, table = self.scope[qualifier]
        sql_type = self.types[table].get(node.name)
        if sql_type is None:
            raise UnsupportedSQL(f"column {node.sql()} that is not a TPC-H column", self.where)
        kind = column_kind(node.name, sql_type)
        if kind is Kind.UNCACHED:
            raise UnsupportedSQL(f"free-text column {node.name} (not in the columnar cache)", self.where)
        return Col(alias, table, node.name, kind)

    def host(self, node: exp.Expr) -> Host | Lit:
        """A column-free expression: inline number, or Python code for `run_query`."""
        if isinstance(node, exp.Literal) and not node.is_string:
            value = float(node.this) if "." in node.this or "e" in node.this.lower() else int(node.this)
            return Lit(value, Kind.DECIMAL if isinstance(value, float) else Kind.INT)
        code, kind = self._host_code(node)
        params = tuple(sorted(p.name for p in node.find_all(exp.Placeholder)))
        return Host(code, kind, _hint(node), params)

    def _host_code(self, node: exp.Expr) -> tuple[str, Kind]:
        if isinstance(node, exp.Paren):
            return self._host_code(node.this)
        if isinstance(node, exp.Placeholder):
            name = node.name
            if self.binding.is_template(name):
                return self.binding.templates[name], Kind.STR
            ptype = self.binding.python_type(name)
            if name in self.binding.numbers:
                return f"float({name})", Kind.DECIMAL  # a DECIMAL literal given as its digits (Q11)
            return name, {"str": Kind.STR, "int": Kind.INT, "float": Kind.DECIMAL}[ptype]
        if isinstance(node, exp.Literal):
            if node.is_string:
                return repr(node.this), Kind.STR
            return node.this, Kind.DECIMAL if "." in node.this else Kind.INT
        if isinstance(node, exp.Cast) and node.to.is_type("date"):
            code, kind = self._host_code(node.this)
            if kind is not Kind.STR:
                raise UnsupportedSQL(f"CAST of {node.this.sql()} to DATE", self.where)
            return f"parse_date({code})", Kind.DATE
        if isinstance(node, exp.Add | exp.Sub):
            sign = "-" if isinstance(node, exp.Sub) else ""
            left, lkind = self._host_code(node.this)
            if isinstance(node.expression, exp.Interval):
                if lkind is not Kind.DATE:
                    raise UnsupportedSQL("INTERVAL arithmetic on a non-date", self.where)
                amount, _ = self._host_code(node.expression.this)
                amount = amount.strip("'") if amount.startswith("'") else f"int({amount})"
                unit = node.expression.text("unit").lower().rstrip("s")
                if unit not in ("day", "month", "year"):
                    raise UnsupportedSQL(f"INTERVAL unit {unit!r}", self.where)
                return f"add_interval({left}, {sign}{amount}, {unit!r})", Kind.DATE
            right, rkind = self._host_code(node.expression)
            return self._host_arith(left, lkind, "-" if sign else "+", right, rkind)
        if isinstance(node, exp.Mul | exp.Div):
            left, lkind = self._host_code(node.this)
            right, rkind = self._host_code(node.expression)
            return self._host_arith(left, lkind, _ARITH[type(node)], right, rkind)
        raise UnsupportedSQL(f"constant expression `{node.sql(dialect='duckdb')}`", self.where)

    def _host_arith(self, left: str, lkind: Kind, op: str, right: str, rkind: Kind) -> tuple[str, Kind]:
        if lkind not in _NUMERIC or rkind not in _NUMERIC:
            raise UnsupportedSQL(f"host arithmetic on {lkind.value} and {rkind.value}", self.where)
        if lkind is Kind.INT and rkind is Kind.INT and op != "/":
            return f"{left} {op} {right}", Kind.INT
        if op in "+-":
            # A DECIMAL result is rounded to its SQL digits: 0.06 + 0.01 is not 0.07 in float64.
            return f"decimal({left} {op} {right})", Kind.DECIMAL
        return f"{left} {op} {right}", Kind.FLOAT

    # --- operators ---------------------------------------------------------------------------

    def arith(self, op: str, left: Expr, right: Expr) -> Op:
        kinds = {left.kind, right.kind}
        if op == "-" and kinds == {Kind.DATE}:
            return Op(op, (left, right), Kind.INT)
        if not kinds <= set(_NUMERIC):
            raise UnsupportedSQL(f"arithmetic `{op}` on {sorted(k.value for k in kinds)}", self.where)
        if op == "/" or Kind.FLOAT in kinds:
            kind = Kind.FLOAT
        else:
            kind = Kind.DECIMAL if Kind.DECIMAL in kinds else Kind.INT
        return Op(op, (left, right), kind)

    def compare(self, op: str, left_node: exp.Expr, right_node: exp.Expr) -> Expr:
        left, right = self.lower(left_node), self.lower(right_node)
        strings = (Kind.DICT, Kind.TEXT, Kind.BYTES)
        if isinstance(right, Col) and right.kind in strings and isinstance(left, Host):
            left, right = right, left
        if isinstance(left, Col) and left.kind is Kind.DICT and isinstance(right, Host):
            if op not in ("=", "<>"):
                raise UnsupportedSQL(f"string comparison `{op}` on {left.name}", self.where)
            return DictPred("eq" if op == "=" else "ne", left, (right,))
        if isinstance(left, Col) and left.kind in (Kind.TEXT, Kind.BYTES) and isinstance(right, Host):
            if op not in ("=", "<>"):
                raise UnsupportedSQL(f"string comparison `{op}` on {left.name}", self.where)
            return TextPred("eq", left, (right,), negate=op == "<>")
        if {left.kind, right.kind} & {Kind.TEXT, Kind.BYTES, Kind.STR}:
            raise UnsupportedSQL(f"comparison `{left_node.sql()} {op} {right_node.sql()}`", self.where)
        if (left.kind is Kind.DICT) != (right.kind is Kind.DICT):
            raise UnsupportedSQL(f"comparison of a dictionary code with `{right_node.sql()}`", self.where)
        return Op(op, (left, right), Kind.BOOL)

    def in_list(self, node: exp.In) -> Expr:
        if node.args.get("query") is not None:
            raise UnsupportedSQL("IN (subquery) that sqlglot could not unnest", self.where)
        arg = self.lower(node.this)
        values = [self.lower(v) for v in node.expressions]
        if not all(isinstance(v, Host | Lit) for v in values):
            raise UnsupportedSQL("IN list with non-constant values", self.where)
        if isinstance(arg, Col) and arg.kind is Kind.DICT:
            return DictPred("in", arg, tuple(v for v in values if isinstance(v, Host)))
        if isinstance(arg, Col) and arg.kind in (Kind.TEXT, Kind.BYTES):
            if not all(isinstance(v, Host) and v.kind is Kind.STR for v in values):
                raise UnsupportedSQL(f"IN list of non-strings on {node.this.sql()}", self.where)
            return TextPred("in", arg, tuple(v for v in values if isinstance(v, Host)))
        if arg.kind in (Kind.TEXT, Kind.STR, Kind.DICT):
            raise UnsupportedSQL(f"IN list on {node.this.sql()}", self.where)
        result: Expr = Op("=", (arg, values[0]), Kind.BOOL)
        for value in values[1:]:
            result = Op("or", (result, Op("=", (arg, value), Kind.BOOL)), Kind.BOOL)
        return result

    def like(self, left_node: exp.Expr, pattern_node: exp.Expr) -> Expr:
        column = self.lower(left_node)
        pattern = self.lower(pattern_node)
        if not isinstance(column, Col) or not isinstance(pattern, Host) or pattern.kind is not Kind.STR:
            raise UnsupportedSQL(
                f"LIKE on `{left_node.sql()}` with pattern `{pattern_node.sql()}`", self.where
            )
        if column.kind is Kind.DICT:
            return DictPred("like", column, (pattern,))
        if column.kind is not Kind.TEXT:
            raise UnsupportedSQL(f"LIKE on non-string column {column.name}", self.where)
        return _text_like(column, pattern, self.where)

    def case(self, node: exp.Case) -> Expr:
        if node.this is not None:
            raise UnsupportedSQL("simple CASE x WHEN v ...", self.where)
        whens = tuple((self.lower(w.this), self.lower(w.args["true"])) for w in node.args["ifs"])
        default_node = node.args.get("default")
        default = self.lower(default_node) if default_node is not None else None
        if default is None:
            raise UnsupportedSQL("CASE without ELSE (NULL results)", self.where)
        kinds = {v.kind for _, v in whens} | {default.kind}
        kind = Kind.FLOAT if Kind.FLOAT in kinds else Kind.DECIMAL if Kind.DECIMAL in kinds else kinds.pop()
        return Case(whens, default, kind)

    def exists_other(self, node: exp.Anonymous) -> ExistsOther:
        """A call the frontend put where an EXISTS correlated by `=` and `<>` was (frontend.py)."""
        info = self.binding.exists[node.name.lower()]
        key, value = (self.lower(arg) for arg in node.expressions)
        if not (isinstance(key, Col) and isinstance(value, Col)):
            raise UnsupportedSQL("EXISTS correlated with an expression", self.where)
        alias = info.qualifier if info.qualifier != info.table else f"{info.table}_exists"
        inner = Lowering(self.binding, {info.qualifier: (alias, info.table)}, "in an EXISTS subquery")
        filters = tuple(inner.lower(c) for c in info.filters)
        inner_key, inner_value = (inner.column(exp.column(n, info.qualifier)) for n in (info.key, info.value))
        return ExistsOther(key, value, alias, info.table, filters, inner_key, inner_value)  # type: ignore[arg-type]

    def substring(self, node: exp.Substring) -> Col:
        """SUBSTRING(text FROM start FOR length) with constant bounds: a slice of the byte matrix."""
        column = self.lower(node.this)
        start, length = node.args.get("start"), node.args.get("length")
        bounds = [self.lower(b) if b is not None else None for b in (start, length)]
        values = [b.value for b in bounds if isinstance(b, Lit) and isinstance(b.value, int) and b.value >= 1]
        if not (isinstance(column, Col) and column.kind is Kind.TEXT) or len(values) != len(bounds):
            raise UnsupportedSQL(f"SUBSTRING `{node.sql()}` (only of free text, constant bounds)", self.where)
        first, count = values
        return Col(column.alias, column.table, column.name, Kind.BYTES, span=(first - 1, count))

    def aggregate(self, node: exp.AggFunc) -> Expr:
        func = node.key.lower()
        if func not in ("sum", "count", "avg", "min", "max"):
            raise UnsupportedSQL(f"aggregate {func.upper()}", self.where)
        arg_node = node.this
        if isinstance(arg_node, exp.Distinct):
            if func != "count" or len(arg_node.expressions) != 1:
                what = f"{func.upper()}(DISTINCT ...) other than COUNT of one value"
                raise UnsupportedSQL(what, self.where)
            arg = self.lower(arg_node.expressions[0])
            if arg.kind not in (*_NUMERIC, Kind.DATE, Kind.DICT):
                raise UnsupportedSQL(f"COUNT(DISTINCT ...) of a {arg.kind.value} value", self.where)
            return Agg("count_distinct", arg, Kind.INT)
        if func == "count" and (arg_node is None or isinstance(arg_node, exp.Star)):
            return Agg("count", None, Kind.INT)
        arg = self.lower(arg_node)
        if func in ("min", "max", "avg") and isinstance(arg, Scalar):
            return arg  # sqlglot's MAX(_u_0._col_0) over the one row of a scalar subquery
        if func == "count":
            return Agg("count", None, Kind.INT)  # every TPC-H column is NOT NULL
        if arg.kind not in (*_NUMERIC, Kind.DATE) or (func in ("sum", "avg") and arg.kind is Kind.DATE):
            raise UnsupportedSQL(f"{func.upper()} of a {arg.kind.value} value", self.where)
        kind = Kind.FLOAT if func == "avg" else arg.kind
        return Agg(func, arg, kind)


def _column_free(node: exp.Expr) -> bool:
    return not any(
        isinstance(n, exp.Column | exp.AggFunc | exp.Subquery | exp.Select | exp.Star) for n in node.walk()
    )


def _text_like(column: Col, pattern: Host, where: str) -> TextPred:
    """Shape of a LIKE pattern on free text: only '%' wildcards, in the shapes ops.py implements."""
    # The shape must not depend on the parameter values, so it is read off the pattern's code with
    # every {param} standing for a wildcard-free word.
    shape = re.sub(r"\{[^}]*\}", "x", pattern.code)
    if "_" in shape.replace("_template", "") or not (shape.startswith(("'", '"', 'f"'))):
        raise UnsupportedSQL(f"LIKE pattern {pattern.code} on {column.name}", where)
    body = shape[2:-1] if shape.startswith("f") else shape[1:-1]
    parts = body.split("%")
    if len(parts) == 2 and parts[1] == "" and parts[0]:
        op, count = "prefix", 1
    elif len(parts) == 3 and parts[0] == parts[2] == "" and parts[1]:
        op, count = "contains", 1
    elif len(parts) == 4 and parts[0] == parts[3] == "" and parts[1] and parts[2]:
        op, count = "in_order", 2
    else:
        raise UnsupportedSQL(f"LIKE pattern {pattern.code} on free text {column.name}", where)
    needles = tuple(
        Host(
            f"{pattern.code}.split('%')[{i + (0 if op == 'prefix' else 1)}]",
            Kind.STR,
            f"{pattern.hint}_{i}",
            pattern.params,
        )
        for i in range(count)
    )
    return TextPred(op, column, needles)


def _hint(node: exp.Expr) -> str:
    """A readable Python name for a host value: `date_plus_1_year`, `discount_minus_0_01`."""
    if isinstance(node, exp.Paren | exp.Cast):
        return _hint(node.this)
    if isinstance(node, exp.Placeholder):
        return node.name.lstrip("_")
    if isinstance(node, exp.Literal):
        return re.sub(r"\W+", "_", str(node.this)).strip("_").lower() or "empty"
    if isinstance(node, exp.Interval):
        return f"{_hint(node.this)}_{node.text('unit').lower()}"
    words = {exp.Add: "plus", exp.Sub: "minus", exp.Mul: "times", exp.Div: "over"}
    for kind, word in words.items():
        if isinstance(node, kind):
            return f"{_hint(node.this)}_{word}_{_hint(node.expression)}"
    return "value"
