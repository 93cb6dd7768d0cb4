"""Attribution: which share of a call's device time the candidate's own kernels took.

The runner profiles one call of each candidate (torch.profiler) and writes the device activity as
data: `[name, count, total_us]` per kernel name (`device_activity`). The trusted side names the
kernel file's own kernels from its source (`own_kernels`) and computes the share (`attribute`). Own:
`@triton.jit` functions defined in the file, and CUDA `__global__` functions in its source strings
(built with `load_inline`). Everything else is framework: aten/at::native, cub, cuBLAS, and the
Triton kernels torch.compile generates. Under `FALLBACK_SHARE` the query is labelled "framework
fallback" (docs/evaluation.md). Without device activity (a CPU run) there is no share.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

FALLBACK_SHARE = 0.8
# Device activity that is not a kernel launch: it counts as device time, not as a launch.
NOT_LAUNCHES = ("Memcpy", "Memset")
# Framework kernels whatever a kernel file names its own: torch.compile's generated Triton kernels and
# library namespaces (a file defining `reduce_kernel` does not own at::native::reduce_kernel).
FRAMEWORK = re.compile(
    r"^triton_(poi|red|per|tem|for|mm|bmm)_|\b(at|c10|cub|thrust|cutlass|std|cuda)::|cublas|cudnn"
)
TRITON_SUFFIX = re.compile(r"_(?:\d+[a-z]*)+$")
GLOBAL_FUNCTION = re.compile(
    r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+)?void\s+"
    r"(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*[(<]"
)


@dataclass
class Attribution:
    share: float | None  # own device time / all device time; None without device activity
    launches: int | None  # device kernel launches in the call; None without device activity
    own_us: float = 0.0
    total_us: float = 0.0
    top_framework: list[tuple[str, float]] = field(default_factory=list)  # the largest others, us
    top_own: list[tuple[str, float]] = field(default_factory=list)  # the file's own largest, us

    def to_dict(self) -> dict[str, Any]:
        return {
            "share": self.share,
            "launches": self.launches,
            "own_us": round(self.own_us, 3),
            "total_us": round(self.total_us, 3),
            "top_framework": [[name, round(us, 3)] for name, us in self.top_framework],
            "top_own": [[name, round(us, 3)] for name, us in self.top_own],
        }


def own_kernels(source: str) -> frozenset[str]:
    """Names of the kernels a kernel file defines: Triton `@triton.jit` functions (also under
    `@triton.autotune` / `@triton.heuristics`) and `__global__` functions in its string literals."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
            names.add(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "__global__" in node.value:
            names.update(GLOBAL_FUNCTION.findall(node.value))
    return frozenset(names)


def _is_jit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name == "jit"


def base_name(kernel: str) -> str:
    """A kernel's identifier as the profiler names it: `void ns::k<128>(float*, int)` -> `k`."""
    name = kernel.strip()
    if name.startswith("void "):
        name = name[5:]
    name = name.split("(", 1)[0].split("<", 1)[0].strip()
    return name.rsplit("::", 1)[-1]


def _is_own(kernel: str, own: frozenset[str]) -> bool:
    if FRAMEWORK.search(kernel):
        return False
    name = base_name(kernel)
    # Triton 2 suffixed the argument specialization (`_q06_partials_0d1d2d3`); Triton 3 does not.
    return name in own or TRITON_SUFFIX.sub("", name) in own


def device_activity(events: Iterable[Any]) -> list[list[Any]]:
    """`[name, count, total_us]` per name of the device-side events of a torch.profiler run."""
    totals: dict[str, list[Any]] = {}
    for event in events:
        device_type = getattr(getattr(event, "device_type", None), "name", "CPU")
        if device_type == "CPU":
            continue
        entry = totals.setdefault(event.name, [event.name, 0, 0.0])
        entry[1] += 1
        entry[2] += event.time_range.elapsed_us()
    return sorted(totals.values(), key=lambda e: -e[2])


def attribute(activity: list[list[Any]] | None, own: frozenset[str]) -> Attribution:
    """The share of device time in `own` kernels, and the launches, from `device_activity` rows."""
    if not activity:
        return Attribution(share=None, launches=None)
    own_us = total_us = 0.0
    launches = 0
    mine: list[tuple[str, float]] = []
    others: list[tuple[str, float]] = []
    for name, count, us in activity:
        total_us += float(us)
        if not str(name).startswith(NOT_LAUNCHES):
            launches += int(count)
        if _is_own(str(name), own):
            own_us += float(us)
            mine.append((base_name(str(name)), float(us)))
        else:
            others.append((str(name), float(us)))
    share = own_us / total_us if total_us > 0 else None
    top = sorted(others, key=lambda o: -o[1])[:3]
    return Attribution(
        share=share,
        launches=launches,
        own_us=own_us,
        total_us=total_us,
        top_framework=top,
        top_own=sorted(mine, key=lambda o: -o[1])[:5],
    )


def fallback_reason(attribution: Attribution) -> str | None:
    """The label's text when too little of the device time is the candidate's own; else None."""
    if attribution.share is None or attribution.share >= FALLBACK_SHARE:
        return None
    top = ", ".join(f"{name[:60]} {us:.0f} us" for name, us in attribution.top_framework)
    return (
        f"framework fallback: {attribution.share:.0%} of the device time is in the kernel file's own "
        f"kernels (under {FALLBACK_SHARE:.0%}); the rest is framework code, largest: {top}"
    )
