"""TPC-H Q22, Global Sales Opportunity: a TorchPlan.

SELECT cntrycode, count(*) AS numcust, sum(c_acctbal) AS totacctbal
FROM (SELECT CAST(substring(c_phone FROM 1 FOR 2) AS INTEGER) AS cntrycode, c_acctbal
      FROM customer
      WHERE substring(c_phone FROM 1 FOR 2) IN (':code1', ..., ':code7')
        AND c_acctbal > (SELECT avg(c_acctbal) FROM customer
                         WHERE c_acctbal > 0.00
                           AND substring(c_phone FROM 1 FOR 2) IN (':code1', ..., ':code7'))
        AND NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)) AS custsale
GROUP BY cntrycode
ORDER BY cntrycode

The two leading phone bytes index a 100-entry table (the IN list's slot, -1 for none); the scalar AVG
is a 0-d tensor; NOT EXISTS is a bitmap over custkeys scattered from o_custkey. The group-by has at
most 7 groups, one per slot of the IN list, so the sums are per-slot masked reductions.

DuckDB's AVG of a DECIMAL divides the exact scaled sum by the count; the sum here is exact too (int64
cents), so the threshold is the same double and `c_acctbal > avg` is decided as DuckDB decides it.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "customer": ("c_custkey", "c_phone", "c_acctbal"),
    "orders": ("o_custkey",),
}


def _query_core(
    c_custkey: torch.Tensor,
    c_phone: torch.Tensor,
    c_acctbal: torch.Tensor,
    o_custkey: torch.Tensor,
    slot_of_code: torch.Tensor,
    code_of_slot: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """cntrycode (int64), numcust, totacctbal for the slots with customers, by cntrycode.

    `slot_of_code[10 * d0 + d1]` is the IN-list slot (ordered by code) of a phone starting with the
    digits d0 d1, or -1; `code_of_slot` is its inverse. Phones start with two digits (spec 4.2.2.9).
    """
    slots = code_of_slot.numel()
    digits = c_phone[:, :2].long() - ord("0")
    code = (digits[:, 0] * 10 + digits[:, 1]).clamp(0, 99)
    slot = slot_of_code[code]
    listed = slot >= 0
    cents = torch.round(c_acctbal * 100).to(torch.int64)
    positive = listed & (cents > 0)
    # Exact sum and count -> the same correctly rounded double DuckDB's AVG gives (0/0 = NaN: no row).
    average = cents.where(positive, 0).sum().double() / (positive.sum() * 100).double()
    has_orders = ops.member(c_custkey, c_custkey.numel() + 1, of=o_custkey)
    keep = listed & (c_acctbal > average) & ~has_orders
    ids = torch.where(keep, slot, slots)  # slot `slots` collects the rows that are not kept
    numcust = ops.group_count(ids, slots + 1)[:slots]
    total_cents = ops.group_sum(cents.where(keep, 0), ids.where(keep, 0), slots)
    present = (numcust > 0).nonzero().squeeze(1)  # output size depends on the data
    return code_of_slot[present], numcust[present], total_cents[present].double() / 100


def run_query(
    tables,
    code1: str = "13",
    code2: str = "31",
    code3: str = "23",
    code4: str = "29",
    code5: str = "30",
    code6: str = "18",
    code7: str = "17",
):
    customer, orders = tables["customer"], tables["orders"]
    codes = sorted({int(c) for c in (code1, code2, code3, code4, code5, code6, code7)})
    slot_of_code = [-1] * 100
    for slot, code in enumerate(codes):
        slot_of_code[code] = slot
    device = customer["c_phone"].device
    cntrycode, numcust, totacctbal = _query_core(
        customer["c_custkey"],
        customer["c_phone"],
        customer["c_acctbal"],
        orders["o_custkey"],
        slot_of_code=torch.tensor(slot_of_code, dtype=torch.int64, device=device),
        code_of_slot=torch.tensor(codes, dtype=torch.int64, device=device),
    )
    return {"cntrycode": cntrycode, "numcust": numcust, "totacctbal": totacctbal}
