"""Slowing the baseline on the device from outside the kernel's calls (GPU only): the moment its runner
has sent a timed batch's answer, the kernel's process puts about 5 ms of device work on a side stream,
to run into the baseline's batch that follows in the other process (the GPU time-slices between them).
Nothing of it runs inside the kernel's own batches: its next `arm` synchronizes the device first, outside
its window. It wraps the function the runner answers with, as any code in that process can. The kernel
itself is the honest plan. Freezing the kernel's runner while the baseline is timed (harness 0.6.8)
stops later launches, not work already on the device: scripts/gpu/sandbox.sh shows what it does to the
baseline (beside against alone) and what catches it."""

import sys

import torch

from evaluator.torchplan.plans.q06 import run_query as plan

_runner = sys.modules.get("evaluator.runner.commands") or sys.modules["__main__"]  # run as `python -m`
_honest_send = _runner.send
_SIDE = torch.cuda.Stream()


def _send_then_disturb(fd, header, payload=b""):
    _honest_send(fd, header, payload)
    if "layout" in header:  # a batch's answer (or a trial's): the baseline is timed next
        with torch.cuda.stream(_SIDE):
            torch.cuda._sleep(10_000_000)  # ~5 ms at the H200's ~2 GHz


_runner.send = _send_then_disturb


def run_query(tables, **params):
    return plan(tables, **params)
