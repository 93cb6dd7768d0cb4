"""The compiler's one error type: the SQL uses a construct it cannot translate (yet)."""

from __future__ import annotations


class UnsupportedSQL(Exception):
    """Names the construct and where it sits, e.g. 'correlated subquery in WHERE (Q2 shape)'."""

    def __init__(self, construct: str, where: str = "") -> None:
        self.construct = construct
        self.where = where
        super().__init__(f"{construct} {where} is not supported yet".replace("  ", " "))


class ParameterError(ValueError):
    """A named parameter does not occur in the SQL, or two parameters cannot be told apart."""
