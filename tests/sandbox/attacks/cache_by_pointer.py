"""Caching across calls by pointer and parameters: a repeated call on the same tensors is a look-up.
Real work takes at least 50 ms here, so a timed median under 50 ms means the clock measured a look-up."""

import time

from evaluator.torchplan.plans.q06 import run_query as plan

CACHE = {}


def run_query(tables, **params):
    key = (tables["lineitem"]["l_discount"].data_ptr(), tuple(sorted(params.items())))
    if key not in CACHE:
        time.sleep(0.05)
        CACHE[key] = plan(tables, **params)
    return CACHE[key]
