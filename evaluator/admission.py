"""Admission: refuse kernel files that reach for a cheat's tools, before anything imports them.

A static check on the file's syntax tree (docs/evaluation.md, "Admission"). It is a first line, not the
wall: the sandbox and the trusted comparison stand behind it, since Python offers too many roads around
any list. What it refuses, with the rule's name and the line:

- importing modules that inspect or rewrite the running process, or run work beside the timed call:
  ctypes, gc, inspect, threading, _thread, multiprocessing, concurrent, subprocess, socket, signal,
  importlib, asyncio;
- `__import__`, `eval`, `exec`, `sys._getframe`, `sys.settrace`, `sys.setprofile`;
- assigning to (or `setattr` / `del` on) an attribute of torch, time, triton or numpy: monkeypatching
  the timer, `torch.cuda.synchronize` or the comparison;
- side streams (`torch.cuda.Stream`, `torch.cuda.stream`, `torch.cuda.set_stream`, ExternalStream):
  work left running there escapes a timer that synchronizes the default stream;
- tensor subclasses (`class X(torch.Tensor)`, `as_subclass`, `__torch_function__`,
  `__torch_dispatch__`): a result that lies about its values when read.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

FORBIDDEN_MODULES = frozenset({
    "ctypes", "gc", "inspect", "threading", "_thread", "multiprocessing", "concurrent", "subprocess",
    "socket", "signal", "importlib", "asyncio",
})  # fmt: skip
FORBIDDEN_CALLS = frozenset({"__import__", "eval", "exec"})
FORBIDDEN_SYS = frozenset({"_getframe", "settrace", "setprofile"})
PROTECTED_MODULES = frozenset({"torch", "time", "triton", "numpy"})
STREAM_NAMES = frozenset({"Stream", "stream", "set_stream", "ExternalStream"})
SUBCLASS_HOOKS = frozenset({"__torch_function__", "__torch_dispatch__"})


@dataclass(frozen=True)
class Violation:
    rule: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message} [{self.rule}]"


def check(source: str, filename: str = "<kernel>") -> list[Violation]:
    """Every rule the source breaks, in line order; empty when it is admitted."""
    tree = ast.parse(source, filename=filename)
    visitor = _Visitor()
    visitor.visit(tree)
    return sorted(visitor.violations, key=lambda v: v.line)


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.violations: list[Violation] = []
        # Local names bound to protected modules: `import torch as t` makes `t` one.
        self.aliases: dict[str, str] = {name: name for name in PROTECTED_MODULES | {"sys"}}

    def refuse(self, node: ast.AST, rule: str, message: str) -> None:
        self.violations.append(Violation(rule, getattr(node, "lineno", 0), message))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            root = alias.name.split(".")[0]
            if root in PROTECTED_MODULES | {"sys"}:
                self.aliases[alias.asname or root] = root
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and node.module:
            self._check_module(node, node.module)
            if node.module == "sys":
                for alias in node.names:
                    if alias.name in FORBIDDEN_SYS:
                        self.refuse(node, "frame-access", f"sys.{alias.name} is not allowed")
            if node.module.split(".")[0] == "torch" and node.module.endswith("cuda"):
                for alias in node.names:
                    if alias.name in STREAM_NAMES:
                        self.refuse(
                            node, "side-stream", f"torch.cuda.{alias.name}: side streams are not allowed"
                        )
        self.generic_visit(node)

    def _check_module(self, node: ast.AST, module: str) -> None:
        if module.split(".")[0] in FORBIDDEN_MODULES:
            self.refuse(node, "forbidden-import", f"importing {module} is not allowed")

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            self.refuse(node, "dynamic-code", f"{node.func.id}() is not allowed")
        if isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") and node.args:
            if self._protected_root(node.args[0]):
                self.refuse(node, "monkeypatch", f"{node.func.id}() on {self._dotted(node.args[0])}")
        if isinstance(node.func, ast.Attribute) and node.func.attr == "as_subclass":
            self.refuse(node, "tensor-subclass", "as_subclass() makes a tensor subclass")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root = self._protected_root(node.value) if isinstance(node.value, ast.AST) else None
        if self._dotted(node.value) == self._sys_name() and node.attr in FORBIDDEN_SYS:
            self.refuse(node, "frame-access", f"sys.{node.attr} is not allowed")
        if root == "torch" and node.attr in STREAM_NAMES and self._dotted(node.value).endswith("cuda"):
            self.refuse(node, "side-stream", f"torch.cuda.{node.attr}: side streams are not allowed")
        self.generic_visit(node)

    def _sys_name(self) -> str:
        return next((name for name, root in self.aliases.items() if root == "sys"), "sys")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def _check_target(self, target: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._check_target(element)
        elif isinstance(target, ast.Attribute) and self._protected_root(target.value):
            self.refuse(target, "monkeypatch", f"assigning to {self._dotted(target)} is not allowed")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            if self._protected_root(base) == "torch" and self._dotted(base).endswith("Tensor"):
                self.refuse(node, "tensor-subclass", f"class {node.name} subclasses torch.Tensor")
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name in SUBCLASS_HOOKS:
            self.refuse(node, "tensor-subclass", f"{node.name} overrides how tensors behave")
        self.generic_visit(node)

    def _protected_root(self, node: ast.expr) -> str | None:
        """The protected module an expression like `t.cuda.synchronize` starts from, if any."""
        while isinstance(node, ast.Attribute):
            node = node.value
        if isinstance(node, ast.Name):
            root = self.aliases.get(node.id)
            return root if root in PROTECTED_MODULES else None
        return None

    def _dotted(self, node: ast.expr) -> str:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))
