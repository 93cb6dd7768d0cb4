"""SQL's NULL answered as 0: Q19's revenue over no rows is NULL in SQL; this kernel returns 0.0 there,
which a reference that turns NULL into 0 would pass (and an honest NULL would fail)."""

import torch

from evaluator.torchplan.plans.q19 import run_query as plan


def run_query(tables, **params):
    out = plan(tables, **params)
    return {
        name: torch.nan_to_num(column, nan=0.0) if column.is_floating_point() else column
        for name, column in out.items()
    }
