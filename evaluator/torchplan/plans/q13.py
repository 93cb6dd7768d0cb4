"""TPC-H Q13, Customer Distribution: a TorchPlan.

SELECT c_count, count(*) AS custdist
FROM (SELECT c_custkey, count(o_orderkey)
      FROM customer LEFT OUTER JOIN orders
        ON c_custkey = o_custkey AND o_comment NOT LIKE '%:word1%:word2%'
      GROUP BY c_custkey) AS c_orders (c_custkey, c_count)
GROUP BY c_count
ORDER BY custdist DESC, c_count DESC

LIKE '%a%b%' on the comments' byte matrix: the first hit of a ends before the last hit of b starts.
Then two histograms: orders per customer key (the LEFT JOIN: a customer without orders counts 0), and
customers per order count. Rows that must not count, and the few order counts every customer falls
into, would pile integer atomics onto a handful of bins; both histograms spread those over copies.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops

COLUMNS = {"customer": ("c_custkey",), "orders": ("o_custkey", "o_comment")}

# Copies of a histogram that rows are spread over, so atomics do not pile onto a few bins.
REPLICAS = 256


def _query_core(
    c_custkey: torch.Tensor,
    o_custkey: torch.Tensor,
    o_comment: torch.Tensor,
    word1: str,
    word2: str,
    customer_keys: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(c_count, custdist) in ORDER BY order."""
    device = o_custkey.device
    counted = ~ops.text_contains_in_order(o_comment, word1, word2)
    # Orders that do not count go to REPLICAS trash bins past the customer keys.
    spread = torch.arange(o_custkey.numel(), device=device) % REPLICAS
    bins = torch.where(counted & (o_custkey < customer_keys), o_custkey, customer_keys + spread)
    orders_per_key = torch.bincount(bins, minlength=customer_keys + REPLICAS)
    c_count = orders_per_key[c_custkey]

    # One sync: the number of distinct order counts is the result's size.
    width = int(c_count.max().item()) + 1 if c_count.numel() else 1
    spread = torch.arange(c_count.numel(), device=device) % REPLICAS
    histogram = torch.bincount(spread * width + c_count, minlength=REPLICAS * width)
    custdist = histogram.view(REPLICAS, width).sum(0)
    present = custdist.nonzero().squeeze(1)
    custdist = custdist[present]
    rows = ops.order([(custdist, True), (present, True)])
    return present[rows], custdist[rows]


def run_query(tables, word1: str = "special", word2: str = "requests"):
    customer, orders = tables["customer"], tables["orders"]
    c_count, custdist = _query_core(
        customer["c_custkey"],
        orders["o_custkey"],
        orders["o_comment"],
        word1=word1,
        word2=word2,
        # Customer keys are dense 1..N.
        customer_keys=customer.rows + 1,
    )
    return {"c_count": c_count, "custdist": custdist}
