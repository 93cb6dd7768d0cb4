"""TPC-H Q22, Global Sales Opportunity: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT
    cntrycode,
    count(*) AS numcust,
    sum(c_acctbal) AS totacctbal
FROM (
    SELECT
        CAST(substring(c_phone FROM 1 FOR 2) AS INTEGER) AS cntrycode,
        c_acctbal
    FROM customer
    WHERE substring(c_phone FROM 1 FOR 2)
            IN ('13', '31', '23', '29', '30', '18', '17')
      AND c_acctbal > (
            SELECT avg(c_acctbal)
            FROM customer
            WHERE c_acctbal > 0.00
              AND substring(c_phone FROM 1 FOR 2)
                    IN ('13', '31', '23', '29', '30', '18', '17'))
      AND NOT EXISTS (
            SELECT *
            FROM orders
            WHERE o_custkey = c_custkey)) AS custsale
GROUP BY cntrycode
ORDER BY cntrycode
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "customer": ("c_acctbal", "c_phone", "c_custkey"),
    "orders": ("o_custkey",),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {}


def _scalar0(
    c_acctbal: torch.Tensor,
    c_phone_1_2: torch.Tensor,
    *,
    code1: str,
    code2: str,
    code3: str,
    code4: str,
    code5: str,
    code6: str,
    code7: str,
) -> tuple[torch.Tensor, ...]:
    """An uncorrelated scalar subquery: its one value, a 1-element tensor."""
    # Filters, each on its own table's rows.
    customer_mask = (c_acctbal > 0.0) & ops.text_in(
        c_phone_1_2, (code1, code2, code3, code4, code5, code6, code7)
    )
    # Aggregates over the qualifying rows, without gathering them.
    col_0 = (torch.where(customer_mask, c_acctbal, 0.0).sum() / customer_mask.sum()).reshape(1)
    # The result columns.
    return (col_0,)


def _query_core(
    c_acctbal: torch.Tensor,
    c_phone_1_2: torch.Tensor,
    c_custkey: torch.Tensor,
    u_1_orders_o_custkey: torch.Tensor,
    *,
    code1: str,
    code2: str,
    code3: str,
    code4: str,
    code5: str,
    code6: str,
    code7: str,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    (scalar0,) = _scalar0(
        c_acctbal,
        c_phone_1_2,
        code1=code1,
        code2=code2,
        code3=code3,
        code4=code4,
        code5=code5,
        code6=code6,
        code7=code7,
    )
    # Filters, each on its own table's rows.
    customer_mask = (scalar0 < c_acctbal) & ops.text_in(
        c_phone_1_2, (code1, code2, code3, code4, code5, code6, code7)
    )
    # NOT EXISTS / NOT IN: membership of c_custkey among the subquery's o_custkey.
    customer_mask &= ~ops.member(c_custkey, of=u_1_orders_o_custkey)
    # Late materialization: the surviving rows, then only the columns still needed.
    customer_rows = torch.nonzero(customer_mask).squeeze(1)
    c_acctbal = c_acctbal[customer_rows]
    c_phone_1_2 = c_phone_1_2[customer_rows]
    # GROUP BY ops.text_digits(c_phone_1_2): exact keys, group ids by sorting.
    _, ids = ops.group(ops.text_digits(c_phone_1_2))
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    numcust = ops.group_count(ids, groups)
    totacctbal = ops.group_sum(c_acctbal, ids, groups)
    # The result columns.
    cntrycode = ops.text_digits(c_phone_1_2[first])
    order = ops.order([(cntrycode, False)])
    cntrycode = cntrycode[order]
    numcust = numcust[order]
    totacctbal = totacctbal[order]
    return (cntrycode, numcust, totacctbal)


def run_query(
    tables,
    code1: str = "13",
    code2: str = "31",
    code3: str = "23",
    code4: str = "29",
    code5: str = "30",
    code6: str = "18",
    code7: str = "17",
) -> dict[str, torch.Tensor]:
    customer = tables["customer"]
    orders = tables["orders"]
    result = _query_core(
        c_acctbal=customer["c_acctbal"],
        c_phone_1_2=customer["c_phone"][:, 0:2],
        c_custkey=customer["c_custkey"],
        u_1_orders_o_custkey=orders["o_custkey"],
        code1=code1,
        code2=code2,
        code3=code3,
        code4=code4,
        code5=code5,
        code6=code6,
        code7=code7,
    )
    return dict(zip(("cntrycode", "numcust", "totacctbal"), result, strict=True))
