"""Reading another submission: a rival's kernel set, on the same worker (the test puts it there)."""

import os

RIVAL = "%(rival)s"


def run_query(tables, **params):
    print(os.path.exists(os.path.dirname(RIVAL)))
    with open(RIVAL) as rival:
        rival.read()
    raise AssertionError("the kernel read another submission")
