"""Assemble the emitted module: docstring with the SQL, imports, COLUMNS, helpers, core, run_query."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

from evaluator.torchplan.compiler.emit import CoreEmitter
from evaluator.torchplan.compiler.emit_host import HostArgs
from evaluator.torchplan.compiler.ir import Block, Col
from evaluator.torchplan.compiler.params import Binding
from evaluator.torchplan.compiler.schema import Kind

_ADD_INTERVAL = '''
def _add_interval(days: int, amount: int, unit: str) -> int:
    """DATE + INTERVAL on the host, in days since 1970-01-01; a month end clamps, as in DuckDB.

    Integer civil-date arithmetic, not datetime: run_query runs under torch.compile, and Dynamo traced
    datetime into a guard that failed (evaluator/tpch/encoding.py).
    """
    if unit == "day":
        return days + amount
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    months = (yoe + era * 400 + (month <= 2)) * 12 + month - 1 + amount * (12 if unit == "year" else 1)
    year, month = months // 12, months % 12 + 1
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    last = 29 if month == 2 and leap else 28 if month == 2 else 30 if month in (4, 6, 9, 11) else 31
    return date_to_days(year, month, min(day, last))
'''

_LIKE = '''
def _like(pattern: str) -> Callable[[str], bool]:
    """SQL LIKE for dictionary entries on the host: '%' is any run of characters, '_' any one."""
    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.compile(regex, re.DOTALL).fullmatch
'''

_YEAR = '''
def _year(days: torch.Tensor) -> torch.Tensor:
    """EXTRACT(YEAR) of int32 days since 1970-01-01, by integer civil-date arithmetic on the device."""
    z = days.long() + 719468
    era = torch.div(z, 146097, rounding_mode="floor")
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    return yoe + era * 400 + ((5 * doy + 2) // 153 >= 10).long()
'''


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

    tensor_params = [f"    {var}: torch.Tensor," for var in tensors.values()]
    scalar_params = [f"    {a.name}: {a.annotation}," for a in host.args.values()]
    signature = "\n".join(tensor_params + (["    *,"] if scalar_params else []) + scalar_params)
    params_sig = ", ".join(f"{p}: {type(v).__name__} = {_literal(v)}" for p, v in binding.defaults.items())
    call_args = [f'        {var}={local[col.table]}["{col.name}"],' for col, var in tensors.items()]
    call_args += [f"        {a.name}={_relocal(a.code, local)}," for a in host.args.values()]
    result_names = ", ".join(_literal(n) for n, _ in block.outputs) + ("," if len(block.outputs) == 1 else "")

    helpers_code = ""
    host_code = host.codes() + "\n".join(call_args)
    uses_interval = "_add_interval(" in host_code
    if uses_interval:
        helpers_code += _ADD_INTERVAL
    if host.uses_like:
        helpers_code += _LIKE
    if core.uses_year:
        helpers_code += _YEAR

    imports = ["from __future__ import annotations", ""]
    if host.uses_like:
        imports += ["import re", "from collections.abc import Callable"]
    imports += ["", "import torch", ""]
    if "ops." in "\n".join(body) + host_code:
        imports.append("from evaluator.torchplan import ops")
    names = ("date_to_days", "decimal", "parse_date")
    encoding = [n for n in names if re.search(rf"\b{n}\b", host_code + helpers_code)]
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
    strings_code = "STRINGS = {" + ", ".join(f'"{n}": ("{t}", "{c}")' for n, (t, c) in strings.items()) + "}"

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
            ("\n" + helpers_code.rstrip() + "\n") if helpers_code else "",
            "",
            f"def _query_core(\n{signature}\n) -> tuple[torch.Tensor, ...]:",
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
