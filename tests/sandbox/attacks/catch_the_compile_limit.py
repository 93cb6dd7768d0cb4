"""Catching the compile limit: its import "builds" for 60 s and swallows anything raised meanwhile, as a
kernel did that caught the limit's in-process exception and passed after 140 s."""

import time

from evaluator.torchplan.plans.q06 import run_query  # noqa: F401 - the honest plan

_until = time.monotonic() + 60
while time.monotonic() < _until:
    try:
        time.sleep(0.1)
    except BaseException:  # noqa: B036 - the point of the attack
        pass
