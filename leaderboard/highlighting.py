"""Source as highlighted HTML (Pygments): a kernel's once, when it is stored; a query's SQL and TorchPlan
from a small in-process cache, since there are 22 of each."""

from __future__ import annotations

import functools

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer, PythonLexer, SqlLexer

_LEXERS = {"python": PythonLexer, "sql": SqlLexer, "diff": DiffLexer}
# Line numbers in a table keep them out of copy-paste; the CSS is static/leaderboard/pygments.css.
_NUMBERED = HtmlFormatter(cssclass="highlight", linenos="table", wrapcode=True)
# A diff's own "@@" lines say where each hunk is: numbers would count the diff's lines, not the files'.
_PLAIN = HtmlFormatter(cssclass="highlight", wrapcode=True)


def to_html(source: str, language: str = "python") -> str:
    """Pygments' HTML for the source; it escapes every token, so the result is safe to show as is."""
    formatter = _PLAIN if language == "diff" else _NUMBERED
    return highlight(source or "", _LEXERS[language](), formatter)


@functools.lru_cache(maxsize=128)
def cached_html(source: str, language: str = "python") -> str:
    """`to_html`, remembered per process: for the few sources every page shows (the queries')."""
    return to_html(source, language)
