"""Assemble the emitted module: docstring with the SQL, imports, COLUMNS, helpers, core, run_query."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

from evaluator.torchplan.compiler.emit import CoreEmitter
from evaluator.torchplan.compiler.emit_host import HostArgs, signature
from evaluator.torchplan.compiler.ir import Block, Col
from evaluator.torchplan.compiler.params import Binding
from evaluator.torchplan.compiler.schema import Kind


def render(block: Block, binding: Binding, *, name: str, sql: str) -> str:
    host = HostArgs(taken=set())
    core = CoreEmitter(block, host)
    body = core.emit()
    # Core arguments grouped by table (in order of first use), so the signature reads table by table.
    first_use = list(dict.fromkeys(c.table for c in core.tensors))
    tensors = dict(sorted(core.tensors.items(), key=lambda item: first_use.index(item[0].table)))
    # The run_query local holding a table is named for it, unless a parameter already has that name.
    local = {t: f"{t}_table" if t in binding.defaults else t for t in first_use}
    strings = {
        n: (e.table, e.name)
        for n, e in block.outputs
        if isinstance(e, Col) and e.kind in (Kind.DICT, Kind.TEXT)
    }

    columns: dict[str, list[str]] = {}
    for col in tensors:
        names = columns.setdefault(col.table, [])
        if col.name not in names:
            names.append(col.name)
    tables = sorted(columns, key=lambda t: list(columns).index(t))

    params = signature(list(tensors.values()), list(host.args.values()))
    params_sig = ", ".join(f"{p}: {type(v).__name__} = {_literal(v)}" for p, v in binding.defaults.items())
    call_args = [
        f'        {var}={local[col.table]}["{col.name}"]{_span(col)},' for col, var in tensors.items()
    ]
    call_args += [f"        {a.name}={_relocal(a.code, local)}," for a in host.args.values()]
    result_names = ", ".join(_literal(n) for n, _ in block.outputs) + ("," if len(block.outputs) == 1 else "")

    host_code = host.codes() + "\n".join(call_args)

    imports = ["from __future__ import annotations", ""]
    imports += ["", "import torch", ""]
    if "ops." in "\n".join(body) + host_code:
        imports.append("from evaluator.torchplan import ops")
    encoders = ("add_interval", "date_to_days", "decimal", "parse_date")
    encoding = [n for n in encoders if re.search(rf"\b{n}\b", host_code)]
    if encoding:
        imports.append(f"from evaluator.tpch.encoding import {', '.join(encoding)}")

    columns_code = (
        "COLUMNS = {\n"
        + "".join(
            f'    "{t}": ({", ".join(repr(c) for c in columns[t])}{"," if len(columns[t]) == 1 else ""}),\n'
            for t in tables
        )
        + "}"
    )
    columns_code = columns_code.replace("'", '"')
    strings_code = (
        "STRINGS: dict[str, tuple[str, str]] = {"
        + ", ".join(f'"{n}": ("{t}", "{c}")' for n, (t, c) in strings.items())
        + "}"
    )

    docstring = f'"""{name}: a compiled TorchPlan.\n\n'
    docstring += "Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:\n\n"
    docstring += textwrap.indent(sql.strip().replace("\\", "\\\\"), "") + '\n"""'
    source = "\n".join(
        [
            docstring,
            "",
            "\n".join(imports).replace("\n\n\n", "\n\n"),
            "",
            columns_code,
            "# Result columns holding string positions: a dictionary code or a free-text row index.",
            strings_code,
            "",
            "\n\n\n".join(core.functions.values()),
            "",
            "",
            f"def _query_core(\n{params}\n) -> tuple[torch.Tensor, ...]:",
            '    """The tensor part of the query: columns and scalars in, result columns out."""',
            "\n".join(body),
            "",
            "",
            f"def run_query(tables, {params_sig}) -> dict[str, torch.Tensor]:"
            if params_sig
            else "def run_query(tables) -> dict[str, torch.Tensor]:",
            "\n".join(f'    {local[t]} = tables["{t}"]' for t in tables),
            "    result = _query_core(",
            "\n".join(call_args),
            "    )",
            f"    return dict(zip(({result_names}), result, strict=True))",
            "",
        ]
    )
    return _house_format(re.sub(r"\n{4,}", "\n\n\n", source))


def _span(col: Col) -> str:
    """SUBSTRING's slice of a byte matrix, taken in run_query (a view, no copy)."""
    return "" if col.span is None else f"[:, {col.span[0]}:{col.span[0] + col.span[1]}]"


def _literal(value: object) -> str:
    """A Python literal in the house style (double-quoted strings)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def _relocal(code: str, local: dict[str, str]) -> str:
    """Host code names tables as `<table>.dictionary(...)` / `<table>[...]`: point it at the locals."""
    for table, name in local.items():
        if name != table:
            code = re.sub(rf"\b{table}(?=[.\[])", name, code)
    return code


def _house_format(source: str) -> str:
    """The repository's ruff format (pinned in the dev environment); unformatted where ruff is absent."""
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError:
        return source
    root = Path(__file__).resolve().parents[3]  # pyproject.toml holds the line length
    done = subprocess.run(
        [find_ruff_bin(), "format", "--stdin-filename", "generated.py", "-"],
        input=source,
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    return done.stdout if done.returncode == 0 else source
