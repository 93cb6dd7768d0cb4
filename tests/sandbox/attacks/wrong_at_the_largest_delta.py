"""Wrong only at the end of a parameter's range: Q1's answer is right for every DELTA but the largest
(120), where one sum is off by one. Random draws alone reach 120 in about one evaluation in nine."""

from evaluator.torchplan.plans.q01 import run_query as plan


def run_query(tables, delta=90):
    out = plan(tables, delta=delta)
    if delta == 120:
        out["sum_qty"] = out["sum_qty"] + 1
    return out
