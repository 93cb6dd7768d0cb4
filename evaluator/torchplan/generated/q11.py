"""TPC-H Q11, Important Stock Identification: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value
FROM partsupp, supplier, nation
WHERE ps_suppkey = s_suppkey
  AND s_nationkey = n_nationkey
  AND n_name = 'GERMANY'
GROUP BY ps_partkey
HAVING sum(ps_supplycost * ps_availqty) > (
    SELECT sum(ps_supplycost * ps_availqty) * 0.0001000000
    FROM partsupp, supplier, nation
    WHERE ps_suppkey = s_suppkey
      AND s_nationkey = n_nationkey
      AND n_name = 'GERMANY')
ORDER BY value DESC
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "nation": ("n_name", "n_nationkey"),
    "supplier": ("s_suppkey", "s_nationkey"),
    "partsupp": ("ps_suppkey", "ps_availqty", "ps_supplycost", "ps_partkey"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {}


def _scalar0(
    n_name: torch.Tensor,
    s_suppkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    n_nationkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    ps_availqty: torch.Tensor,
    ps_supplycost: torch.Tensor,
    *,
    nation: int,
    fraction: float,
) -> tuple[torch.Tensor, ...]:
    """An uncorrelated scalar subquery: its one value, a 1-element tensor."""
    # Filters, each on its own table's rows.
    nation_mask = n_name == nation
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    partsupp_supplier = ops.lookup(ops.key_index(s_suppkey), ps_suppkey)
    supplier_nation = ops.lookup(ops.key_index(n_nationkey), s_nationkey)
    supplier_mask = (supplier_nation >= 0) & nation_mask[supplier_nation]
    partsupp_mask = (partsupp_supplier >= 0) & supplier_mask[partsupp_supplier]
    # Late materialization: the surviving rows, then only the columns still needed.
    partsupp_rows = torch.nonzero(partsupp_mask).squeeze(1)
    ps_availqty = ps_availqty[partsupp_rows]
    ps_supplycost = ps_supplycost[partsupp_rows]
    # Aggregates over the joined rows.
    # Over no rows SUM, AVG, MIN and MAX are SQL's NULL: NaN (docs/data-format.md).
    sql_null = torch.full((1,), torch.nan, dtype=torch.float64, device=partsupp_rows.device)
    agg0 = (ps_supplycost * ps_availqty).sum().reshape(1) if partsupp_rows.numel() else sql_null
    # The result columns.
    col_0 = agg0 * fraction
    return (col_0,)


def _query_core(
    n_name: torch.Tensor,
    n_nationkey: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    ps_availqty: torch.Tensor,
    ps_supplycost: torch.Tensor,
    ps_partkey: torch.Tensor,
    *,
    nation: int,
    fraction: float,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    (scalar0,) = _scalar0(
        n_name,
        s_suppkey,
        ps_suppkey,
        n_nationkey,
        s_nationkey,
        ps_availqty,
        ps_supplycost,
        nation=nation,
        fraction=fraction,
    )
    # Filters, each on its own table's rows.
    nation_mask = n_name == nation
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    partsupp_supplier = ops.lookup(ops.key_index(s_suppkey), ps_suppkey)
    supplier_nation = ops.lookup(ops.key_index(n_nationkey), s_nationkey)
    supplier_mask = (supplier_nation >= 0) & nation_mask[supplier_nation]
    partsupp_mask = (partsupp_supplier >= 0) & supplier_mask[partsupp_supplier]
    # Late materialization: the surviving rows, then only the columns still needed.
    partsupp_rows = torch.nonzero(partsupp_mask).squeeze(1)
    ps_availqty = ps_availqty[partsupp_rows]
    ps_partkey = ps_partkey[partsupp_rows]
    ps_supplycost = ps_supplycost[partsupp_rows]
    # GROUP BY ps_partkey: exact keys, group ids by sorting.
    _, ids = ops.group(ps_partkey)
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    value = ops.group_sum(ps_supplycost * ps_availqty, ids, groups)
    # The result columns.
    ps_partkey = ps_partkey[first]
    keep = torch.nonzero(scalar0 < value).squeeze(1)
    ps_partkey = ps_partkey[keep]
    value = value[keep]
    order = ops.order([(value, True)])
    ps_partkey = ps_partkey[order]
    value = value[order]
    return (ps_partkey, value)


def run_query(tables, nation: str = "GERMANY", fraction: str = "0.0001000000") -> dict[str, torch.Tensor]:
    nation_table = tables["nation"]
    supplier = tables["supplier"]
    partsupp = tables["partsupp"]
    result = _query_core(
        n_name=nation_table["n_name"],
        n_nationkey=nation_table["n_nationkey"],
        s_suppkey=supplier["s_suppkey"],
        s_nationkey=supplier["s_nationkey"],
        ps_suppkey=partsupp["ps_suppkey"],
        ps_availqty=partsupp["ps_availqty"],
        ps_supplycost=partsupp["ps_supplycost"],
        ps_partkey=partsupp["ps_partkey"],
        nation=ops.dictionary_code(nation_table.dictionary("n_name"), nation),
        fraction=float(fraction),
    )
    return dict(zip(("ps_partkey", "value"), result, strict=True))
