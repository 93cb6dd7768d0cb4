"""The GPUs' datasheet figures, the one table of them: the harness's roofline, bench, taskpack and the
site's Hardware rows read it. Imports nothing heavy, so the web process can read it without torch."""

from __future__ import annotations

from typing import Any

# Datasheet figures (SXM parts), matched by substring of the device name. `measured_copy_bandwidth_gbs`:
# what `copy_bandwidth_gbs` read on one such machine (docs/benchmarks.md), where known.
GPUS: dict[str, dict[str, Any]] = {
    "H200": {"name": "NVIDIA H200 (SXM)", "memory_gb": 141, "peak_bandwidth_gbs": 4800.0, "sm_count": 132,
             "l2_mb": 60, "compute_capability": "9.0", "measured_copy_bandwidth_gbs": 4227.0},
    "H100": {"name": "NVIDIA H100 (SXM)", "memory_gb": 80, "peak_bandwidth_gbs": 3350.0, "sm_count": 132,
             "l2_mb": 50, "compute_capability": "9.0"},
    "A100": {"name": "NVIDIA A100 (SXM)", "memory_gb": 80, "peak_bandwidth_gbs": 2039.0, "sm_count": 108,
             "l2_mb": 40, "compute_capability": "8.0"},
}  # fmt: skip


def peak_bandwidth_gbs(name: str) -> float | None:
    """The datasheet peak of the GPU whose device name contains a key of `GPUS`; None for any other."""
    return next((gpu["peak_bandwidth_gbs"] for key, gpu in GPUS.items() if key in name), None)
