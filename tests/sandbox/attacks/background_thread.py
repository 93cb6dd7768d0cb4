"""A background thread doing the work after the call returns: the timer would stop too early. One
thread at a time (each call first waits for the last one), so only the timing is cheated."""

import threading
import time

import torch

from evaluator.torchplan.plans.q06 import run_query as plan

PENDING = []


def run_query(tables, **params):
    for thread in PENDING:
        thread.join()
    PENDING.clear()
    revenue = torch.zeros(1, dtype=torch.float64)

    def finish():
        time.sleep(0.05)  # the work happens after the call returned
        revenue.copy_(plan(tables, **params)["revenue"])

    PENDING.append(threading.Thread(target=finish))
    PENDING[-1].start()
    return {"revenue": revenue}
