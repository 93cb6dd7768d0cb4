"""TPC-H Q13, Customer Distribution: a compiled TorchPlan.

Generated from this SQL by evaluator.torchplan.compiler; regenerate it, do not edit:

SELECT c_count, count(*) AS custdist
FROM (
    SELECT c_custkey, count(o_orderkey)
    FROM customer
    LEFT OUTER JOIN orders ON c_custkey = o_custkey
        AND o_comment NOT LIKE '%special%requests%'
    GROUP BY c_custkey) AS c_orders (c_custkey, c_count)
GROUP BY c_count
ORDER BY custdist DESC, c_count DESC
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "orders": ("o_comment", "o_custkey"),
    "customer": ("c_custkey",),
}
# Result columns holding string positions: a dictionary code or a free-text row index.
STRINGS: dict[str, tuple[str, str]] = {}


def _query_core(
    c_orders_orders_o_comment: torch.Tensor,
    c_orders_orders_o_custkey: torch.Tensor,
    c_orders_c_custkey: torch.Tensor,
    *,
    template0_0: str,
    template0_1: str,
) -> tuple[torch.Tensor, ...]:
    """The tensor part of the query: columns and scalars in, result columns out."""
    # LEFT JOIN orders ... COUNT: its o_custkeys, counted per key.
    c_orders_orders_mask = ~ops.text_contains_in_order(c_orders_orders_o_comment, template0_0, template0_1)
    c_orders_orders_counts = ops.key_counts(c_orders_orders_o_custkey[c_orders_orders_mask])
    # Late materialization: the surviving rows, then only the columns still needed.
    c_orders_rows = torch.arange(c_orders_c_custkey.shape[0], device=c_orders_c_custkey.device)
    c_orders_c_custkey = c_orders_c_custkey[c_orders_rows]
    # GROUP BY ops.count_of(c_orders_c_custkey, c_orders_orders_counts): exact keys, group ids by
    # sorting.
    _, ids = ops.group(ops.count_of(c_orders_c_custkey, c_orders_orders_counts))
    groups = int(ids.max()) + 1 if ids.numel() else 0
    first = ops.group_min(torch.arange(ids.numel(), device=ids.device), ids, groups)  # a row each
    custdist = ops.group_count(ids, groups)
    # The result columns.
    c_count = ops.count_of(c_orders_c_custkey[first], c_orders_orders_counts)
    order = ops.order([(custdist, True), (c_count, True)])
    c_count = c_count[order]
    custdist = custdist[order]
    return (c_count, custdist)


def run_query(tables, word1: str = "special", word2: str = "requests") -> dict[str, torch.Tensor]:
    orders = tables["orders"]
    customer = tables["customer"]
    result = _query_core(
        c_orders_orders_o_comment=orders["o_comment"],
        c_orders_orders_o_custkey=orders["o_custkey"],
        c_orders_c_custkey=customer["c_custkey"],
        template0_0=f"%{word1}%{word2}%".split("%")[1],
        template0_1=f"%{word1}%{word2}%".split("%")[2],
    )
    return dict(zip(("c_count", "custdist"), result, strict=True))
