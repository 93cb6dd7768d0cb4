"""The untrusted side: the one process that imports a kernel (`python -m evaluator.runner.commands`).

commands.py serves the harness's commands over its channel; kernel_loader.py imports the kernel file.
Everything this package imports, a kernel can read and rewrite: it imports nothing of the trusted
side (evaluator/harness/; tests/evaluator/test_boundary.py).
"""
