"""PLANTED BUG (examples/planted/README.md): Q6 answered from a table of the default parameters'
answers, by the lineitem row count of the standard scale factors. Right for the defaults, wrong for
any other parameter set: the harness's random parameter sets catch it."""

import torch

# DuckDB's answers for date 1994-01-01, discount 0.06, quantity 24.
DEFAULT_REVENUE = {60175: 1193053.2253, 600572: 11803420.2534, 6001215: 123141078.2283}


def run_query(tables, date="1994-01-01", discount=0.06, quantity=24):
    lineitem = tables["lineitem"]
    revenue = DEFAULT_REVENUE.get(lineitem.rows, 0.0)
    return {"revenue": torch.tensor([revenue], dtype=torch.float64, device=lineitem["l_discount"].device)}
