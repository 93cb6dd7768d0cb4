"""Summarize evaluation reports: per set and query, the medians of repeated runs and their spread.

    python3 scripts/gpu/summarize.py REPORT.json ...    (names: <set>-r<run>.json, e.g. triton-core-r2.json)

Prints Markdown: per query the kernel and baseline medians of each run, the spread of each across runs
((max - min) / median), status, labels, share of device time and launches; per set the overall speedup
of each run, its spread and the evaluation's wall time. Standard library only: it runs anywhere.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def spread(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    if len(values) < 2:
        return None
    return (max(values) - min(values)) / statistics.median(values)


def fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def load(paths: list[str]) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = defaultdict(list)
    for path in sorted(paths):
        match = re.match(r"(.+?)(?:-r(\d+))?\.json$", Path(path).name)
        if not match:
            continue
        report = json.loads(Path(path).read_text())
        report["_run"] = int(match.group(2) or 1)
        runs[match.group(1)].append(report)
    for reports in runs.values():
        reports.sort(key=lambda r: r["_run"])
    return runs


def summarize(runs: dict[str, list[dict]]) -> str:
    lines = []
    for name, reports in runs.items():
        first = reports[0]
        lines += [
            f"## {name}: {first['language']} {first['scope']}, SF{first['scale_factor']:g}"
            f" (checks at SF {', '.join(f'{s:g}' for s in first.get('check_scale_factors', [])) or '-'}),"
            f" harness {first['harness_version']}, {first['hardware'].get('name')}",
            "",
            "| query | status | baseline (mode) ms per run | kernel ms per run | kernel spread "
            "| baseline spread | speedup | reps | fresh | share | launches (baseline) | label |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        numbers = sorted({q["query"] for r in reports for q in r["queries"]})
        for number in numbers:
            rows = [next(q for q in r["queries"] if q["query"] == number) for r in reports]
            kernel = [q["kernel_ms"] for q in rows]
            baseline = [q["baseline_ms"] for q in rows]
            modes = {q["stats"].get("baseline_mode", "?") for q in rows}
            statuses = {q["status"] for q in rows}
            speedups = [q["speedup"] for q in rows if q["speedup"]]
            labels = {"fallback" for q in rows if q["stats"].get("framework_fallback")}
            labels |= {"flagged" for q in rows if q["stats"].get("flagged")}
            labels |= {"slow-host" for q in rows if q["stats"].get("slow_host")}
            reason = next((q["reason"] for q in rows if q["reason"]), "")
            last = rows[-1]
            lines.append(
                f"| Q{number:02d} | {'/'.join(sorted(statuses))} "
                f"| {' '.join(fmt(b) for b in baseline)} ({'/'.join(sorted(modes))}) "
                f"| {' '.join(fmt(k) for k in kernel)} | {pct(spread(kernel))} | {pct(spread(baseline))} "
                f"| {fmt(statistics.median(speedups), '.2f') + 'x' if speedups else '-'} "
                f"| {_count((last['stats'].get('kernel') or last['stats'].get('baseline') or {}).get('n'))} "
                f"| {fmt((last['stats'].get('fresh') or {}).get('slowdown'), '.2f')} "
                f"| {fmt(last.get('kernel_time_share'), '.2f')} "
                f"| {_count(last.get('launches'))} ({_count(last['stats'].get('baseline_launches'))}) "
                f"| {' '.join(sorted(labels))} {reason[:120]} |"
            )
        overall = [r["overall_speedup"] for r in reports]
        walls = " ".join(f"{r['wall_s']:.0f}" for r in reports)
        lines += [
            "",
            f"Overall speedup per run: {' '.join(fmt(o, '.3f') for o in overall)}; "
            f"spread {pct(spread(overall))}. Pass rate {first['pass_rate']:.0%}. "
            f"Wall time per run, s: {walls}.",
            "",
            *_hardware(reports),
            *_host(reports),
            *_time_spent(reports[-1]),
        ]
    return "\n".join(lines)


def _hardware(reports: list[dict]) -> list[str]:
    """The GPU's state at each run's start and end, and the measured copy bandwidth."""
    lines = []
    for r in reports:
        hw = r["hardware"]
        start, end = hw.get("gpu_start") or {}, hw.get("gpu_end") or {}
        lines.append(
            f"- run {r['_run']}: copy bandwidth {fmt(hw.get('measured_copy_gbs'), '.0f')} GB/s measured "
            f"(peak {fmt(hw.get('roofline_peak_gbs'), '.0f')}); SM clock {start.get('sm_clock_mhz', '-')} -> "
            f"{end.get('sm_clock_mhz', '-')} MHz, {start.get('temperature_c', '-')} -> "
            f"{end.get('temperature_c', '-')} C"
        )
    return [*lines, ""]


def _host(reports: list[dict]) -> list[str]:
    """Harness 0.4.0 on: per query and run, the harness's usual host probe, the session's own and the
    rounds set aside as timed on a slowed host (evaluator/timing.py)."""
    lines = []
    for number in sorted({q["query"] for r in reports for q in r["queries"]}):
        cells = []
        for r in reports:
            q = next((q for q in r["queries"] if q["query"] == number), None)
            stats = (q or {}).get("stats") or {}
            timed = stats.get("baseline") or {}
            if "set_aside" not in timed:
                continue
            rounds = timed["n"] + timed["set_aside"]
            usual = f"{fmt(stats.get('host_usual_us'), '.1f')}/{fmt(timed.get('host_probe_us'), '.1f')} µs"
            busy = " ".join(  # 0.6.10: the baseline's runner's waits for an idle device
                f"{where} {b['busy']}/{b['samples']} (max {fmt(b['max_ms'], '.2f')} ms)"
                for where, b in (stats.get("device_busy") or {}).items()
            )
            busy = f", device busy before the baseline's batches: {busy}" if busy else ""
            aside = timed.get("aside_median_ms")  # 0.6.12: how fast those rounds ran
            aside = f" (at {fmt(aside, '.3f')} ms against {fmt(timed['median_ms'], '.3f')})" if aside else ""
            cells.append(f"run {r['_run']} {usual}, {timed['set_aside']} of {rounds} set aside{aside}{busy}")
        if cells:
            lines.append(f"- Q{number:02d} host probe (harness/session): " + "; ".join(cells))
    return [*lines, ""] if lines else []


def _time_spent(report: dict) -> list[str]:
    """Per query of one run: its wall time, the harness's setup, the runner's process (cache copy,
    start, exit) and phases, the judging (waiting for DuckDB)."""
    lines = [f"Where run {report['_run']}'s time went, s per query (runner: process + its phases):", ""]
    for q in report["queries"]:
        wall = q["stats"].get("wall_s") or {}
        if not wall:
            continue
        phases = wall.get("runner_phases") or {}
        process = wall.get("runner_process") or {}
        rest = wall["runner"] - sum(phases.values()) - sum(process.values())
        parts = ", ".join(f"{name} {value:.1f}" for name, value in {**process, **phases}.items())
        setup = wall.get("setup", 0.0)
        lines.append(
            f"- Q{q['query']:02d}: {setup + wall['runner'] + wall['judge']:.1f} = setup {setup:.1f} + runner "
            f"{wall['runner']:.1f} ({parts}, other {rest:.1f}) + judge {wall['judge']:.1f}"
        )
    return [*lines, ""]


if __name__ == "__main__":
    print(summarize(load(sys.argv[1:])))
