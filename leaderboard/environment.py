"""What a run's report records of where it ran, as (label, value) rows for its page: only what the report
says, nothing filled in."""

from __future__ import annotations

from typing import Any

GiB = 1 << 30


def _gib(size_bytes: float) -> str:
    """A memory size in GiB, the one unit of the page's sizes, to at most one decimal."""
    return f"{round(size_bytes / GiB, 1):g} GiB"


def _clocks(gpu: dict[str, Any]) -> str:
    parts = []
    if gpu.get("sm_clock_mhz") not in (None, ""):
        parts.append(f"SM {gpu['sm_clock_mhz']} MHz")
    if gpu.get("memory_clock_mhz") not in (None, ""):
        parts.append(f"memory {gpu['memory_clock_mhz']} MHz")
    if gpu.get("temperature_c") not in (None, ""):
        parts.append(f"{gpu['temperature_c']} °C")
    return ", ".join(parts)


def _limits(limits: dict[str, Any]) -> str:
    parts = []
    if limits.get("memory_bytes"):
        parts.append(f"memory {_gib(limits['memory_bytes'])}")
    if limits.get("processes"):
        parts.append(f"{limits['processes']} processes")
    if limits.get("open_files"):
        parts.append(f"{limits['open_files']} open files")
    if limits.get("scratch_bytes"):
        parts.append(f"scratch {_gib(limits['scratch_bytes'])}")
    if limits.get("cpu_s"):
        parts.append(f"CPU {limits['cpu_s']} s")
    if "cgroup" in limits:
        parts.append(f"cgroup {limits['cgroup']}" if limits["cgroup"] else "no cgroup (rlimits only)")
    return ", ".join(parts)


def run_environment(report: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The environment a report records (docs/report-schema.md, `hardware`, `sandbox`, `manifest.seed`);
    a key the report lacks gives no row."""
    if not report:
        return []
    hw = report.get("hardware") or {}
    start, end = hw.get("gpu_start") or {}, hw.get("gpu_end") or {}
    rows: list[tuple[str, Any]] = [
        ("Device", hw.get("name")),
        ("Driver", start.get("driver") or end.get("driver")),
        ("CUDA", hw.get("cuda")),
        ("SMs", hw.get("sm_count")),
        # The report's GB are decimal (the runner's bytes / 1e9), the sandbox limits' binary: one unit here.
        ("Device memory", _gib(hw["memory_gb"] * 1e9) if hw.get("memory_gb") else ""),
        ("Clocks at start", _clocks(start)),
        ("Clocks at end", _clocks(end)),
        (
            "Peak bandwidth (roofline)",
            f"{hw['roofline_peak_gbs']:g} GB/s" if hw.get("roofline_peak_gbs") else "",
        ),
        ("Measured copy", f"{hw['measured_copy_gbs']:g} GB/s" if hw.get("measured_copy_gbs") else ""),
        ("PyTorch", hw.get("torch")),
        ("Triton", hw.get("triton")),
        ("Python", hw.get("python")),
        ("DuckDB", hw.get("duckdb")),
        ("Harness", report.get("harness_version")),
        ("Report schema", report.get("schema_version")),
    ]
    sandbox = report.get("sandbox") or {}
    if sandbox.get("backend"):
        flag = sandbox.get("isolated")
        isolated = "" if flag is None else " (isolated)" if flag else " (not isolated)"
        rows.append(("Sandbox", sandbox["backend"] + isolated))
    rows.append(("Sandbox limits", _limits(sandbox.get("limits") or {})))
    scale = report.get("scale_factor")
    checks = report.get("check_scale_factors") or []
    if scale is not None:
        rows.append(
            (
                "Scale factor",
                f"SF{scale:g}"
                + (f" (also checked at SF{', SF'.join(f'{c:g}' for c in checks)})" if checks else ""),
            )
        )
    rows.append(("Seed", (report.get("manifest") or {}).get("seed")))
    if report.get("wall_s"):  # 0 is what a report says when it did not measure
        rows.append(("Evaluation wall time", f"{report['wall_s']:.0f} s"))
    return [(label, str(value)) for label, value in rows if value not in (None, "")]
