"""A segfault that admission cannot see: faulthandler's own test helper reads address 0."""

import faulthandler


def run_query(tables, **params):
    faulthandler._sigsegv()
