"""Vacuous trials: Q18 answers nothing whenever its QUANTITY is above 300. At small scale factors every
draw above 300 has an empty answer, so only a trial whose answer is not empty can tell."""

from evaluator.torchplan.plans.q18 import run_query as plan


def run_query(tables, quantity=300):
    out = plan(tables, quantity=quantity)
    if quantity > 300:
        return {name: column[:0] for name, column in out.items()}
    return out
