"""Deferred work (GPU only): the answer is computed on a side stream after 20 ms of other work there, and
torch.cuda.synchronize is patched, so the runner's process packs the result before it is written. A
harness that took the result later (from a file, or when asked) would get the finished answer and
time only the launch; taken with the answer to the batch, it is read unfinished: wrong."""

import torch

from evaluator.torchplan.plans.q06 import run_query as plan

SIDE = torch.cuda.Stream()
torch.cuda.synchronize = lambda *args, **kwargs: None


def run_query(tables, **params):
    SIDE.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(SIDE):
        torch.cuda._sleep(40_000_000)  # ~20 ms at the H200's ~2 GHz
        out = plan(tables, **params)
    return out
