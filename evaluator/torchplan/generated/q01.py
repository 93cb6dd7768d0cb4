"""TPC-H Q1, Pricing Summary Report: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT
    l_returnflag,
    l_linestatus,
    sum(l_quantity) AS sum_qty,
    sum(l_extendedprice) AS sum_base_price,
    sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
    sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
    avg(l_quantity) AS avg_qty,
    avg(l_extendedprice) AS avg_price,
    avg(l_discount) AS avg_disc,
    count(*) AS count_order
FROM lineitem
WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL 90 DAY
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import add_interval, parse_date

COLUMNS = {
    "lineitem": (
        "l_shipdate",
        "l_discount",
        "l_extendedprice",
        "l_linestatus",
        "l_quantity",
        "l_returnflag",
        "l_tax",
    ),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {
    "l_returnflag": ("lineitem", "l_returnflag"),
    "l_linestatus": ("lineitem", "l_linestatus"),
}


def _query_core(
    l_shipdate: torch.Tensor,
    l_discount: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_linestatus: torch.Tensor,
    l_quantity: torch.Tensor,
    l_returnflag: torch.Tensor,
    l_tax: torch.Tensor,
    *,
    v_1998_12_01_minus_delta_day: int,
    l_returnflag_size: int,
    l_linestatus_size: int,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # Filters, each on its own table's rows.
    lineitem_mask = l_shipdate <= v_1998_12_01_minus_delta_day
    # Late materialization: the surviving rows, then only the columns still needed.
    lineitem_rows = torch.nonzero(lineitem_mask).squeeze(1)
    l_discount = l_discount[lineitem_rows]
    l_extendedprice = l_extendedprice[lineitem_rows]
    l_linestatus = l_linestatus[lineitem_rows]
    l_quantity = l_quantity[lineitem_rows]
    l_returnflag = l_returnflag[lineitem_rows]
    l_tax = l_tax[lineitem_rows]
    # GROUP BY l_returnflag, l_linestatus: dense codes over the sorted dictionaries, a slot per
    # combination.
    ids = ops.pack([l_returnflag, l_linestatus], [l_returnflag_size, l_linestatus_size])
    groups = l_returnflag_size * l_linestatus_size
    count_order = ops.group_count(ids, groups)
    sum_qty = ops.group_sum(l_quantity, ids, groups)
    sum_base_price = ops.group_sum(l_extendedprice, ids, groups)
    sum_disc_price = ops.group_sum(l_extendedprice * (1 - l_discount), ids, groups)
    sum_charge = ops.group_sum(l_extendedprice * (1 - l_discount) * (1 + l_tax), ids, groups)
    avg_qty = ops.group_sum(l_quantity, ids, groups) / count_order
    avg_price = ops.group_sum(l_extendedprice, ids, groups) / count_order
    avg_disc = ops.group_sum(l_discount, ids, groups) / count_order
    present = torch.nonzero(count_order > 0).squeeze(1)  # combinations that occur
    l_returnflag = present // l_linestatus_size
    l_linestatus = present % l_linestatus_size
    count_order = count_order[present]
    sum_qty = sum_qty[present]
    sum_base_price = sum_base_price[present]
    sum_disc_price = sum_disc_price[present]
    sum_charge = sum_charge[present]
    avg_qty = avg_qty[present]
    avg_price = avg_price[present]
    avg_disc = avg_disc[present]
    # The result columns.
    l_returnflag = l_returnflag.long()
    l_linestatus = l_linestatus.long()
    order = ops.order([(l_returnflag, False), (l_linestatus, False)])
    l_returnflag = l_returnflag[order]
    l_linestatus = l_linestatus[order]
    sum_qty = sum_qty[order]
    sum_base_price = sum_base_price[order]
    sum_disc_price = sum_disc_price[order]
    sum_charge = sum_charge[order]
    avg_qty = avg_qty[order]
    avg_price = avg_price[order]
    avg_disc = avg_disc[order]
    count_order = count_order[order]
    return (
        l_returnflag,
        l_linestatus,
        sum_qty,
        sum_base_price,
        sum_disc_price,
        sum_charge,
        avg_qty,
        avg_price,
        avg_disc,
        count_order,
    )


def run_query(tables, delta: int = 90) -> dict[str, torch.Tensor]:
    lineitem = tables["lineitem"]
    result = _query_core(
        l_shipdate=lineitem["l_shipdate"],
        l_discount=lineitem["l_discount"],
        l_extendedprice=lineitem["l_extendedprice"],
        l_linestatus=lineitem["l_linestatus"],
        l_quantity=lineitem["l_quantity"],
        l_returnflag=lineitem["l_returnflag"],
        l_tax=lineitem["l_tax"],
        v_1998_12_01_minus_delta_day=add_interval(parse_date("1998-12-01"), -int(delta), "day"),
        l_returnflag_size=len(lineitem.dictionary("l_returnflag")),
        l_linestatus_size=len(lineitem.dictionary("l_linestatus")),
    )
    return dict(
        zip(
            (
                "l_returnflag",
                "l_linestatus",
                "sum_qty",
                "sum_base_price",
                "sum_disc_price",
                "sum_charge",
                "avg_qty",
                "avg_price",
                "avg_disc",
                "count_order",
            ),
            result,
            strict=True,
        )
    )
