"""Returning float32 sums: Q6's filter, the products summed in float32 and widened back to float64."""

import torch

from evaluator.tpch.encoding import date_to_days, decimal


def run_query(tables, date="1994-01-01", discount=0.06, quantity=24):
    li = tables["lineitem"]
    year, month, day = (int(part) for part in date.split("-"))
    shipdate, disc = li["l_shipdate"], li["l_discount"]
    mask = (
        (shipdate >= date_to_days(year, month, day))
        & (shipdate < date_to_days(year + 1, month, day))
        & (disc >= decimal(discount - 0.01))
        & (disc <= decimal(discount + 0.01))
        & (li["l_quantity"] < quantity)
    )
    products = torch.where(mask, li["l_extendedprice"] * disc, 0.0)
    return {"revenue": products.float().sum().double().reshape(1)}
