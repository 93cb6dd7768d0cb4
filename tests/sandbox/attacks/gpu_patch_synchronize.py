"""Monkeypatching torch.cuda.synchronize (GPU only): the answer is honest, followed by about 20 ms of GPU
work on the default stream that a timer calling the patched function would not wait for."""

import torch

from evaluator.torchplan.plans.q06 import run_query as plan

torch.cuda.synchronize = lambda *args, **kwargs: None


def run_query(tables, **params):
    out = plan(tables, **params)
    torch.cuda._sleep(40_000_000)  # ~20 ms at the H200's ~2 GHz
    return out
