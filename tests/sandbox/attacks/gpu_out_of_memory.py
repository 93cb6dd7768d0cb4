"""Allocating all GPU memory (GPU only): 16 GiB at a time, more than any GPU has."""

import torch


def run_query(tables, **params):
    hoard = []
    while True:
        hoard.append(torch.empty(1 << 34, dtype=torch.uint8, device="cuda"))
