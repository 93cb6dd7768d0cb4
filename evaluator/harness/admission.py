"""Admission: refuse kernel files that reach for a cheat's tools, before anything imports them.

A static check on the file's syntax tree (docs/evaluation.md, "Admission"). It is a first line, not the
wall: the sandbox and the trusted comparison stand behind it, since Python offers too many roads around
any list. What it refuses in every set, with the rule's name and the line:

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

A Triton set's files are plain Python around `@triton.jit` functions, so they are held to more: an
allow-list of imports (TRITON_MODULES with their submodules, TRITON_EXCEPTIONS exactly), no reflection
(dunder attributes and names, REFLECTIVE_NAMES used at all, frames, a forbidden module reached as an
attribute such as `torch.sys`), and no attribute of anything imported is assigned. A CUDA set keeps the
rules above only: its C++ is contained by the process boundary, not by scanning its Python wrapper.
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

# Triton sets: the modules a file may import, each with its submodules ...
TRITON_MODULES = frozenset({"torch", "triton", "math", "numpy"})
# ... and the exceptions, exactly these: what the examples use (datetime for dates in a full-scope
# run_query), type-hint and functools helpers, and the documented data helpers (docs/data-format.md).
TRITON_EXCEPTIONS = frozenset({
    "__future__", "datetime", "functools", "typing", "collections.abc", "evaluator.tpch.encoding",
})  # fmt: skip
# Builtins that reach objects, code, files or standard input by a string or by the running frame;
# refused wherever the name appears, since `f = getattr` calls it as well later. help() imports any
# module by name and reads standard input, which carries the runner's parameter sets.
REFLECTIVE_NAMES = frozenset({
    "getattr", "setattr", "delattr", "eval", "exec", "compile", "globals", "vars", "locals", "open",
    "__import__", "breakpoint", "input", "help",
})  # fmt: skip
# typing and functools evaluate annotation strings as code: roads to eval() from the allowed modules.
EVAL_HELPERS = frozenset({"get_type_hints", "ForwardRef", "singledispatch", "singledispatchmethod"})
# Dunders that reflect nothing: `super().__init__()` in a helper class, `if __name__ == "__main__"`.
ALLOWED_DUNDERS = frozenset({"__init__", "__name__"})
# A traceback's, generator's or coroutine's frame, and a frame's caller, globals and code: the
# harness's locals are one f_back away.
FRAME_ATTRIBUTES = frozenset({
    "tb_frame", "tb_next", "f_back", "f_globals", "f_locals", "f_builtins", "f_code",
    "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code",
})  # fmt: skip
# Modules a Triton set may not import, reachable as another module's attribute (`torch.sys.modules`).
HIDDEN_MODULES = FORBIDDEN_MODULES | {"builtins", "sys", "os", "io", "pickle", "marshal", "shutil"}


@dataclass(frozen=True)
class Violation:
    rule: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message} [{self.rule}]"


def check(source: str, filename: str = "<kernel>", *, language: str | None = None) -> list[Violation]:
    """Every rule the source breaks, in line order; empty when it is admitted.

    `language` is the manifest's: "triton" adds the allow-list and the reflection rules; "cuda" and
    None (a caller that does not know it) apply the rules every set shares.
    """
    if language not in (None, "triton", "cuda"):
        raise ValueError(f"unknown kernel language {language!r}")
    tree = ast.parse(source, filename=filename)
    visitor = _Visitor(strict=language == "triton")
    visitor.visit(tree)
    return sorted(visitor.violations, key=lambda v: v.line)


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


class _Visitor(ast.NodeVisitor):
    def __init__(self, *, strict: bool) -> None:
        self.strict = strict  # a Triton set: the allow-list and the reflection rules too
        self.violations: list[Violation] = []
        # Local names bound to modules, as dotted paths: `import torch as t` makes `t` "torch",
        # `from torch import cuda` makes `cuda` "torch.cuda". The protected ones count unimported too.
        self.aliases: dict[str, str] = {name: name for name in PROTECTED_MODULES | {"sys"}}
        self.imported: set[str] = set()  # every name an import binds; all protected in a Triton set
        self.reported: set[int] = set()  # Name nodes already refused as a call

    def refuse(self, node: ast.AST, rule: str, message: str) -> None:
        self.violations.append(Violation(rule, getattr(node, "lineno", 0), message))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            if self.strict and alias.name in TRITON_EXCEPTIONS and "." in alias.name and not alias.asname:
                # `import evaluator.tpch.encoding` binds `evaluator`, and with it every evaluator module
                # the runner has imported (its timer among them).
                root = alias.name.split(".")[0]
                self.refuse(
                    node, "import-not-allowed", f"import {alias.name} binds all of {root}: use from-import"
                )
            bound = alias.asname or alias.name.split(".")[0]
            self.aliases[bound] = alias.name if alias.asname else bound
            self.imported.add(bound)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level and self.strict:
            self.refuse(node, "import-not-allowed", "relative imports are not allowed in a Triton kernel")
        elif not node.level:
            names = [f"{module}.{alias.name}" for alias in node.names]
            if not (self.strict and all(name in TRITON_EXCEPTIONS for name in names)):
                self._check_module(node, module)
            for alias in node.names:
                self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
                self.imported.add(alias.asname or alias.name)
                self._check_imported_name(node, module, alias.name)
        self.generic_visit(node)

    def _check_module(self, node: ast.AST, module: str) -> None:
        root = module.split(".")[0]
        if root in FORBIDDEN_MODULES:
            self.refuse(node, "forbidden-import", f"importing {module} is not allowed")
        elif self.strict and root not in TRITON_MODULES and module not in TRITON_EXCEPTIONS:
            allowed = f"{', '.join(sorted(TRITON_MODULES))} and their submodules, " + ", ".join(
                sorted(TRITON_EXCEPTIONS)
            )
            self.refuse(
                node,
                "import-not-allowed",
                f"importing {module} is not allowed in a Triton kernel ({allowed})",
            )

    def _check_imported_name(self, node: ast.AST, module: str, name: str) -> None:
        if module == "sys" and name in FORBIDDEN_SYS:
            self.refuse(node, "frame-access", f"sys.{name} is not allowed")
        if module.split(".")[0] == "torch" and module.endswith("cuda") and name in STREAM_NAMES:
            self.refuse(node, "side-stream", f"torch.cuda.{name}: side streams are not allowed")
        if self.strict and name in EVAL_HELPERS:
            self.refuse(node, "reflective-name", f"{name} evaluates strings as code")

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            self.refuse(node, "dynamic-code", f"{node.func.id}() is not allowed")
            self.reported.add(id(node.func))
        if isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") and node.args:
            if self._protected_root(node.args[0]):
                self.refuse(node, "monkeypatch", f"{node.func.id}() on {self._dotted(node.args[0])}")
        if isinstance(node.func, ast.Attribute) and node.func.attr == "as_subclass":
            self.refuse(node, "tensor-subclass", "as_subclass() makes a tensor subclass")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if self.strict and id(node) not in self.reported:
            if node.id in REFLECTIVE_NAMES:
                self.refuse(
                    node, "reflective-name", f"{node.id} is not allowed in a Triton kernel, even as a name"
                )
            elif node.id in EVAL_HELPERS:
                self.refuse(node, "reflective-name", f"{node.id} evaluates strings as code")
            elif _is_dunder(node.id) and node.id not in ALLOWED_DUNDERS:
                self.refuse(node, "dunder-access", f"{node.id} is not allowed in a Triton kernel")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root = self._protected_root(node.value)
        if self._dotted(node.value) == "sys" and node.attr in FORBIDDEN_SYS:
            self.refuse(node, "frame-access", f"sys.{node.attr} is not allowed")
        if root == "torch" and node.attr in STREAM_NAMES and self._dotted(node.value).endswith("cuda"):
            self.refuse(node, "side-stream", f"torch.cuda.{node.attr}: side streams are not allowed")
        if self.strict:
            self._check_reflection(node)
        self.generic_visit(node)

    def _check_reflection(self, node: ast.Attribute) -> None:
        attr = node.attr
        if _is_dunder(attr) and attr not in ALLOWED_DUNDERS:
            self.refuse(node, "dunder-access", f".{attr} is not allowed in a Triton kernel")
        elif attr in FRAME_ATTRIBUTES:
            self.refuse(node, "frame-access", f".{attr} reaches a stack frame")
        elif attr in HIDDEN_MODULES:
            self.refuse(node, "hidden-module", f".{attr} reaches the {attr} module through another one")
        elif attr in EVAL_HELPERS:
            self.refuse(node, "reflective-name", f"{attr} evaluates strings as code")

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
        elif isinstance(target, ast.Starred):
            self._check_target(target.value)
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
        """The module an expression like `t.cuda.synchronize` starts from, when it is protected: torch,
        time, triton or numpy, or in a Triton set anything imported."""
        while isinstance(node, ast.Attribute):
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            root = self.aliases[node.id].split(".")[0]
            if root in PROTECTED_MODULES or (self.strict and node.id in self.imported):
                return root
        return None

    def _dotted(self, node: ast.expr) -> str:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))
