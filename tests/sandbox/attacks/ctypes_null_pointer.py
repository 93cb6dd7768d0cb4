"""A segfault through ctypes: reading the memory at address 0."""

import ctypes


def run_query(tables, **params):
    return ctypes.string_at(0)
