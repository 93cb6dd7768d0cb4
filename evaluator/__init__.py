"""DataKernelBench evaluator: TPC-H data, TorchPlan baselines, and the harness that checks and times
LLM-written kernel sets. Framework-free: nothing here imports Django, and importing it has no side
effects, so a researcher can `pip install` the project and run `python -m evaluator` on their own GPU.
"""

from __future__ import annotations

# Every stored result names the harness that produced it; bump on any change to what is measured.
HARNESS_VERSION = "0.6.19"
