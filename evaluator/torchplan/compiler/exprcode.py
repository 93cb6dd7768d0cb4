"""Python source for IR expressions, with the fewest parentheses Python's precedence allows.

Boolean masks use `&`, `|`, `~`, which bind tighter than comparisons in Python: `(a < b) & (c > d)`.
"""

from __future__ import annotations

from collections.abc import Callable

from evaluator.torchplan.compiler.ir import (
    Agg,
    Case,
    Col,
    DictPred,
    ExistsOther,
    Expr,
    Host,
    Lit,
    MatchCount,
    Op,
    Scalar,
    TextPred,
)
from evaluator.torchplan.compiler.schema import Kind

_SYMBOL = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "and": "&", "or": "|"}
_SYMBOL |= {"+": "+", "-": "-", "*": "*", "/": "/"}
PRECEDENCE = {"=": 1, "<>": 1, "<": 1, "<=": 1, ">": 1, ">=": 1, "or": 2, "and": 3, "+": 5, "-": 5}
PRECEDENCE |= {"*": 6, "/": 6, "not": 7, "neg": 7}
ATOM = 9
_TEXT_OPS = {"eq": "text_equals", "in": "text_in", "prefix": "text_prefix", "contains": "text_contains"}
_TEXT_OPS |= {"in_order": "text_contains_in_order"}


class ExprCode:
    """`code(expr)` under an environment: how columns, aggregates and host values are named."""

    def __init__(
        self,
        column: Callable[[Col], str],
        host: Callable[[Expr], str],
        agg: Callable[[Agg], str] | None = None,
        inner_keys: Callable[[MatchCount | ExistsOther], str] | None = None,
    ) -> None:
        self.column = column
        self.host = host  # name of the core argument holding a Host / DictPred table / code
        self.agg = agg
        self.inner_keys = inner_keys  # what a MatchCount or ExistsOther reads: per-key counts or ranges

    def code(self, expr: Expr) -> str:
        return self._code(expr)[0]

    def code_prec(self, expr: Expr) -> tuple[str, int]:
        """The code and the precedence of its outermost operator (ATOM when it needs no parentheses)."""
        return self._code(expr)

    def _code(self, expr: Expr) -> tuple[str, int]:
        if isinstance(expr, Col):
            return self.column(expr), ATOM
        if isinstance(expr, Lit):
            return repr(expr.value), ATOM if expr.value >= 0 else 7
        if isinstance(expr, Host):
            return self.host(expr), ATOM
        if isinstance(expr, Scalar):
            return expr.var, ATOM
        if isinstance(expr, MatchCount):
            assert self.inner_keys is not None
            return f"ops.count_of({self.column(expr.key)}, {self.inner_keys(expr)})", ATOM
        if isinstance(expr, ExistsOther):
            assert self.inner_keys is not None
            ranges = self.inner_keys(expr)
            return f"ops.exists_other({self.column(expr.key)}, {self.column(expr.value)}, *{ranges})", ATOM
        if isinstance(expr, Agg):
            if self.agg is None:
                raise AssertionError("aggregate outside an aggregation")
            return self.agg(expr), ATOM
        if isinstance(expr, DictPred):
            column = self.column(expr.column)
            if expr.op in ("eq", "ne"):
                return f"{column} {'==' if (expr.op == 'eq') != expr.negate else '!='} {self.host(expr)}", 1
            lookup = f"{self.host(expr)}[{column}]"
            return (f"~{lookup}", 7) if expr.negate else (lookup, ATOM)
        if isinstance(expr, TextPred):
            needles = ", ".join(self.host(n) for n in expr.needles)
            if expr.op == "in":
                needles = f"({needles}{',' if len(expr.needles) == 1 else ''})"
            call = f"ops.{_TEXT_OPS[expr.op]}({self.column(expr.column)}, {needles})"
            return (f"~{call}", 7) if expr.negate else (call, ATOM)
        if isinstance(expr, Case):
            result = self.code(expr.default)
            if expr.kind in (Kind.DECIMAL, Kind.FLOAT) and isinstance(expr.default, Lit):
                result = repr(float(expr.default.value))
            for condition, value in reversed(expr.whens):
                result = f"torch.where({self.code(condition)}, {self.code(value)}, {result})"
            return result, ATOM
        if isinstance(expr, Op):
            return self._op(expr)
        raise AssertionError(f"unknown expression {expr!r}")

    def _op(self, expr: Op) -> tuple[str, int]:
        if expr.op == "year":
            return f"ops.year({self.code(expr.args[0])})", ATOM
        if expr.op == "digits":
            return f"ops.text_digits({self.code(expr.args[0])})", ATOM
        precedence = PRECEDENCE[expr.op]
        if expr.op in ("not", "neg"):
            inner, inner_prec = self._code(expr.args[0])
            inner = f"({inner})" if inner_prec < precedence else inner
            return f"{'~' if expr.op == 'not' else '-'}{inner}", precedence
        (left, lp), (right, rp) = self._code(expr.args[0]), self._code(expr.args[1])
        if expr.op == "/" and expr.args[0].kind is Kind.INT and expr.args[1].kind is Kind.INT:
            # torch divides two integer tensors into float32: SQL's DOUBLE needs float64.
            left, lp = (f"({left}).double()" if lp < ATOM else f"{left}.double()"), ATOM
        left = f"({left})" if lp < precedence else left
        # a - (b - c) and a / (b * c): the right operand of a non-associative operator needs them.
        right = f"({right})" if rp < precedence or (rp == precedence and expr.op in "-/") else right
        if precedence == 1 and lp == 1:
            left = f"({left})"
        return f"{left} {_SYMBOL[expr.op]} {right}", precedence
