"""TPC-H Q10, Returned Item Reporting: a TorchPlan.

SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue, c_acctbal, n_name,
       c_address, c_phone, c_comment
FROM customer, orders, lineitem, nation
WHERE c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND o_orderdate >= DATE ':date'
  AND o_orderdate < DATE ':date' + INTERVAL '3' MONTH
  AND l_returnflag = 'R'
  AND c_nationkey = n_nationkey
GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
ORDER BY revenue DESC
LIMIT 20

The group key is c_custkey (the other GROUP BY columns depend on it): qualifying orders map their key to
their customer, lineitem rows gather that customer, and only the few qualifying rows are scattered into
a dense per-customer revenue array; the top 20 customers are then joined to their columns.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import date_to_days

COLUMNS = {
    "customer": ("c_custkey", "c_name", "c_acctbal", "c_nationkey", "c_address", "c_phone", "c_comment"),
    "orders": ("o_orderkey", "o_custkey", "o_orderdate"),
    "lineitem": ("l_orderkey", "l_returnflag", "l_extendedprice", "l_discount"),
    "nation": ("n_nationkey", "n_name"),
}

LIMIT = 20


def _query_core(
    c_custkey: torch.Tensor,
    c_acctbal: torch.Tensor,
    c_nationkey: torch.Tensor,
    o_orderkey: torch.Tensor,
    o_custkey: torch.Tensor,
    o_orderdate: torch.Tensor,
    l_orderkey: torch.Tensor,
    l_returnflag: torch.Tensor,
    l_extendedprice: torch.Tensor,
    l_discount: torch.Tensor,
    n_nationkey: torch.Tensor,
    n_name: torch.Tensor,
    returned: int,
    date_lo: int,
    date_hi: int,
    order_key_space: int,
    customer_key_space: int,
    nation_key_space: int,
) -> dict[str, torch.Tensor]:
    """The result columns; free-text columns as customer row indices, n_name as its code."""
    device = l_orderkey.device
    # Customer of each qualifying order, 0 (no customer has that key) for the others.
    in_range = (o_orderdate >= date_lo) & (o_orderdate < date_hi)
    order_customer = torch.zeros(order_key_space, dtype=torch.int64, device=device)
    order_customer[o_orderkey] = torch.where(in_range, o_custkey, 0)

    customer = order_customer[l_orderkey]
    keep = (customer > 0) & (l_returnflag == returned)
    # Compact before scattering: scatter-adding every row (zeros included) would pile float64 atomics
    # onto one address. The qualifying rows are about 1% of lineitem.
    rows = keep.nonzero().squeeze(1)
    volume = l_extendedprice[rows] * (1 - l_discount[rows])
    revenue = torch.zeros(customer_key_space, dtype=torch.float64, device=device)
    revenue.index_add_(0, customer[rows], volume)

    top = torch.topk(revenue, min(LIMIT, customer_key_space)).indices
    # Every qualifying row adds a positive amount: a customer without rows has revenue 0 and no group.
    top = top[revenue[top] > 0]
    c_row = ops.lookup(ops.key_index(c_custkey, customer_key_space), top)
    n_row = ops.lookup(ops.key_index(n_nationkey, nation_key_space), c_nationkey[c_row])
    return {
        "c_custkey": c_custkey[c_row],
        "c_name": c_row,
        "revenue": revenue[top],
        "c_acctbal": c_acctbal[c_row],
        "n_name": n_name[n_row].long(),
        "c_address": c_row,
        "c_phone": c_row,
        "c_comment": c_row,
    }


def run_query(tables, date: str = "1993-10-01"):
    customer, orders, lineitem, nation = (tables[t] for t in ("customer", "orders", "lineitem", "nation"))
    year, month, day = (int(part) for part in date.split("-"))
    later = month - 1 + 3
    return _query_core(
        customer["c_custkey"],
        customer["c_acctbal"],
        customer["c_nationkey"],
        orders["o_orderkey"],
        orders["o_custkey"],
        orders["o_orderdate"],
        lineitem["l_orderkey"],
        lineitem["l_returnflag"],
        lineitem["l_extendedprice"],
        lineitem["l_discount"],
        nation["n_nationkey"],
        nation["n_name"],
        returned=ops.dictionary_code(lineitem.dictionary("l_returnflag"), "R"),
        date_lo=date_to_days(year, month, day),
        date_hi=date_to_days(year + later // 12, later % 12 + 1, day),
        # dbgen's sparse order keys (mk_sparse) never exceed 4 x the order count; customer keys are
        # 1..N, nation keys 0..N-1.
        order_key_space=4 * orders.rows + 1,
        customer_key_space=customer.rows + 1,
        nation_key_space=nation.rows,
    )
