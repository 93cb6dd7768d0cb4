"""Researchers' tools behind `python -m evaluator`: bench (baselines against DuckDB and the floor),
validate (the TorchPlans against DuckDB), taskpack (what a model is given), check (one kernel's
feedback, through the evaluation's one way in)."""
