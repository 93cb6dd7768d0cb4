"""TPC-H Q3, Shipping Priority: a TorchPlan.

SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority
FROM customer, orders, lineitem
WHERE c_mktsegment = ':segment'
  AND c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND o_orderdate < DATE ':date'
  AND l_shipdate > DATE ':date'
GROUP BY l_orderkey, o_orderdate, o_shippriority
ORDER BY revenue DESC, o_orderdate
LIMIT 10

The customer and order filters become bitmaps over the keys; lineitem rows are gathered only where they
survive (late materialization), then summed per order row (orderkey is the orders' key, so the group is
the order), and the top 10 taken with `topk` plus an exact tie-break at the cut. Key bounds come from
the row counts, so the only host syncs are the compaction and the final cut.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import parse_date

COLUMNS = {
    "customer": ("c_custkey", "c_mktsegment"),
    "orders": ("o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"),
    "lineitem": ("l_orderkey", "l_extendedprice", "l_discount", "l_shipdate"),
}

LIMIT = 10


def _query_core(
    c_custkey: torch.Tensor,
    c_mktsegment: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    o_orderdate: torch.Tensor,
    o_shippriority: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_discount: torch.Tensor,
    l_shipdate: torch.Tensor,
    segment: int,
    date: int,
    custkeys: int,
    orderkeys: int,
) -> tuple[torch.Tensor, ...]:
    """l_orderkey, revenue, o_orderdate, o_shippriority of the top 10 orders, in ORDER BY order.

    `custkeys` and `orderkeys` bound the key values (max key + 1).
    """
    device = o_orderkey.device
    customer_ok = torch.zeros(custkeys, dtype=torch.bool, device=device)
    customer_ok[c_custkey] = c_mktsegment == segment
    order_ok = torch.zeros(orderkeys, dtype=torch.bool, device=device)
    order_ok[o_orderkey] = customer_ok[o_custkey] & (o_orderdate < date)
    lines = torch.nonzero((l_shipdate > date) & order_ok[l_orderkey]).squeeze(1)
    rows = ops.key_index(o_orderkey, orderkeys)[l_orderkey[lines]]
    revenue = torch.zeros(o_orderkey.numel(), dtype=l_extendedprice.dtype, device=device)
    revenue.index_add_(0, rows, l_extendedprice[lines] * (1 - l_discount[lines]))
    hit = torch.zeros(o_orderkey.numel(), dtype=torch.bool, device=device)
    hit[rows] = True
    # Cut at the 10th largest revenue, keeping every order tied with it, then order those exactly.
    score = torch.where(hit, revenue, -torch.inf)
    cut = torch.topk(score, min(LIMIT, score.numel())).values[-1]
    groups = torch.nonzero(hit & (score >= cut)).squeeze(1)
    top = groups[ops.order([(revenue[groups], True), (o_orderdate[groups], False)], limit=LIMIT)]
    return o_orderkey[top], revenue[top], o_orderdate[top], o_shippriority[top]


def run_query(tables, segment: str = "BUILDING", date: str = "1995-03-15"):
    customer, orders, lineitem = tables["customer"], tables["orders"], tables["lineitem"]
    result = _query_core(
        customer["c_custkey"],
        customer["c_mktsegment"],
        orders["o_orderkey"],
        orders["o_custkey"],
        orders["o_orderdate"],
        orders["o_shippriority"],
        lineitem["l_orderkey"],
        lineitem["l_extendedprice"],
        lineitem["l_discount"],
        lineitem["l_shipdate"],
        segment=ops.dictionary_code(customer.dictionary("c_mktsegment"), segment),
        date=parse_date(date),
        custkeys=customer.rows + 1,  # custkey is dense 1..rows
        orderkeys=4 * orders.rows + 1,  # dbgen's sparse orderkeys: 8 of every 32, at most 4 x rows
    )
    return dict(zip(("l_orderkey", "revenue", "o_orderdate", "o_shippriority"), result, strict=True))
