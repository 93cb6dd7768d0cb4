"""TPC-H Q18, Large Volume Customer: a TorchPlan.

SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
FROM customer, orders, lineitem
WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > :quantity)
  AND c_custkey = o_custkey
  AND o_orderkey = l_orderkey
GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
ORDER BY o_totalprice DESC, o_orderdate
LIMIT 100

The outer GROUP BY is by order (o_orderkey is the orders' key), and its sum(l_quantity) is the same
per-order sum the IN subquery computes: one scatter-add of quantities over the orderkey space serves
both. Quantities are whole numbers, so the sums are exact in int32 and the HAVING test is exact. The
surviving orders (a few hundred at SF10) are the only rows gathered and sorted.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "customer": ("c_custkey", "c_name"),
    "orders": ("o_orderkey", "o_custkey", "o_orderdate", "o_totalprice"),
    "lineitem": ("l_orderkey", "l_quantity"),
}

LIMIT = 100


def _query_core(
    c_custkey: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    o_orderdate: torch.Tensor,
    o_totalprice: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_quantity: torch.Tensor,
    orderkey_space: int,
    quantity: int,
) -> tuple[torch.Tensor, ...]:
    """c_name (customer row), c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity).

    `orderkey_space` is max(o_orderkey) + 1.
    """
    quantity_by_key = torch.zeros(orderkey_space, dtype=torch.int32, device=l_orderkey.device)
    quantity_by_key.index_add_(0, l_orderkey, l_quantity.to(torch.int32))
    order_quantity = quantity_by_key[o_orderkey]
    rows = torch.nonzero(order_quantity > quantity).squeeze(1)  # output size depends on the data
    top = ops.order([(o_totalprice[rows], True), (o_orderdate[rows], False)], limit=LIMIT)
    rows = rows[top]
    custkey = o_custkey[rows]
    customer_row = ops.lookup(ops.key_index(c_custkey, c_custkey.numel() + 1), custkey)
    return (
        customer_row,
        custkey,
        o_orderkey[rows],
        o_orderdate[rows],
        o_totalprice[rows],
        order_quantity[rows].to(torch.float64),
    )


def run_query(tables, quantity: int = 300):
    customer, orders, lineitem = tables["customer"], tables["orders"], tables["lineitem"]
    o_orderkey = orders["o_orderkey"]
    result = _query_core(
        customer["c_custkey"],
        o_orderkey,
        orders["o_custkey"],
        orders["o_orderdate"],
        orders["o_totalprice"],
        lineitem["l_orderkey"],
        lineitem["l_quantity"],
        orderkey_space=int(o_orderkey.max().item()) + 1,
        quantity=quantity,
    )
    names = ("c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice", "sum(l_quantity)")
    return dict(zip(names, result, strict=True))
