from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.harness.admission import check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_KERNELS = sorted(EXAMPLES.rglob("q*.py"))  # the planted sets too: they are meant to run


def test_the_examples_include_triton_and_cuda_sets() -> None:
    languages = {
        json.loads((path.parent / "manifest.json").read_text())["language"] for path in EXAMPLE_KERNELS
    }
    assert languages == {"triton", "cuda"} and len(EXAMPLE_KERNELS) >= 11


@pytest.mark.parametrize("path", EXAMPLE_KERNELS, ids=lambda path: str(path.relative_to(EXAMPLES)))
def test_every_example_kernel_is_admitted_under_its_manifests_language(path: Path) -> None:
    language = json.loads((path.parent / "manifest.json").read_text())["language"]
    assert check(path.read_text(), path.name, language=language) == []
    assert check(path.read_text(), path.name) == []


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


def test_a_name_bound_by_from_import_is_protected_in_every_set() -> None:
    (violation,) = check("from torch import cuda\ncuda.synchronize = print")
    assert (violation.rule, violation.line) == ("monkeypatch", 2)
    assert "torch.cuda.synchronize" in violation.message


def test_an_unknown_language_is_a_callers_mistake() -> None:
    with pytest.raises(ValueError):
        check("x = 1", language="rust")


# --- Triton sets: an allow-list of imports and no reflection -----------------------------------------


def triton(source: str) -> list[tuple[str, int]]:
    return [(v.rule, v.line) for v in check(source, "q06.py", language="triton")]


@pytest.mark.parametrize(
    ("source", "rule", "line"),
    [
        ("import torch\nimport os", "import-not-allowed", 2),
        ("import sys", "import-not-allowed", 1),
        ("import builtins", "import-not-allowed", 1),
        ("from os.path import join", "import-not-allowed", 1),
        ("import time", "import-not-allowed", 1),
        ("from . import helpers", "import-not-allowed", 1),
        ("from evaluator.tpch import load", "import-not-allowed", 1),
        ("import evaluator.tpch.encoding", "import-not-allowed", 1),
        ("import gc", "forbidden-import", 1),
        ("x = 0\ncls = x.__class__", "dunder-access", 2),
        ("def f():\n    pass\nd = f.__dict__", "dunder-access", 3),
        ("g = (lambda: 0).__globals__", "dunder-access", 1),
        ("x = 0\nsubclasses = type(x).__subclasses__()", "dunder-access", 2),
        ("b = __builtins__", "dunder-access", 1),
        ("loader = __loader__", "dunder-access", 1),
        ("f = getattr", "reflective-name", 1),
        ("import torch\nsetattr(x, 'y', 1)", "reflective-name", 2),
        ("delattr(x, 'y')", "reflective-name", 1),
        ("run = exec", "reflective-name", 1),
        ("code = compile('1', 'f', 'eval')", "reflective-name", 1),
        ("g = globals()", "reflective-name", 1),
        ("v = vars()", "reflective-name", 1),
        ("names = locals()", "reflective-name", 1),
        ("\n\ntext = open('/etc/passwd').read()", "reflective-name", 3),
        ("m = __import__", "reflective-name", 1),
        ("breakpoint()", "reflective-name", 1),
        ("line = input()", "reflective-name", 1),
        ("help('modules')", "reflective-name", 1),
        ("from typing import get_type_hints", "reflective-name", 1),
        ("import typing\nhints = typing.get_type_hints(f)", "reflective-name", 2),
        ("import functools\n\n@functools.singledispatch\ndef f(x):\n    pass", "reflective-name", 3),
        ("def g():\n    yield\n\nframe = g().gi_frame", "frame-access", 4),
        ("def f(tb):\n    return tb.tb_frame", "frame-access", 2),
        ("import torch\nmodules = torch.sys.modules", "hidden-module", 2),
        ("import numpy as np\nenv = np.os.environ", "hidden-module", 2),
        ("import math\nmath.pi = 3", "monkeypatch", 2),
        ("from evaluator.tpch.encoding import decimal\ndecimal.places = 3", "monkeypatch", 2),
    ],
)
def test_a_triton_set_is_refused_each_rule_with_its_name_and_line(source: str, rule: str, line: int) -> None:
    assert triton(source) == [(rule, line)]
    assert str(check(source, language="triton")[0]).startswith(f"line {line}: ")


@pytest.mark.parametrize(
    "source",
    [
        "import sys\nsys.modules['time'].perf_counter = lambda: 0.0",
        "import torch\ntorch.sys.modules['time'].perf_counter = lambda: 0.0",
        "import torch\nclock = torch.sys.modules['time']\nclock.perf_counter = lambda: 0.0",
        "open_ = getattr(__builtins__, 'open')",
        "__builtins__['open']('/etc/passwd')",
        "import builtins\nbuiltins.open('/etc/passwd')",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    caller = e.__traceback__.tb_frame.f_back",
        "def g():\n    yield\n\nit = g()\ncaller = it.gi_frame.f_back",
        "harness = (lambda: 0).__globals__",
        "x = 0\nfor cls in type(x).__subclasses__():\n    pass",
        "x = 0\nobject_ = type(x).__mro__[-1]",
        "from typing import ForwardRef",
        "import functools\nrun = functools.partial(eval, 'open')",
    ],
)
def test_the_known_bypasses_are_refused_for_a_triton_set(source: str) -> None:
    assert triton(source) != []


def test_a_cuda_set_keeps_the_shared_rules_only() -> None:
    # Its wrapper builds C++ that the process boundary contains; scanning the Python would add nothing.
    source = (
        "import os\nimport torch\nfrom torch.utils.cpp_extension import load_inline\nx = getattr(os, 'sep')"
    )
    assert check(source, language="cuda") == check(source) == []
    assert [v.rule for v in check("import ctypes", language="cuda")] == ["forbidden-import"]


def test_ordinary_triton_kernel_code_is_admitted() -> None:
    source = """
from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Sequence
from typing import Optional

import numpy as np
import torch
import triton
import triton.language as tl
from evaluator.tpch import encoding
from evaluator.tpch.encoding import date_to_days, decimal

BLOCK = 1024


@triton.jit
def _kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n, other=0.0), mask=offs < n)


class Plan:
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size


@functools.lru_cache(maxsize=None)
def bounds(discount: float) -> tuple[float, float]:
    return decimal(discount - 0.01), decimal(discount + 0.01)


def run_query(tables, date: str = "1994-01-01", discount: float = 0.06) -> dict[str, torch.Tensor]:
    start = dt.date.fromisoformat(date)
    lo = date_to_days(start.year, start.month, start.day)
    hi = encoding.add_interval(lo, 1, "year")
    width: Optional[int] = None
    grid = (triton.cdiv(tables["lineitem"].rows, BLOCK),)
    scale = math.sqrt(np.float64(4.0))
    plan = Plan(BLOCK)
    plan.size = 2 * BLOCK
    return {"revenue": torch.zeros(1, dtype=torch.float64), "lo": torch.tensor([lo, hi]), "g": grid}


if __name__ == "__main__":
    print(run_query.__name__)
"""
    assert check(source, language="triton") == []
