"""TPC-H Q20, Potential Part Promotion: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT s_name, s_address
FROM supplier, nation
WHERE s_suppkey IN (
        SELECT ps_suppkey
        FROM partsupp
        WHERE ps_partkey IN (
                SELECT p_partkey
                FROM part
                WHERE p_name LIKE 'forest%')
          AND ps_availqty > (
                SELECT 0.5 * sum(l_quantity)
                FROM lineitem
                WHERE l_partkey = ps_partkey
                  AND l_suppkey = ps_suppkey
                  AND l_shipdate >= DATE '1994-01-01'
                  AND l_shipdate < DATE '1994-01-01' + INTERVAL 1 YEAR))
  AND s_nationkey = n_nationkey
  AND n_name = 'CANADA'
ORDER BY s_name
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import add_interval, parse_date

COLUMNS = {
    "lineitem": ("l_shipdate", "l_partkey", "l_quantity", "l_suppkey"),
    "part": ("p_name", "p_partkey"),
    "partsupp": ("ps_partkey", "ps_suppkey", "ps_availqty"),
    "nation": ("n_name", "n_nationkey"),
    "supplier": ("s_nationkey", "s_suppkey", "s_name"),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {
    "s_name": ("supplier", "s_name"),
    "s_address": ("supplier", "s_address"),
}


def _sub0(
    l_shipdate: torch.Tensor,
    l_partkey: torch.Tensor,
    l_quantity: torch.Tensor,
    l_suppkey: torch.Tensor,
    *,
    date_plus_1_year: int,
    date: int,
) -> tuple[torch.Tensor, ...]:
    """A grouped subquery: one row per l_partkey, l_suppkey."""
    # Filters, each on its own table's rows.
    lineitem_mask = (l_shipdate < date_plus_1_year) & (l_shipdate >= date)
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    l_partkey = l_partkey[lineitem_rows]
    l_quantity = l_quantity[lineitem_rows]
    l_suppkey = l_suppkey[lineitem_rows]
    key0 = l_partkey
    key0 = key0 - key0.min()
    key1 = l_suppkey
    key1 = key1 - key1.min()
    # GROUP BY l_partkey, l_suppkey: exact keys, group ids by sorting.
    _, ids = ops.group(ops.pack([key0, key1], [int(key0.max()) + 1, int(key1.max()) + 1]))
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    agg0 = ops.group_sum(l_quantity, ids, groups)
    # The result columns.
    agg0 = 0.5 * agg0
    l_partkey = l_partkey[first]
    l_suppkey = l_suppkey[first]
    return (agg0, l_partkey, l_suppkey)


def _sub0_2(
    l_shipdate: torch.Tensor,
    l_partkey: torch.Tensor,
    l_quantity: torch.Tensor,
    l_suppkey: torch.Tensor,
    u_0_part_p_name: torch.Tensor,
    u_0_part_p_partkey: torch.Tensor,
    ps_partkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    ps_availqty: torch.Tensor,
    *,
    date_plus_1_year: int,
    date: int,
    template0_0: str,
) -> tuple[torch.Tensor, ...]:
    """A grouped subquery: one row per ps_suppkey."""
    # Subquery sub0: grouped by l_partkey, l_suppkey, one row per key.
    (
        sub0_agg0,
        sub0_l_partkey,
        sub0_l_suppkey,
    ) = _sub0(l_shipdate, l_partkey, l_quantity, l_suppkey, date_plus_1_year=date_plus_1_year, date=date)
    # Filters, each on its own table's rows.
    # EXISTS / IN: membership of ps_partkey among the subquery's p_partkey.
    u_0_part_mask = ops.text_prefix(u_0_part_p_name, template0_0)
    partsupp_mask = ops.member(ps_partkey, of=u_0_part_p_partkey[u_0_part_mask])
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    sub0_partsupp = ops.lookup_composite([ps_partkey, ps_suppkey], [sub0_l_partkey, sub0_l_suppkey])
    sub0_mask = (sub0_partsupp >= 0) & partsupp_mask[sub0_partsupp]
    # Late materialization: the surviving rows, then only the columns still needed.
    sub0_rows = torch.nonzero(sub0_mask).squeeze(1)
    partsupp_rows = sub0_partsupp[sub0_rows]
    sub0_agg0 = sub0_agg0[sub0_rows]
    ps_availqty = ps_availqty[partsupp_rows]
    ps_suppkey = ps_suppkey[partsupp_rows]
    # Conditions across tables, on the joined rows.
    keep = torch.nonzero(sub0_agg0 < ps_availqty).squeeze(1)
    ps_availqty = ps_availqty[keep]
    ps_suppkey = ps_suppkey[keep]
    sub0_agg0 = sub0_agg0[keep]
    partsupp_rows = partsupp_rows[keep]
    sub0_rows = sub0_rows[keep]
    # GROUP BY ps_suppkey: exact keys, group ids by sorting.
    _, ids = ops.group(ps_suppkey)
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    # The result columns.
    ps_suppkey = ps_suppkey[first]
    return (ps_suppkey,)


def _query_core(
    l_shipdate: torch.Tensor,
    l_partkey: torch.Tensor,
    l_quantity: torch.Tensor,
    l_suppkey: torch.Tensor,
    u_0_part_p_name: torch.Tensor,
    u_0_part_p_partkey: torch.Tensor,
    ps_partkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    ps_availqty: torch.Tensor,
    n_name: torch.Tensor,
    n_nationkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_name: torch.Tensor,
    *,
    date_plus_1_year: int,
    date: int,
    template0_0: str,
    nation: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Subquery sub0: grouped by ps_suppkey, one row per key.
    (sub0_ps_suppkey,) = _sub0_2(
        l_shipdate,
        l_partkey,
        l_quantity,
        l_suppkey,
        u_0_part_p_name,
        u_0_part_p_partkey,
        ps_partkey,
        ps_suppkey,
        ps_availqty,
        date_plus_1_year=date_plus_1_year,
        date=date,
        template0_0=template0_0,
    )
    # Filters, each on its own table's rows.
    nation_mask = n_name == nation
    # PK-FK joins: the row of the referenced table for each referencing row (-1: none).
    supplier_nation = ops.lookup(ops.key_index(n_nationkey), s_nationkey)
    supplier_sub0 = ops.lookup(ops.key_index(sub0_ps_suppkey), s_suppkey)
    supplier_mask = supplier_sub0 >= 0
    supplier_mask &= (supplier_nation >= 0) & nation_mask[supplier_nation]
    # Late materialization: the surviving rows, then only the columns still needed.
    supplier_rows = torch.nonzero(supplier_mask).squeeze(1)
    sort_text0 = s_name[supplier_rows]  # ORDER BY text
    # The result columns.
    s_name = supplier_rows
    s_address = supplier_rows
    order = ops.order([*ops.text_order_keys(sort_text0, descending=False)])
    s_name = s_name[order]
    s_address = s_address[order]
    return (s_name, s_address)


def run_query(
    tables, color: str = "forest", date: str = "1994-01-01", nation: str = "CANADA"
) -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    part = tables["part"]
    partsupp = tables["partsupp"]
    nation_table = tables["nation"]
    supplier = tables["supplier"]
    result = _query_core(
        l_shipdate=lineitem["l_shipdate"],
        l_partkey=lineitem["l_partkey"],
        l_quantity=lineitem["l_quantity"],
        l_suppkey=lineitem["l_suppkey"],
        u_0_part_p_name=part["p_name"],
        u_0_part_p_partkey=part["p_partkey"],
        ps_partkey=partsupp["ps_partkey"],
        ps_suppkey=partsupp["ps_suppkey"],
        ps_availqty=partsupp["ps_availqty"],
        n_name=nation_table["n_name"],
        n_nationkey=nation_table["n_nationkey"],
        s_nationkey=supplier["s_nationkey"],
        s_suppkey=supplier["s_suppkey"],
        s_name=supplier["s_name"],
        date_plus_1_year=add_interval(parse_date(date), 1, "year"),
        date=parse_date(date),
        template0_0=f"{color}%".split("%")[0],
        nation=ops.dictionary_code(nation_table.dictionary("n_name"), nation),
    )
    return dict(zip(("s_name", "s_address"), result, strict=True))
