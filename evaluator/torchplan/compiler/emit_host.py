"""The core's scalar arguments: host values `run_query` computes from the parameters and dictionaries.

Each distinct host value becomes one keyword argument of `_query_core` with a readable name; its
Python code (over the parameter names and the `tables` entries) goes into the call in `run_query`.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluator.torchplan.compiler.ir import Col, DictPred, Expr, Host
from evaluator.torchplan.compiler.schema import Kind

_ANNOTATION = {Kind.DATE: "int", Kind.INT: "int", Kind.DECIMAL: "float", Kind.FLOAT: "float", Kind.STR: "str"}


@dataclass
class HostArg:
    name: str
    annotation: str
    code: str
    comment: str = ""


class HostArgs:
    def __init__(self, taken: set[str]) -> None:
        self.args: dict[tuple, HostArg] = {}
        self.taken = set(taken)

    def _add(self, key: tuple, hint: str, annotation: str, code: str) -> str:
        if key not in self.args:
            name = hint
            counter = 2
            while name in self.taken:
                name = f"{hint}_{counter}"
                counter += 1
            self.taken.add(name)
            self.args[key] = HostArg(name, annotation, code)
        return self.args[key].name

    def name_for(self, expr: Expr) -> str:
        if isinstance(expr, Host):
            code = _fold(expr)
            return self._add(("host", code), _safe(expr.hint), _ANNOTATION[expr.kind], code)
        if isinstance(expr, DictPred):
            col = expr.column
            dictionary = f'{col.table}.dictionary("{col.name}")'
            device = f'{col.table}["{col.name}"].device'
            values = [_fold(v) for v in expr.values]
            if expr.op in ("eq", "ne"):
                code = f"ops.dictionary_code({dictionary}, {values[0]})"
                return self._add(("code", col.table, col.name, code), _safe(expr.values[0].hint), "int", code)
            if expr.op == "in":
                test = f"lambda s: s in ({', '.join(values)}{',' if len(values) == 1 else ''})"
                hint = f"{col.name}_in_list"
            else:
                test = f"ops.sql_like({values[0]})"
                hint = f"{col.name}_like_{_safe(expr.values[0].hint)}"
            code = f"ops.dictionary_mask({dictionary}, {test}, {device})"
            return self._add(
                ("table", col.table, col.name, code), hint[:40].rstrip("_"), "torch.Tensor", code
            )
        raise AssertionError(f"not a host value: {expr!r}")

    def size_of(self, col: Col) -> str:
        code = f'len({col.table}.dictionary("{col.name}"))'
        return self._add(("size", col.table, col.name), f"{col.name}_size", "int", code)

    def codes(self) -> str:
        return "\n".join(a.code for a in self.args.values())


class HostUse:
    """The host values one function of the module uses (a scalar subquery's takes only those)."""

    def __init__(self, host: HostArgs) -> None:
        self.host = host
        self.used: list[HostArg] = []

    def use(self, name: str) -> str:
        arg = next(a for a in self.host.args.values() if a.name == name)
        if arg not in self.used:
            self.used.append(arg)
        return name

    def name_for(self, expr: Expr) -> str:
        return self.use(self.host.name_for(expr))

    def size_of(self, col: Col) -> str:
        return self.use(self.host.size_of(col))


def signature(tensors: list[str], scalars: list[HostArg]) -> str:
    """A function's parameter lines: the tensors positionally, then the host values by keyword."""
    lines = [f"    {var}: torch.Tensor," for var in tensors]
    if scalars:
        lines.append("    *,")
        lines.extend(f"    {a.name}: {a.annotation}," for a in scalars)
    return "\n".join(lines)


def _fold(host: Host) -> str:
    """A needle cut out of a constant LIKE pattern is folded at compile time: 'green', not '%green%'[1:-1]."""
    if not host.params and ".split(" in host.code:
        return repr(eval(host.code, {"__builtins__": {}}))  # noqa: S307 - our own literal code
    return host.code


def _safe(hint: str) -> str:
    clean = "".join(ch if ch.isalnum() else "_" for ch in hint.lower()).strip("_") or "value"
    while "__" in clean:
        clean = clean.replace("__", "_")
    clean = clean[:40].rstrip("_")
    return f"v_{clean}" if clean[0].isdigit() else clean
