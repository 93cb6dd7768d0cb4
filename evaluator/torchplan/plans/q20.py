"""TPC-H Q20, Potential Part Promotion: a TorchPlan.

SELECT s_name, s_address
FROM supplier, nation
WHERE s_suppkey IN (
        SELECT ps_suppkey FROM partsupp
        WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE ':color%')
          AND ps_availqty > (SELECT 0.5 * sum(l_quantity) FROM lineitem
                             WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey
                               AND l_shipdate >= DATE ':date'
                               AND l_shipdate < DATE ':date' + INTERVAL '1' YEAR))
  AND s_nationkey = n_nationkey
  AND n_name = ':nation'
ORDER BY s_name

Only suppliers of the nation can be in the answer, so the nation filter is pushed into the IN
subquery: candidate partsupp rows are those of a ':color%' part and a supplier of the nation, and the
correlated SUM is needed only for them. Both the candidate partsupp rows and the lineitem rows that can
reach them are compacted (a few thousand at SF10 out of 8M and 60M), then joined on the composite key
(partkey, suppkey) by sort + searchsorted, summed per partsupp row, and tested exactly in integers:
`availqty > 0.5 * sum` is `2 * availqty > sum` (quantities are whole numbers). A pair without lineitem
rows has a NULL sum and fails the test, as in SQL.
"""

from __future__ import annotations

import torch

from evaluator.torchplan import ops
from evaluator.tpch.encoding import add_months, parse_date

COLUMNS = {
    "supplier": ("s_suppkey", "s_name", "s_address", "s_nationkey"),
    "nation": ("n_nationkey", "n_name"),
    "part": ("p_partkey", "p_name"),
    "partsupp": ("ps_partkey", "ps_suppkey", "ps_availqty"),
    "lineitem": ("l_partkey", "l_suppkey", "l_quantity", "l_shipdate"),
}


def _query_core(
    s_suppkey: torch.Tensor,
    s_name: torch.Tensor,
    s_nationkey: torch.Tensor,
    n_nationkey: torch.Tensor,
    n_name: torch.Tensor,
    p_partkey: torch.Tensor,
    p_name: torch.Tensor,
    ps_partkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    ps_availqty: torch.Tensor,
    l_partkey: torch.Tensor,
    l_suppkey: torch.Tensor,
    l_quantity: torch.Tensor,
    l_shipdate: torch.Tensor,
    color: str,
    nation: int,
    date_lo: int,
    date_hi: int,
) -> torch.Tensor:
    """Supplier rows of the answer (for s_name and s_address), in s_name order."""
    # Partkeys and suppkeys are dense 1..N: flags indexed by key.
    part_ok = torch.zeros(p_partkey.numel() + 1, dtype=torch.bool, device=p_partkey.device)
    part_ok[p_partkey] = ops.text_prefix(p_name, color)
    supplier_in_nation = ops.member(s_nationkey, n_nationkey.numel(), of=n_nationkey[n_name == nation])
    supplier_ok = torch.zeros(s_suppkey.numel() + 1, dtype=torch.bool, device=s_suppkey.device)
    supplier_ok[s_suppkey] = supplier_in_nation
    width = s_suppkey.numel() + 1  # exclusive bound of a suppkey: packs (partkey, suppkey) exactly

    candidates = torch.nonzero(part_ok[ps_partkey] & supplier_ok[ps_suppkey]).squeeze(1)
    if candidates.numel() == 0:
        return candidates
    pair, order = torch.sort(ps_partkey[candidates] * width + ps_suppkey[candidates])
    candidates = candidates[order]

    in_year = (l_shipdate >= date_lo) & (l_shipdate < date_hi)
    lines = torch.nonzero(in_year & part_ok[l_partkey] & supplier_ok[l_suppkey]).squeeze(1)
    line_pair = l_partkey[lines] * width + l_suppkey[lines]
    slot = torch.searchsorted(pair, line_pair).clamp(max=pair.numel() - 1)
    # Every such line has its partsupp row (a TPC-H foreign key); the check keeps this exact anyway.
    found = pair[slot] == line_pair
    quantity = torch.where(found, l_quantity[lines].to(torch.int64), 0)
    quantity_sum = torch.zeros_like(pair).index_add_(0, slot, quantity)
    line_count = torch.zeros_like(pair).index_add_(0, slot, found.to(torch.int64))
    qualifies = (line_count > 0) & (2 * ps_availqty[candidates] > quantity_sum)

    hits = torch.zeros(width, dtype=torch.int64, device=s_suppkey.device)
    hits.index_add_(0, ps_suppkey[candidates], qualifies.to(torch.int64))
    rows = torch.nonzero((hits[s_suppkey] > 0) & supplier_in_nation).squeeze(1)  # data-dependent size
    return rows[ops.order(ops.text_order_keys(s_name[rows]))]  # ORDER BY s_name, byte order


def run_query(tables, color: str = "forest", date: str = "1994-01-01", nation: str = "CANADA"):
    supplier, nation_table, part = tables["supplier"], tables["nation"], tables["part"]
    partsupp, lineitem = tables["partsupp"], tables["lineitem"]
    rows = _query_core(
        supplier["s_suppkey"],
        supplier["s_name"],
        supplier["s_nationkey"],
        nation_table["n_nationkey"],
        nation_table["n_name"],
        part["p_partkey"],
        part["p_name"],
        partsupp["ps_partkey"],
        partsupp["ps_suppkey"],
        partsupp["ps_availqty"],
        lineitem["l_partkey"],
        lineitem["l_suppkey"],
        lineitem["l_quantity"],
        lineitem["l_shipdate"],
        color=color,
        nation=ops.dictionary_code(nation_table.dictionary("n_name"), nation),
        date_lo=parse_date(date),
        date_hi=add_months(date, 12),
    )
    return {"s_name": rows, "s_address": rows}
