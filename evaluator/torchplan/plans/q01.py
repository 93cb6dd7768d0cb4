"""TPC-H Q1, Pricing Summary Report: a TorchPlan.

SELECT l_returnflag, l_linestatus,
       sum(l_quantity) AS sum_qty,
       sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc,
       count(*) AS count_order
FROM lineitem
WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL ':delta' DAY
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus

The group key is dense: (flag code) * (number of statuses) + (status code), a handful of groups (3 x 2
in TPC-H), so every aggregate is one masked reduction per group (ops.group_sum), never atomics.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import date_to_days

COLUMNS = {
    "lineitem": (
        "l_returnflag",
        "l_linestatus",
        "l_quantity",
        "l_extendedprice",
        "l_discount",
        "l_tax",
        "l_shipdate",
    )
}


def _query_core(
    l_returnflag: torch.Tensor,
    l_linestatus: torch.Tensor,
    l_quantity: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_discount: torch.Tensor,
    l_tax: torch.Tensor,
    l_shipdate: torch.Tensor,
    date_hi: int,
    flags: int,
    statuses: int,
) -> tuple[torch.Tensor, ...]:
    """Per dense group (flag, status), in code order: flag, status, 4 sums, 3 averages and the count.

    Only groups that hold rows are returned (one host sync: the result size depends on the data).
    """
    groups = flags * statuses
    # Rows that fail the WHERE go to group `groups`, which is never reduced.
    ids = torch.where(l_shipdate <= date_hi, l_returnflag * statuses + l_linestatus, groups)
    disc_price = l_extendedprice * (1 - l_discount)
    charge = disc_price * (1 + l_tax)
    sum_qty = ops.group_sum(l_quantity, ids, groups)
    sum_base_price = ops.group_sum(l_extendedprice, ids, groups)
    sum_disc_price = ops.group_sum(disc_price, ids, groups)
    sum_charge = ops.group_sum(charge, ids, groups)
    sum_disc = ops.group_sum(l_discount, ids, groups)
    count = ops.group_count(ids, groups + 1)[:groups]
    present = torch.nonzero(count).squeeze(1)
    count = count[present]
    return (
        present // statuses,
        present % statuses,
        sum_qty[present],
        sum_base_price[present],
        sum_disc_price[present],
        sum_charge[present],
        sum_qty[present] / count,
        sum_base_price[present] / count,
        sum_disc[present] / count,
        count,
    )


def run_query(tables, delta: int = 90):
    lineitem = tables["lineitem"]
    names = (
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
    )
    result = _query_core(
        lineitem["l_returnflag"],
        lineitem["l_linestatus"],
        lineitem["l_quantity"],
        lineitem["l_extendedprice"],
        lineitem["l_discount"],
        lineitem["l_tax"],
        lineitem["l_shipdate"],
        date_hi=date_to_days(1998, 12, 1) - delta,
        flags=len(lineitem.dictionary("l_returnflag")),
        statuses=len(lineitem.dictionary("l_linestatus")),
    )
    return dict(zip(names, result, strict=True))
