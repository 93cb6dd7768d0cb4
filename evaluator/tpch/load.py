"""Load cached columns onto a device as the `tables` object a TorchPlan receives."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from evaluator.errors import EvaluatorError
from evaluator.tpch.generate import FORMAT_VERSION

if TYPE_CHECKING:  # the tables are the runners': the harness reads the cache's metadata only
    import torch


class Table(dict):
    """Column name -> tensor on the device; `rows` and `dictionary(column)` for decoding.

    Columns are 1-D, except free text: a 2-D uint8 [rows, width] matrix, zero-padded.
    """

    def __init__(self, name: str, rows: int, columns: Mapping[str, torch.Tensor], meta: dict) -> None:
        super().__init__(columns)
        self.name = name
        self.rows = rows
        self._meta = meta

    def dictionary(self, column: str) -> list[str]:
        return self._meta["columns"][column]["dictionary"]


class Tables(dict):
    """Table name -> Table. What `run_query(tables, **params)` gets."""

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for table in self.values() for t in table.values())

    def clone(self) -> Tables:
        """Fresh tensor objects with the same contents: a kernel cannot key a cache on their identity."""
        return Tables(
            {
                name: Table(name, t.rows, {c: v.clone() for c, v in t.items()}, t._meta)
                for name, t in self.items()
            }
        )

    def rolled(self, fraction: float) -> Tables:
        """A copy with every column but the keys rolled down, each by its own share of its table's rows
        (`fraction`, then steps of the golden ratio): the same shapes and values, but rows torn apart, so
        other answers (evaluator/harness/fresh.py). One shift for all would only reorder whole rows."""

        import torch

        def roll(values: torch.Tensor, rows: int, step: int) -> torch.Tensor:
            share = (fraction + step * 0.6180339887) % 1.0
            return torch.roll(values, max(1, int(share * rows)), dims=0)

        return Tables(
            {
                name: Table(
                    name,
                    t.rows,
                    {
                        c: v.clone() if c.endswith("key") or t.rows < 2 else roll(v, t.rows, step)
                        for step, (c, v) in enumerate(sorted(t.items()))
                    },
                    t._meta,
                )
                for name, t in self.items()
            }
        )

    def rotated(self, fraction: float) -> Tables:
        """A copy that is still valid TPC-H data: in each table whole rows move up by `fraction` of them
        (then steps of the golden ratio, table by table) while its primary key stays in place, so keys still
        ascend in dbgen's order and every row has other keys. An order's lines move with it, adjacent and in
        their order, under its new key. Filters pass as many rows, joins match as many and carry what
        dbgen correlates (a line ships after its order is placed), so a kernel does the work it does on
        the tables' own content, on bytes it has never seen (evaluator/harness/fresh.py)."""

        import torch

        shares = {name: (fraction + step * 0.6180339887) % 1.0 for step, name in enumerate(sorted(self))}
        result: dict[str, Table] = {}
        lines = self.get("lineitem")
        if lines is not None and "l_orderkey" in lines:
            # Orders and lineitem move by the same number of orders: orders' rows by `moved`, lineitem's by
            # the lines of the first `moved` orders, whose keys are then renamed in ascending order.
            keys = lines["l_orderkey"]
            starts = torch.ones_like(keys, dtype=torch.bool)
            starts[1:] = keys[1:] != keys[:-1]
            order = torch.cumsum(starts, 0) - 1  # each line's order, by place
            orders = int(order[-1]) + 1
            moved = max(1, int(shares["orders" if "orders" in self else "lineitem"] * orders)) % orders
            first_line = int(torch.nonzero(starts).flatten()[moved])
            renamed = keys[starts][(order.roll(-first_line) - moved) % orders]
            result["lineitem"] = _rotate(lines, first_line, {"l_orderkey": renamed})
            if "orders" in self:
                result["orders"] = _rotate(self["orders"], moved, {})
        for name, table in self.items():
            if name not in result:
                result[name] = _rotate(table, int(shares[name] * table.rows), {})
        return Tables(result)


PRIMARY_KEYS = {
    "lineitem": ("l_orderkey",),  # with l_linenumber, which moves with its order's lines
    "orders": ("o_orderkey",),
    "customer": ("c_custkey",),
    "part": ("p_partkey",),
    "supplier": ("s_suppkey",),
    "partsupp": ("ps_partkey", "ps_suppkey"),
    "nation": ("n_nationkey",),
    "region": ("r_regionkey",),
}


def _rotate(table: Table, rows: int, replaced: Mapping[str, torch.Tensor]) -> Table:
    """`table` with every column but its primary key moved up by `rows` (row i holds row i + rows's
    values), `replaced` columns taken as given; every tensor a new one."""
    keys = PRIMARY_KEYS.get(table.name, ())
    columns = {
        c: replaced[c] if c in replaced else v.clone() if c in keys else v.roll(-rows, dims=0)
        for c, v in table.items()
    }
    return Table(table.name, table.rows, columns, table._meta)


def column_bytes(sf_folder: Path, columns: Mapping[str, Iterable[str]]) -> int:
    """Bytes of these columns on the device, from the cache's metadata: what a query reads if it reads
    every row of every column it references."""
    tables = read_meta(sf_folder)["tables"]
    return sum(_width(tables[t], name) * tables[t]["rows"] for t, names in columns.items() for name in names)


def scan_bytes(sf_folder: Path, columns: Mapping[str, Iterable[str]]) -> int:
    """Bytes of one pass over the largest of these tables, its narrowest column: what a kernel must
    read. A selective filter lets a kernel skip the other columns' bytes for rows it drops (a GPU reads
    in 32-byte sectors), so `column_bytes` is no floor; but every row of the largest table must be
    looked at once to know whether it qualifies (unless a kernel finds rows by the data's layout:
    docs/evaluation.md, "Not yet")."""
    tables = read_meta(sf_folder)["tables"]
    largest = max(columns, key=lambda t: tables[t]["rows"])
    return tables[largest]["rows"] * min(_width(tables[largest], name) for name in columns[largest])


def _width(table: Mapping, column: str) -> int:
    info = table["columns"][column]
    return np.dtype(info["dtype"]).itemsize * info.get("width", 1)


def read_meta(sf_folder: Path) -> dict:
    path = Path(sf_folder) / "meta.json"
    if not path.exists():
        raise EvaluatorError(f"no TPC-H data at {sf_folder}: run `python -m evaluator prepare` first")
    meta = json.loads(path.read_text())
    if meta.get("format_version") != FORMAT_VERSION:
        raise EvaluatorError(f"{path} has cache format {meta.get('format_version')}, need {FORMAT_VERSION}")
    return meta


def scale_factor(sf_folder: Path) -> float:
    """The scale factor of a prepared folder, from its metadata."""
    return float(read_meta(sf_folder)["scale_factor"])


def load_tables(
    sf_folder: Path, columns: Mapping[str, Iterable[str]], device: str | torch.device = "cpu"
) -> Tables:
    """Load only the named columns of the named tables onto `device`."""
    import torch

    meta = read_meta(sf_folder)
    tables = Tables()
    for table, names in columns.items():
        table_meta = meta["tables"][table]
        loaded = {}
        for column in names:
            if column not in table_meta["columns"]:
                raise EvaluatorError(f"{table}.{column} is not in the columnar cache")
            array = np.load(Path(sf_folder) / table / f"{column}.npy")
            loaded[column] = torch.from_numpy(array).to(device)
        tables[table] = Table(table, table_meta["rows"], loaded, table_meta)
    return tables


def decode_strings(sf_folder: Path, table: str, column: str, positions: np.ndarray) -> np.ndarray:
    """Strings for result positions: codes into a sorted dictionary, or row indices into free text."""
    info = read_meta(sf_folder)["tables"][table]["columns"][column]
    positions = np.asarray(positions)
    if np.issubdtype(positions.dtype, np.floating) or positions.dtype == np.bool_:
        raise TypeError(f"string column {column!r} must be returned as integer positions")
    if info["encoding"] == "sorted_dictionary":
        dictionary = np.array(info["dictionary"], dtype=str)
        return dictionary[positions]
    if info["encoding"] == "padded_bytes":
        matrix = np.load(Path(sf_folder) / table / f"{column}.npy", mmap_mode="r")
        rows = np.ascontiguousarray(matrix[positions]).view(f"S{info['width']}").reshape(-1)
        return rows.astype(str)
    raise EvaluatorError(f"{table}.{column} is not a string column")
