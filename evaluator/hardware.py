"""What the evaluation ran on: recorded in every report; the copy-bandwidth probe and the bandwidth floor,
each defined here once (the harness, bench and taskpack use them), beside the GPUs' datasheet figures
(evaluator/gpus.py's table, re-exported)."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # torch is the runners' (and trusted measuring processes'): the harness never imports it
    import torch

# The datasheet table lives in a torch-free module (the web process reads it); re-exported here.
from evaluator.gpus import GPUS as GPUS
from evaluator.gpus import peak_bandwidth_gbs


def describe(device: torch.device) -> dict[str, Any]:
    import torch

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


def floor_ms(nbytes: int, bandwidth_gbs: float) -> float:
    """The bandwidth floor: `nbytes` read once at `bandwidth_gbs`, in milliseconds. No kernel that must
    read those bytes can be faster (the roofline's, against the datasheet peak; bench's, against the
    measured copy bandwidth)."""
    return nbytes / (bandwidth_gbs * 1e9) * 1e3


def gpu_state(device: str) -> dict[str, str] | None:
    """The GPU's name, driver, clocks and temperature, read by nvidia-smi for the trusted side (the
    runner's own description could be rewritten by the kernel it imports); None without nvidia-smi."""
    index = device.split(":", 1)[1] if ":" in device else "0"
    fields = {
        "name": "name",
        "driver": "driver_version",
        "sm_clock_mhz": "clocks.sm",
        "memory_clock_mhz": "clocks.mem",
        "temperature_c": "temperature.gpu",
    }
    try:
        done = subprocess.run(
            [
                "nvidia-smi",
                f"--query-gpu={','.join(fields.values())}",
                "--format=csv,noheader,nounits",
                "-i",
                index,
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    values = [v.strip() for v in done.stdout.strip().splitlines()[0].split(",")]
    return dict(zip(fields, values, strict=False))


COPY_BYTES = 1 << 30  # far past any L2: the copy streams through HBM
COPY_REPS = 20


def copy_bandwidth_gbs(device: torch.device) -> float:
    """Device-to-device copy bandwidth, GB/s (bytes read + bytes written per second): the measured
    figure the protocol publishes beside the datasheet peak. Median of COPY_REPS copies."""
    import torch

    source = torch.ones(COPY_BYTES, dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    for _ in range(3):
        target.copy_(source)
    torch.cuda.synchronize(device)
    seconds = []
    for _ in range(COPY_REPS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        target.copy_(source)
        end.record()
        end.synchronize()
        seconds.append(start.elapsed_time(end) / 1e3)
    seconds.sort()
    return round(2 * COPY_BYTES / seconds[len(seconds) // 2] / 1e9, 1)


def measured_copy_gbs(device: str, timeout_s: float = 120) -> float | None:
    """copy_bandwidth_gbs in a process of its own (trusted: it imports no kernel), so the caller holds
    no CUDA context; None where it cannot run."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "evaluator.hardware", "copy-bandwidth", device],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=True,
        )
        return float(json.loads(done.stdout.strip().splitlines()[-1])["copy_gbs"])
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError):
        return None


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


if __name__ == "__main__":
    import torch

    if sys.argv[1:2] != ["copy-bandwidth"] or len(sys.argv) != 3:
        sys.exit("usage: python -m evaluator.hardware copy-bandwidth DEVICE")
    print(json.dumps({"copy_gbs": copy_bandwidth_gbs(torch.device(sys.argv[2]))}))
