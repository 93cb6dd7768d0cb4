"""Returning a tensor subclass: a result that could say anything when it is read."""

import torch

from evaluator.torchplan.plans.q06 import run_query as plan


class Lying(torch.Tensor):
    pass


def run_query(tables, **params):
    return {"revenue": plan(tables, **params)["revenue"].as_subclass(Lying)}
