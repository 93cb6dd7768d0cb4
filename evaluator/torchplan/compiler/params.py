"""Named parameters: find the caller's values among the SQL's literals and turn them into placeholders.

The compiler reads SQL with constants (what DuckDB runs); the caller names which constants are
parameters by giving name -> value (the query module's defaults). A literal whose text is the value
becomes `exp.Placeholder(name)`, so sqlglot's simplifier cannot fold it into a constant. A string
literal that merely contains a string value (`'%green%'` for color='green') becomes a template: the
emitted code rebuilds it with an f-string.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from evaluator.torchplan.compiler.errors import ParameterError


@dataclass
class Binding:
    """What the compiler knows about the parameters after binding."""

    defaults: dict[str, Any]
    # placeholder name -> Python f-string code for string templates such as f"%{color}%"
    templates: dict[str, str] = field(default_factory=dict)
    # string parameters that stand for a number in the SQL (Q11's fraction '0.0001000000', unquoted)
    numbers: set[str] = field(default_factory=set)
    # EXISTS subqueries correlated by `=` and `<>`, taken out before optimizing (frontend.py, Q21)
    exists: dict[str, Any] = field(default_factory=dict)

    def python_type(self, name: str) -> str:
        return type(self.defaults[name]).__name__

    def is_template(self, name: str) -> bool:
        return name in self.templates


def sentinels(params: dict[str, Any]) -> dict[str, Any]:
    """A value per parameter that no SQL text holds otherwise, of the parameter's type.

    Rendering a query template with these (rather than the defaults) makes binding exact: Q19's
    quantity1 = 1 would otherwise also bind the `1` of `p_size BETWEEN 1 AND 5`.
    """
    spelled: dict[str, Any] = {}
    for i, (name, value) in enumerate(params.items()):
        if isinstance(value, str) and not numeric_text(value):
            spelled[name] = f"Zq{i}qZ"
        elif isinstance(value, str):  # a DECIMAL digit string (Q11's fraction) may stand unquoted
            spelled[name] = f"{987654000 + i}.5"
        elif isinstance(value, float):
            spelled[name] = 987654000.5 + i
        else:
            spelled[name] = 987654000 + i
    return spelled


def bind(tree: exp.Expr, params: dict[str, Any] | None, spelled: dict[str, Any] | None = None) -> Binding:
    """Replace the parameters' literals in `tree`; `spelled` is how each is written there (default:
    its value; `sentinels(params)` when the SQL was rendered from a template with them)."""
    binding = Binding(dict(params or {}))
    spelled = dict(spelled) if spelled is not None else dict(binding.defaults)
    texts = {name: _text(value) for name, value in spelled.items()}
    clash = {t for t in texts.values() if list(texts.values()).count(t) > 1}
    if clash:
        names = sorted(n for n, t in texts.items() if t in clash)
        raise ParameterError(f"parameters {names} have the same value; give them distinct defaults")
    by_text = {text: name for name, text in texts.items()}
    found: set[str] = set()
    for literal in list(tree.find_all(exp.Literal)):
        name = by_text.get(literal.this) or _numeric_match(literal, spelled)
        if name is not None:
            if isinstance(binding.defaults[name], str) and not literal.is_string:
                binding.numbers.add(name)
            literal.replace(exp.Placeholder(this=name))
            found.add(name)
            continue
        if literal.is_string:
            template = _template(literal.this, spelled)
            if template is not None:
                placeholder = f"_template{len(binding.templates)}"
                code, used = template
                binding.templates[placeholder] = code
                found.update(used)
                literal.replace(exp.Placeholder(this=placeholder))
    missing = sorted(set(binding.defaults) - found)
    if missing:
        raise ParameterError(f"parameters {missing} do not occur as literals in the SQL")
    return binding


def numeric_text(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ParameterError(f"parameter value {value!r} must be a str, int or float")
    return str(value)


def _numeric_match(literal: exp.Literal, defaults: dict[str, Any]) -> str | None:
    # 0.060 in the SQL is still the parameter 0.06; strings never match numerically.
    if literal.is_string:
        return None
    for name, value in defaults.items():
        if not isinstance(value, str) and float(literal.this) == float(value):
            return name
    return None


def _template(text: str, defaults: dict[str, Any]) -> tuple[str, set[str]] | None:
    """An f-string rebuilding `text` from the string parameters it contains, or None."""
    pieces: list[tuple[bool, str]] = [(False, text)]
    used: set[str] = set()
    for name, value in defaults.items():
        if not isinstance(value, str) or len(value) < 2:
            continue
        split: list[tuple[bool, str]] = []
        for is_param, piece in pieces:
            if is_param or value not in piece:
                split.append((is_param, piece))
                continue
            used.add(name)
            for i, part in enumerate(piece.split(value)):
                if i:
                    split.append((True, name))
                split.append((False, part))
        pieces = split
    if not used:
        return None
    body = "".join(
        "{" + piece + "}" if is_param else piece.replace("{", "{{").replace("}", "}}").replace('"', '\\"')
        for is_param, piece in pieces
    )
    return f'f"{body}"', used
