"""What the evaluation ran on: recorded in every report, and the peak bandwidth for the roofline."""

from __future__ import annotations

import platform
import subprocess
from typing import Any

import torch

# Datasheet peak memory bandwidth, GB/s, matched by substring of the device name.
PEAK_BANDWIDTH_GBS = {"H200": 4800.0, "H100": 3350.0, "A100": 2039.0}


def describe(device: torch.device) -> dict[str, Any]:
    info: dict[str, Any] = {
        "device": device.type,
        "torch": torch.__version__,
        "triton": _triton_version(),
        "python": platform.python_version(),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info |= {
            "name": props.name,
            "sm_count": props.multi_processor_count,
            "memory_gb": round(props.total_memory / 1e9, 1),
            "cuda": torch.version.cuda,
            "peak_bandwidth_gbs": peak_bandwidth_gbs(props.name),
        }
    else:
        info |= {"name": cpu_name(), "peak_bandwidth_gbs": None, "note": "CPU: Triton interpreter timings"}
    return info


def peak_bandwidth_gbs(name: str) -> float | None:
    return next((bw for key, bw in PEAK_BANDWIDTH_GBS.items() if key in name), None)


def gpu_state(device: str) -> dict[str, str] | None:
    """The GPU's name, driver, clocks and temperature, read by nvidia-smi for the trusted side (the
    runner's own description could be rewritten by the kernel it imports); None without nvidia-smi."""
    index = device.split(":", 1)[1] if ":" in device else "0"
    fields = {"name": "name", "driver": "driver_version", "sm_clock_mhz": "clocks.sm",
              "memory_clock_mhz": "clocks.mem", "temperature_c": "temperature.gpu"}  # fmt: skip
    try:
        done = subprocess.run(
            ["nvidia-smi", f"--query-gpu={','.join(fields.values())}", "--format=csv,noheader,nounits",
             "-i", index],
            capture_output=True, text=True, timeout=30, check=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    values = [v.strip() for v in done.stdout.strip().splitlines()[0].split(",")]
    return dict(zip(fields, values, strict=False))


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "CPU"


def _triton_version() -> str | None:
    try:
        import triton
    except ImportError:
        return None
    return triton.__version__
