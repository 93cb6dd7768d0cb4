#!/usr/bin/env bash
# The GPU-only attacks on the lent H200, each run as Q6 through the harness (the kernel's runner inside
# bubblewrap under the sandbox's limits, the baseline's a trusted runner beside it), at SF0.1 with the
# eager baseline (no compile time). About 4 minutes.
# Needs .whl (../shared/gpu/wheels.sh) and .deb (../shared/gpu/bubblewrap.sh): carry [".whl", ".deb"].
# Prints one line per attack (OK when the outcome is the expected one) and writes $OUT/sandbox.json.
# ONLY=file1,file2 runs only those attacks' rows.
set -euo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
dpkg -x .deb/bubblewrap_*.deb /tmp/bw && export PATH=/tmp/bw/usr/bin:$PATH
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/sandbox-gpu.txt"
python3 -m evaluator prepare --sf 0.1 --data-dir /tmp/data 2>&1 | grep -v 'col/s' || true
timeout 540 python3 - "$OUT/sandbox.json" <<'EOF' 2>&1 | tee -a "$OUT/sandbox-gpu.txt"
import json, os, shutil, sys, tempfile, time
from pathlib import Path

from evaluator.harness import admission
from evaluator.harness.core import Options, evaluate
from evaluator.kernelset import kernel_set_from_dir
from evaluator.timing import TimingPolicy
from sandbox.core import BubblewrapLauncher, cgroup_support
from sandbox.limits import Limits

ATTACKS = Path("tests/sandbox/attacks")
SF = Path("/tmp/data/sf0.1")
checked = admission.check
# name, kernel file (None: the example set; examples/...: that whole set), admission on?, queries, expected
ROWS = [
    ("example set under the limits (RLIMIT_DATA with CUDA)", None, True, (6,), "passed"),
    # load_inline's build in the runner's private /tmp, a tmpfs (no host folder is writable)
    ("CUDA example set, built in the runner's tmpfs", "examples/cuda-core", True, (6,), "passed"),
    ("CUDA illegal address (Triton store), then Q1", "gpu_illegal_address", True, (6, 1), "crashed"),
    ("GPU memory exhaustion", "gpu_out_of_memory", True, (6,), "out_of_memory"),
    # ~20 ms a call: the runner's device-wide synchronize waits for it, past 10x the baseline's median
    ("side stream left running (admission off)", "gpu_side_stream", False, (6,), "timeout"),
    # the 20 ms queued on the default stream: packing the results waits for them
    ("torch.cuda.synchronize patched (admission off)", "gpu_patch_synchronize", False, (6,), "timeout"),
    # the result computed on a side stream behind 20 ms of work, synchronize patched: packed unfinished
    ("deferred work on a side stream (admission off)", "gpu_deferred_work", False, (6,), "wrong_answer"),
    # 20 ms a call left on a side stream into the baseline's batch: until 0.6.10 the baseline's batch ran
    # past its limit (twice the baseline's pace) before the disturbance rule had a median (sessions 8, 14);
    # since, the baseline's runner drains the device first (`drain`): left busy before every batch
    ("the device kept busy through the baseline's batch (admission off)", "gpu_disturb_the_baseline", False,
     (6,), "rejected"),
    # 5 ms on a side stream the moment each batch's answer is sent, none inside the kernel's own batches: its
    # runner, frozen while the baseline is timed (0.6.8), launches nothing more, but what is on the device
    # runs on. 0.6.8: the disturbance rule, at 1.52x (H200). 0.6.10 drains the device before each of the
    # baseline's batches: rejected where the drain waits over 1 ms before most of them; where it does not
    # (H100, session 20: 23 of 290), the baseline must have run at its own pace, so the kernel, which is
    # the baseline's own plan, passes at about 1.0x (`device_busy` and `beside/alone` below)
    ("device work left the moment each batch is answered (admission off)", "gpu_work_after_answering", False,
     (6,), "rejected, or passed at the plan's pace"),
    # caught by the fresh parameter sets and the first calls on new content (evaluator/harness/fresh.py)
    # admission refuses these in a Triton set (time, the TorchPlans): switched off to show the harness
    ("results cached by pointer and parameters (admission off)", "cache_by_pointer", False, (6,), "rejected"),
    ("results cached by parameters (admission off)", "cache_by_parameters", False, (6,), "wrong_answer"),
    ("the runner's batch command answered from a cache (admission off)", "take_over_the_runner", False, (6,),
     "wrong_answer"),
    ("every answer precomputed per table content (admission off)", "cube_per_table_content", False, (6,),
     "rejected"),
    ("answers precomputed per table content, failing on content it has not seen (admission off)",
     "cube_failing_on_new_content", False, (6,), "runtime_error"),
    ("answers forged on the channel at import (admission off)", "forge_the_answers", False, (6,), "wrong_answer"),
    # 50 ms a call, rebound clocks or not: the harness's clock sees it (past 10x the baseline: timeout)
    ("clocks rebound (admission off)", "rebind_the_clock", False, (6,), "timeout"),
    ("the baseline's plan slowed in the kernel's process (admission off)", "slow_the_baseline", False, (6,),
     "passed"),
]
limits = Limits.default()
print(f"limits: {limits.describe()} cgroup: {cgroup_support()}", flush=True)
results = []
only = [name for name in os.environ.get("ONLY", "").split(",") if name]  # attack files, e.g. ONLY=cube_per_table_content
for title, attack, admitted, queries, expected in ROWS:
    if only and attack not in only:
        continue
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        kernel_dir = Path(scratch) / "set"
        whole_set = attack if attack and attack.startswith("examples/") else None
        shutil.copytree(whole_set or "examples/triton-q06-full", kernel_dir)
        if attack and not whole_set:
            shutil.copy(ATTACKS / f"{attack}.py", kernel_dir / "q06.py")
        admission.check = checked if admitted else (lambda source, filename="", **_: [])
        options = Options(sf_folder=SF, device="cuda", baseline="eager", trials=2, query_timeout_s=90,
                          queries=queries, timing=TimingPolicy.for_device("cuda", 0.5))
        launcher = BubblewrapLauncher(device="cuda", deadline=time.monotonic() + 300, limits=limits)
        try:
            report = evaluate(kernel_set_from_dir(kernel_dir), kernel_dir, options, launcher).to_dict()
            rows = {q["query"]: q for q in report["queries"]}
        except Exception as exc:  # an evaluator error is a finding too
            rows = {6: {"status": f"EVALUATOR ERROR {type(exc).__name__}", "reason": str(exc)}}
    q6 = rows[6]
    got = q6["status"]
    ok = got == expected
    if expected == "rejected, or passed at the plan's pace":  # over 1.1x: the baseline was slowed
        ok = got == "rejected" or (got == "passed" and q6["speedup"] <= 1.1)
    mark = "OK " if ok else "UNEXPECTED "
    others = {n: r["status"] for n, r in rows.items() if n != 6}
    stats = q6.get("stats") or {}
    alone = (stats.get("baseline_alone") or {}).get("median_ms")
    beside = (stats.get("baseline") or {}).get("median_ms")
    print(f"{mark}{title}: {got} speedup={q6.get('speedup')} kernel_ms={q6.get('kernel_ms')} "
          f"baseline_ms={q6.get('baseline_ms')} "
          f"beside/alone={beside / alone if beside and alone else None} "
          f"frozen={stats.get('kernel_frozen_beside_baseline')} ({stats.get('kernel_freezing_us')} us) "
          f"device_busy={stats.get('device_busy')} "
          f"others={others} ({time.monotonic() - started:.0f} s)\n    {(q6.get('reason') or '')[:300]}", flush=True)
    results.append({"attack": title, "file": attack, "admission": admitted, "expected": expected,
                    "queries": rows, "ok": ok})
Path(sys.argv[1]).write_text(json.dumps({"limits": limits.describe(), "cgroup": cgroup_support(),
                                         "results": results}, indent=2, default=str))
EOF
