"""The trusted side of an evaluation: nothing here imports a kernel (tests/evaluator/test_boundary.py).

core.py evaluates a set query by query; session.py runs one query's two runners (the kernel's, the
baseline's) and times them from outside; judge.py and compare.py hold DuckDB's expected answers and the
comparison; fresh.py and trials.py choose what the kernel is asked; admission.py reads a kernel's source
before it runs; launch.py and remote.py start runners and talk to them; cores.py places them on the
host; baselines.py calibrates which TorchPlan mode each query is timed against.
"""
