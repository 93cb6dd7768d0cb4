from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.admission import check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def rules(source: str) -> list[str]:
    return [v.rule for v in check(source)]


def test_the_example_kernels_are_admitted() -> None:
    for path in EXAMPLES.glob("*/q*.py"):
        assert check(path.read_text()) == [], path


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ("import ctypes", "forbidden-import"),
        ("import threading as t", "forbidden-import"),
        ("from multiprocessing import Pool", "forbidden-import"),
        ("from concurrent.futures import ThreadPoolExecutor", "forbidden-import"),
        ("import subprocess", "forbidden-import"),
        ("import socket", "forbidden-import"),
        ("import gc", "forbidden-import"),
        ("from inspect import stack", "forbidden-import"),
        ("import importlib", "forbidden-import"),
        ("m = __import__('ctypes')", "dynamic-code"),
        ("exec('import ctypes')", "dynamic-code"),
        ("import sys\nf = sys._getframe(1)", "frame-access"),
        ("import sys as s\ns.settrace(None)", "frame-access"),
        ("from sys import _getframe", "frame-access"),
        ("import time\ntime.perf_counter = lambda: 0.0", "monkeypatch"),
        ("import torch\ntorch.cuda.synchronize = lambda *a: None", "monkeypatch"),
        ("import torch as T\nT.cuda.synchronize = print", "monkeypatch"),
        ("import torch\nsetattr(torch.cuda, 'synchronize', print)", "monkeypatch"),
        ("import numpy as np\nnp.isclose = lambda *a, **k: True", "monkeypatch"),
        ("import triton\ndel triton.testing", "monkeypatch"),
        ("import torch\ns = torch.cuda.Stream()", "side-stream"),
        ("import torch\nwith torch.cuda.stream(s):\n    pass", "side-stream"),
        ("from torch.cuda import Stream", "side-stream"),
        ("import torch\nclass Liar(torch.Tensor):\n    pass", "tensor-subclass"),
        ("def f(x, cls):\n    return x.as_subclass(cls)", "tensor-subclass"),
        ("class A:\n    @classmethod\n    def __torch_function__(cls, *a):\n        pass", "tensor-subclass"),
    ],
)
def test_it_refuses_a_cheats_tools_with_the_rule_and_line(source: str, rule: str) -> None:
    violations = check(source)
    assert [v.rule for v in violations] == [rule]
    assert f"[{rule}]" in str(violations[0]) and str(violations[0]).startswith("line ")


def test_the_line_number_points_at_the_offending_statement() -> None:
    (violation,) = check("import torch\n\n\nx = 1\ntorch.cuda.synchronize = None\n")
    assert violation.line == 5


def test_ordinary_kernel_code_is_not_refused() -> None:
    source = """
import math
import torch
import triton
import triton.language as tl
from evaluator.torchplan import ops

BLOCK = 1024
out = torch.empty(4, dtype=torch.float64)
out[0] = 1.0
stream = torch.cuda.current_stream
grid = triton.cdiv(10, BLOCK)
class Config:
    time = 3
Config.time = 4
"""
    assert check(source) == []
