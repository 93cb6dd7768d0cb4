"""TorchPlans emitted by evaluator.torchplan.compiler; regenerate, never edit by hand.

`python -m evaluator.torchplan.compiler.regenerate` rewrites them from evaluator/queries/qNN.py.
"""
