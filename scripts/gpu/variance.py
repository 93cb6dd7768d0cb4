"""Where the run-to-run spread of the timed medians comes from (issue 4), on the lent GPU.

Profiler device time per call was the same in every run (within 1%) while the host-clock medians of
the same calls moved 10-20% between runs (docs/benchmarks.md, session 3): the spread is in the host's
share of a timed call (launches, Python, synchronize). This starts one fresh process per sample, as
the harness starts a runner per query, and in each times the eager Q6 and Q14 TorchPlans and the
Triton Q14 and CUDA Q6 example kernels with the harness's own timing loop (evaluator/timing.py), then
each call's device time with CUDA events. The conditions: the host idle; DuckDB busy beside it with
half the cores, as the harness's answers can be; the same with DuckDB and the timing process on
disjoint cores; DuckDB with all the cores. Each sample also reads the host's steal time.

    python3 scripts/gpu/variance.py SF_FOLDER [SECONDS_OF_TIMING] > variance.json
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEED = 20261202
BUSY_SQL = """SELECT l_returnflag, l_linestatus, sum(l_quantity),
  sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), avg(l_discount), count(*)
  FROM lineitem WHERE l_shipdate <= DATE '1998-09-02' GROUP BY 1, 2"""
# (name, cores of the timing process, DuckDB threads, cores of DuckDB); None: not pinned.
CORES = os.cpu_count() or 2
HALF = CORES // 2
LOW, HIGH = set(range(HALF)), set(range(HALF, CORES))
CONDITIONS = {
    "idle": (None, 0, None),
    "duckdb-half": (None, HALF, None),
    "duckdb-half-pinned": (HIGH, HALF, LOW),
    "duckdb-all": (None, CORES, None),
}
ORDER = ["idle", "duckdb-half", "duckdb-half-pinned", "idle", "duckdb-half", "duckdb-half-pinned",
         "duckdb-all", "idle"]  # fmt: skip


def steal_ticks() -> tuple[int, int]:
    """(steal, total) jiffies of all CPUs so far: time the hypervisor ran something else on our vCPUs."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return fields[7], sum(fields)


def example_calls(sf_folder: Path, device) -> dict:
    """The eager Q6 and Q14 plans and the CUDA Q6 and Triton Q14 examples, each a call of the rep's
    index on the query's tables and rotated parameter sets; on a CPU (a dry run) the Triton Q6 stands
    in for the CUDA one."""
    from evaluator.queries import QUERIES
    from evaluator.runner.kernel_loader import load_kernel
    from evaluator.tpch.load import load_tables

    kernels = {6: EXAMPLES / "cuda-core" / "q06.py", 14: EXAMPLES / "triton-core" / "q14.py"}
    if device.type == "cpu":
        kernels[6] = EXAMPLES / "triton-q06-core" / "q06.py"
    calls = {}
    for number, kernel in kernels.items():
        query = QUERIES[number]
        tables = load_tables(sf_folder, query.columns(), device)
        params = query.parameter_sets(4, SEED)
        for name, fn in (("eager", query.plan().run_query), ("kernel", load_kernel(query, kernel, "core"))):
            calls[f"q{number:02d}-{name}"] = lambda rep, fn=fn, t=tables, p=params: fn(t, **p[rep % len(p)])
    return calls


def sample(sf_folder: Path, seconds: float) -> dict:
    """One process's timings: host-clock medians (the harness's loop), then CUDA-event medians."""
    import torch

    from evaluator.timing import L2_FLUSH_BYTES, TimingPolicy, time_rotated

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # the CPU: a dry run of this script
    calls = example_calls(sf_folder, device)
    policy = TimingPolicy(warmup_s=0.5, min_reps=30, min_time_s=seconds, max_time_s=seconds)
    steal0, total0 = steal_ticks()
    host = time_rotated(calls, device=device, policy=policy, strata=5)
    steal1, total1 = steal_ticks()
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device)
    events = {}
    for name, fn in calls.items() if device.type == "cuda" else ():
        ms = []
        for rep in range(50):
            flush.fill_(0)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            fn(rep)
            end.record()
            torch.cuda.synchronize()
            ms.append(start.elapsed_time(end))
        events[name] = statistics.median(ms)
    return {
        "host_ms": {name: s.median_ms for name, s in host.items()},
        "reps": {name: s.n for name, s in host.items()},
        "event_ms": events,
        "steal_pct": round(100 * (steal1 - steal0) / max(1, total1 - total0), 2),
        "cpu": last_cpu(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "loadavg": os.getloadavg(),
    }


def busy(sf_folder: Path, threads: int) -> None:
    """DuckDB running TPC-H Q1 over and over with `threads` threads, until killed."""
    import duckdb

    con = duckdb.connect(str(sf_folder / "tpch.duckdb"), read_only=True)
    con.execute(f"SET threads = {threads}")
    while True:
        con.execute(BUSY_SQL).fetchall()


def warm_up(calls: dict) -> None:
    """The harness's warm-up, call by call: at least 4 calls and 0.5 s each (queued; the caller syncs)."""
    for fn in calls.values():
        started, reps = time.perf_counter(), 0
        while reps < 4 or time.perf_counter() - started < 0.5:
            fn(reps)
            reps += 1


def last_cpu() -> int:
    """The CPU this process last ran on (field 39 of /proc/self/stat)."""
    return int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[36])


def sample_output(out: subprocess.CompletedProcess) -> dict:
    """A sample process's result: the JSON on its last line of output, or its output's tail as the error."""
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": (out.stdout + out.stderr)[-2000:]}


def main(sf_folder: Path, seconds: float) -> None:
    has_lscpu = os.path.exists("/usr/bin/lscpu")
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True) if has_lscpu else None
    results = []
    for number, condition in enumerate(ORDER, 1):
        pin, threads, busy_cores = CONDITIONS[condition]
        burner = None
        if threads:
            burner = subprocess.Popen(
                [sys.executable, __file__, "busy", str(sf_folder), str(threads)],
                preexec_fn=(lambda c=busy_cores: os.sched_setaffinity(0, c)) if busy_cores else None,
            )
            time.sleep(2)  # its connection open and its threads busy
        started = time.time()
        out = subprocess.run(
            [sys.executable, __file__, "sample", str(sf_folder), str(seconds)],
            capture_output=True, text=True,
            preexec_fn=(lambda c=pin: os.sched_setaffinity(0, c)) if pin else None,
        )  # fmt: skip
        if burner is not None:
            burner.kill()
            burner.wait()
        row = {"sample": number, "condition": condition, "wall_s": round(time.time() - started, 1)}
        results.append(row | sample_output(out))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    print(json.dumps({"cores": CORES, "lscpu": lscpu.stdout if lscpu else "", "samples": results}, indent=1))


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "sample":
        print(json.dumps(sample(Path(sys.argv[2]), float(sys.argv[3]))))
    elif what == "busy":
        busy(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        main(Path(what), float(sys.argv[2]) if len(sys.argv) > 2 else 3.0)
