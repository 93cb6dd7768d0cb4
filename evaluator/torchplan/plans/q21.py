"""TPC-H Q21, Suppliers Who Kept Orders Waiting: a TorchPlan.

SELECT s_name, count(*) AS numwait
FROM supplier, lineitem l1, orders, nation
WHERE s_suppkey = l1.l_suppkey AND o_orderkey = l1.l_orderkey AND o_orderstatus = 'F'
  AND l1.l_receiptdate > l1.l_commitdate
  AND EXISTS (SELECT * FROM lineitem l2
              WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)
  AND NOT EXISTS (SELECT * FROM lineitem l3
                  WHERE l3.l_orderkey = l1.l_orderkey AND l3.l_suppkey <> l1.l_suppkey
                    AND l3.l_receiptdate > l3.l_commitdate)
  AND s_nationkey = n_nationkey AND n_name = ':nation'
GROUP BY s_name
ORDER BY numwait DESC, s_name
LIMIT 100

The `<>` correlations become per-order extremes. l1's supplier is one of its order's suppliers, so
another supplier exists exactly when the order's minimum and maximum suppkey differ; l1 is late, so no
other supplier was late exactly when the minimum and maximum suppkey over the order's late lines are
equal. Those extremes are needed only for the orders of candidate l1 rows (late, supplier of the
nation, order 'F'): the candidates pick their orders, each order a dense slot, and only the lineitem
rows of those orders are reduced. s_name is unique per supplier ("Supplier#" and the key), so the
group is the supplier.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "nation": ("n_nationkey", "n_name"),
    "supplier": ("s_suppkey", "s_name", "s_nationkey"),
    "orders": ("o_orderkey", "o_orderstatus"),
    "lineitem": ("l_orderkey", "l_suppkey", "l_commitdate", "l_receiptdate"),
}

LIMIT = 100


def _query_core(
    n_nationkey: torch.Tensor,
    n_name: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_name: torch.Tensor,
    s_nationkey: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_orderstatus: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_suppkey: torch.Tensor,
    l_commitdate: torch.Tensor,
    l_receiptdate: torch.Tensor,
    nation: int,
    status: int,
    nation_keys: int,
    supplier_keys: int,
    order_keys: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(supplier row for s_name, numwait) of the first 100 suppliers in ORDER BY order.

    `nation` and `status` are the codes of :nation and 'F'; `*_keys` bound each table's key values.
    """
    device = l_orderkey.device
    nation_ok = torch.zeros(nation_keys, dtype=torch.bool, device=device)
    nation_ok[n_nationkey] = n_name == nation
    supplier_ok = torch.zeros(supplier_keys, dtype=torch.bool, device=device)
    supplier_ok[s_suppkey] = nation_ok[s_nationkey]
    failed = torch.zeros(order_keys, dtype=torch.bool, device=device)
    failed[o_orderkey] = o_orderstatus == status
    late = l_receiptdate > l_commitdate
    candidates = torch.nonzero(late & supplier_ok[l_suppkey] & failed[l_orderkey]).squeeze(1)
    # One dense slot per candidate order: among duplicate keys one write wins, and all read that one.
    slot = torch.full((order_keys,), -1, dtype=torch.int32, device=device)
    slot[l_orderkey[candidates]] = torch.arange(candidates.numel(), dtype=torch.int32, device=device)
    line_slot = slot[l_orderkey]
    lines = torch.nonzero(line_slot >= 0).squeeze(1)
    ids, supplier, line_late = line_slot[lines].long(), l_suppkey[lines], late[lines]
    slots = candidates.numel()
    lowest = ops.group_min(supplier, ids, slots)
    highest = ops.group_max(supplier, ids, slots)
    late_lowest = ops.group_min(torch.where(line_late, supplier, torch.iinfo(supplier.dtype).max), ids, slots)
    late_highest = ops.group_max(
        torch.where(line_late, supplier, torch.iinfo(supplier.dtype).min), ids, slots
    )
    own = line_slot[candidates].long()
    waiting = (lowest[own] != highest[own]) & (late_lowest[own] == late_highest[own])
    numwait = torch.zeros(supplier_keys, dtype=torch.int64, device=device)
    numwait.index_add_(0, l_suppkey[candidates], waiting.long())
    suppkeys = torch.nonzero(numwait).squeeze(1)
    numwait = numwait[suppkeys]
    rows = ops.key_index(s_suppkey, supplier_keys)[suppkeys]
    # topk would do for the count, but ties on it are common: order them all by name, then cut.
    top = ops.order([(numwait, True), *ops.text_order_keys(s_name[rows])], limit=LIMIT)
    return rows[top], numwait[top]


def run_query(tables, nation: str = "SAUDI ARABIA"):
    orders = tables["orders"]
    rows, numwait = _query_core(
        tables["nation"]["n_nationkey"],
        tables["nation"]["n_name"],
        tables["supplier"]["s_suppkey"],
        tables["supplier"]["s_name"],
        tables["supplier"]["s_nationkey"],
        orders["o_orderkey"],
        orders["o_orderstatus"],
        tables["lineitem"]["l_orderkey"],
        tables["lineitem"]["l_suppkey"],
        tables["lineitem"]["l_commitdate"],
        tables["lineitem"]["l_receiptdate"],
        nation=ops.dictionary_code(tables["nation"].dictionary("n_name"), nation),
        status=ops.dictionary_code(orders.dictionary("o_orderstatus"), "F"),
        # TPC-H keys are dense (nation from 0, supplier from 1), except orderkey: dbgen uses 8 of every
        # 32 values, so its max is at most 4 x rows.
        nation_keys=tables["nation"].rows,
        supplier_keys=tables["supplier"].rows + 1,
        order_keys=4 * orders.rows + 1,
    )
    return {"s_name": rows, "numwait": numwait}
