"""Load cached columns onto a device as the `tables` object a TorchPlan receives."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import torch

from evaluator.errors import EvaluatorError
from evaluator.tpch.generate import FORMAT_VERSION


class Table(dict):
    """Column name -> 1-D tensor on the device; `rows` and `dictionary(column)` for decoding."""

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


def read_meta(sf_folder: Path) -> dict:
    path = Path(sf_folder) / "meta.json"
    if not path.exists():
        raise EvaluatorError(f"no TPC-H data at {sf_folder}: run `python -m evaluator prepare` first")
    meta = json.loads(path.read_text())
    if meta.get("format_version") != FORMAT_VERSION:
        raise EvaluatorError(f"{path} has cache format {meta.get('format_version')}, need {FORMAT_VERSION}")
    return meta


def load_tables(
    sf_folder: Path, columns: Mapping[str, Iterable[str]], device: str | torch.device = "cpu"
) -> Tables:
    """Load only the named columns of the named tables onto `device`."""
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
