"""TPC-H Q11, Important Stock Identification: a TorchPlan.

SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value
FROM partsupp, supplier, nation
WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = ':nation'
GROUP BY ps_partkey
HAVING sum(ps_supplycost * ps_availqty) > (
    SELECT sum(ps_supplycost * ps_availqty) * :fraction
    FROM partsupp, supplier, nation
    WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = ':nation')
ORDER BY value DESC

The HAVING compares a part's value with a fraction of the nation's total, so a float64 sum that is one
ulp off could flip a part at the boundary. Values are therefore summed exactly in int64 cents
(supplycost x 100 x availqty) and the fraction num/den is compared as value x den > total x num.
"""

from __future__ import annotations

from decimal import Decimal

import torch

from evaluator.torchplan import ops

COLUMNS = {
    "partsupp": ("ps_partkey", "ps_suppkey", "ps_supplycost", "ps_availqty"),
    "supplier": ("s_suppkey", "s_nationkey"),
    "nation": ("n_nationkey", "n_name"),
}


def _query_core(
    ps_partkey: torch.Tensor,
    ps_suppkey: torch.Tensor,
    ps_supplycost: torch.Tensor,
    ps_availqty: torch.Tensor,
    s_suppkey: torch.Tensor,
    s_nationkey: torch.Tensor,
    n_nationkey: torch.Tensor,
    n_name: torch.Tensor,
    nation: int,
    fraction_num: int,
    fraction_den: int,
    nation_keys: int,
    supplier_keys: int,
    part_keys: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(ps_partkey, value) of the qualifying parts, by value descending."""
    device = ps_partkey.device
    nation_ok = torch.zeros(nation_keys, dtype=torch.bool, device=device)
    nation_ok[n_nationkey] = n_name == nation
    supplier_ok = torch.zeros(supplier_keys, dtype=torch.bool, device=device)
    supplier_ok[s_suppkey] = nation_ok[s_nationkey]

    cents = torch.round(ps_supplycost * 100).long() * ps_availqty
    cents = torch.where(supplier_ok[ps_suppkey], cents, 0)
    # Keys spread the scatter over all parts (about 4 rows each): no atomics pile up on one address.
    value = torch.zeros(part_keys, dtype=torch.int64, device=device).index_add_(0, ps_partkey, cents)
    total = cents.sum()
    partkey = (value * fraction_den > total * fraction_num).nonzero().squeeze(1)
    partkey = partkey[ops.order([(value[partkey], True)])]
    return partkey, value[partkey].double() / 100


def run_query(tables, nation: str = "GERMANY", fraction: str = "0.0001000000"):
    partsupp, supplier, nations = tables["partsupp"], tables["supplier"], tables["nation"]
    # The literal's exact ratio (0.0001 -> 1/10000); str() first so a float argument is read as written.
    num, den = Decimal(str(fraction)).as_integer_ratio()
    partkey, value = _query_core(
        partsupp["ps_partkey"],
        partsupp["ps_suppkey"],
        partsupp["ps_supplycost"],
        partsupp["ps_availqty"],
        supplier["s_suppkey"],
        supplier["s_nationkey"],
        nations["n_nationkey"],
        nations["n_name"],
        nation=ops.dictionary_code(nations.dictionary("n_name"), nation),
        fraction_num=num,
        fraction_den=den,
        nation_keys=nations.rows,
        supplier_keys=supplier.rows + 1,
        # Part keys are dense 1..P and partsupp holds exactly 4 suppliers per part (spec 4.2.5).
        part_keys=partsupp.rows // 4 + 1,
    )
    return {"ps_partkey": partkey, "value": value}
