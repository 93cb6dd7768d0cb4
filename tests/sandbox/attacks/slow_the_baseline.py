"""Slowing the baseline: its TorchPlan module, in this process's sys.modules, replaced by one that sleeps
20 ms a call before answering. The kernel itself is the honest plan. When the baseline ran in the
kernel's process this made the plan look 3.8x faster than itself."""

import sys
import time
import types

from evaluator.torchplan.plans import q06 as _plans_q06

_honest_run, _honest_core = _plans_q06.run_query, _plans_q06._query_core
# Its own copy of the plan, bound to the module's globals as they were: the kernel stays fast.
_own_run = types.FunctionType(
    _honest_run.__code__, dict(_honest_run.__globals__), "run_query", _honest_run.__defaults__
)
_own_run.__kwdefaults__ = _honest_run.__kwdefaults__


def _slow_run(*args, **kwargs):
    time.sleep(0.02)
    return _honest_run(*args, **kwargs)


def _slow_core(*args, **kwargs):
    time.sleep(0.02)
    return _honest_core(*args, **kwargs)


for _module in list(sys.modules.values()):
    if getattr(_module, "__name__", "").startswith("evaluator.torchplan"):
        for _name, _slow in (("run_query", _slow_run), ("_query_core", _slow_core)):
            if getattr(_module, _name, None) in (_honest_run, _honest_core):
                setattr(_module, _name, _slow)


def run_query(tables, **params):
    return _own_run(tables, **params)
