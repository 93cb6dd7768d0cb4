#!/usr/bin/env bash
# The harness in this tree on the lent H200 against harness 0.4.1: the example sets through both, on one
# machine, with the same seed (the old one from the compile cache its `warm` filled, the new one from
# its calibration, `baselines`); and what timing from outside costs (scripts/gpu/channel.py).
#   bash scripts/gpu/trust.sh STEP ...
#   steps: prepare (SF10 and SF1), warm (0.4.1's cache for Q1, Q3, Q6, Q14), baselines (this tree's
#   calibration of the same, CAL_JOBS at once; without it each baseline compiles cold in its runner),
#   cold and calibrated (the calibration's cache and record set aside, and back), channel (Q6 compiled
#   and eager at SF10, or at CHANNEL_SF, prepared first), host (scripts/gpu/host.py: Q6 and Q14 under
#   each condition of an evaluation), switch (scripts/gpu/switch.py: Q6 compiled, the Triton Q3 and Q14,
#   call by call under each suspect), procs (scripts/gpu/procs.py: the Triton Q3 kernel and the compiled
#   Q3 in many runners each, timed in turns on one core), drift (the same, one runner of the Triton Q3
#   kernel started on the harness's cores and one on DuckDB's: the host's speed now), autotune
#   (scripts/gpu/autotune.py), monitor (the GPU's clocks, the busiest processes and each core's steal,
#   logged until `unmonitor`), bundle (the logs so far into logs.tgz), probe (scripts/gpu/probe.py: a
#   round's host probe against the usual),
#   new-SET and old-SET (SET: cuda-core or triton-core; old-*: the harness of commit d37eae1, unpacked
#   into old/ by `git archive d37eae1 evaluator sandbox | tar -x -C old`, carried), selftime-SET (new-SET
#   in a copy of this tree whose runners and harness log their own clocks, scripts/gpu/selftime.py; its
#   report is new-SET's, so give it a ROUND of its own), prev-SET (new-SET with the harness unpacked into
#   prev/, a tree before this one's change: `git archive REV evaluator sandbox | tar -x -C prev`), tail-SET
#   (new-SET with `--ahead tail`: no runner started ahead, so none has set the profiler up before its
#   timed calls, as every query's but the first has under the default), summary
#   (a row per report and query, then per query each harness's speedups over its reports, 0.6.x's cold
#   and calibrated ones apart, their median and the moves against 0.4.1).
#   ROUND=N names the reports of new-* and old-* `...-rN`, so that rounds on one machine compare.
# Carry .whl (../shared/gpu/wheels.sh) and old/. Data, cache and reports live under /tmp/dkb-trust, which
# stays while the machine is held: chain the calls, each within 30 s of the last.
set -uo pipefail
# Once a machine: a second install into the same target prints a warning for every package.
[ -f /tmp/site/.installed ] || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --target /tmp/site .whl/*.whl && touch /tmp/site/.installed; }
export PYTHONUNBUFFERED=1 SEED=${SEED:-20261202}
OUT=${OUT:-/tmp/out}; VAR=/tmp/dkb-trust; mkdir -p "$OUT" "$VAR/reports" "$VAR/logs"
DATA=$VAR/data CACHE=$VAR/cache
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/trust.log"; }
prepare_sf() { PYTHONPATH=/tmp/site:$PWD python3 -m evaluator prepare --sf "$1" --data-dir "$DATA" 2>&1 \
  | grep -v 'col/s' | tail -1; }
queries_of() { ls "$1"/q*.py | sed 's/.*q0*\([0-9]*\)\.py$/\1/' | paste -sd, -; }
run_set() {  # run_set ROOT SET NAME OPTION...: one report with ROOT's harness
  local root=$1 set=$2 name=$3 started=$SECONDS; shift 3
  (cd "$root" && PYTHONPATH=/tmp/site:$PWD python3 -m evaluator run "$OLDPWD/examples/$set" --sf 10 \
     --check-sf 1 --data-dir "$DATA" --device cuda --seed "$SEED" --out "$VAR/reports/$name.json" "$@") \
     2>&1 | grep -v 'col/s' | tail -8 | tee -a "$OUT/trust.log"
  log "$name: $((SECONDS - started)) s"
}
for step in "$@"; do
  case $step in
    prepare) for sf in 1 10; do prepare_sf $sf; done; log "prepared" ;;
    warm) (cd old && PYTHONPATH=/tmp/site:$PWD python3 -m evaluator warm --cache-dir "$CACHE" --sf 10 \
            --data-dir "$DATA" --device cuda --seed "$SEED" --queries 1,3,6,14 --jobs 4) 2>&1 | tee -a "$OUT/trust.log" ;;
    baselines) PYTHONPATH=/tmp/site:$PWD python3 -m evaluator baselines --sf 10 --data-dir "$DATA" \
                 --device cuda --queries 1,3,6,14 --jobs "${CAL_JOBS:-4}" 2>&1 | tee -a "$OUT/trust.log"
               cp "$DATA"/baselines/*.json "$VAR/logs/" ;;
    cold) mv "$DATA/compile-cache" "$DATA/compile-cache.off"; mv "$DATA/baselines" "$DATA/baselines.off"; log "cold" ;;
    calibrated) mv "$DATA/compile-cache.off" "$DATA/compile-cache"; mv "$DATA/baselines.off" "$DATA/baselines"
                log "calibrated" ;;
    autotune) PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/autotune.py "$DATA/sf10" ${AUTOTUNE_ARGS:-} \
                --out "$VAR/logs/autotune.json" 2>&1 | grep -v '^{' | tee -a "$OUT/trust.log" ;;
    monitor) nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,temperature.gpu,\
clocks_event_reasons.active,utilization.gpu,memory.used --format=csv -lms 500 > "$VAR/logs/smi.csv" 2>&1 &
             echo $! > "$VAR/monitors"
             (while sleep 3; do date +%T; ps -eLo pid,tid,psr,pcpu,etimes,args --sort=-pcpu | head -12 | cut -c1-160
              nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader; done) > "$VAR/logs/ps.log" 2>&1 &
             echo $! >> "$VAR/monitors"
             # Per core, what the hypervisor took (/proc/stat's eighth field, steal): session 29's hosts drifted.
             (while sleep 3; do date +%T; grep '^cpu[0-9]' /proc/stat; done) > "$VAR/logs/stat.log" 2>&1 &
             echo $! >> "$VAR/monitors"
             log "monitoring" ;;
    probe) PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/probe.py 2>&1 | tee -a "$OUT/trust.log" ;;
    unmonitor) [ -f "$VAR/monitors" ] && kill $(cat "$VAR/monitors") 2>/dev/null; rm -f "$VAR/monitors" ;;
    bundle) tar -C "$VAR" -czf "$OUT/logs.tgz" logs 2>/dev/null; log "bundled" ;;
    channel) sf=${CHANNEL_SF:-10}  # 5: compiled Q6 a 0.5 ms call on an H100 (session 27), as issue 14 names
             prepare_sf "$sf"
             for mode in ${CHANNEL_MODES:-compiled eager}; do PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/channel.py \
               "$DATA/sf$sf" --mode $mode --rounds "${CHANNEL_ROUNDS:-3}" --out "$OUT/channel-sf$sf-$mode.json" 2>&1 \
               | tail -7 | tee -a "$OUT/trust.log"; done ;;
    switch) PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/switch.py "$DATA/sf10" --candidate 6 \
              --candidate 3=examples/triton-core/q03.py --candidate 14=examples/triton-core/q14.py \
              --out "$OUT/switch.json" 2>&1 | grep -v ' done$' | tee -a "$OUT/trust.log" ;;
    procs) PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/procs.py "$DATA/sf10" --norand \
             --candidate 3=examples/triton-core/q03.py --candidate 3 ${PROCS_ARGS:-} --out "$OUT/procs.json" 2>&1 \
             | grep -v ' done$' | tee -a "$OUT/trust.log" ;;
    drift) PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/procs.py "$DATA/sf10" --procs 1 --rounds 20 \
             --candidate 3=examples/triton-core/q03.py --out "$VAR/logs/drift-$(date +%H%M%S).json" 2>&1 \
             | grep apart | sed "s/^/[$(date +%T)] drift: /" | tee -a "$OUT/trust.log" ;;
    host) PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/host.py "$DATA/sf10" --out "$OUT/host.json" 2>&1 \
            | grep -v '^{' | tee -a "$OUT/trust.log" ;;
    new-*) run_set "$PWD" "${step#new-}" "$step${ROUND:+-r$ROUND}" --sandbox process ;;
    tail-*) run_set "$PWD" "${step#tail-}" "$step${ROUND:+-r$ROUND}" --sandbox process --ahead tail ;;
    selftime-*) set_=${step#selftime-}; name=$set_${ROUND:+-r$ROUND}; copy=/tmp/dkb-selftime/$name
                rm -rf "$copy" && mkdir -p "$copy/logs" && cp -a . "$copy/tree" \
                  && python3 scripts/gpu/selftime.py patch "$copy/tree" "$copy/logs" \
                  && (cd "$copy/tree" && bash scripts/gpu/trust.sh "new-$set_")
                python3 scripts/gpu/selftime.py summarize "$copy/logs" | tee "$OUT/selftime-$name.md"
                tar -C "$copy" -czf "$OUT/selftime-$name-logs.tgz" logs ;;
    prev-*) run_set "$PWD/prev" "${step#prev-}" "$step${ROUND:+-r$ROUND}" --sandbox process ;;
    old-*) run_set "$PWD/old" "${step#old-}" "$step${ROUND:+-r$ROUND}" --compile-cache "$CACHE" --no-prepare \
             --queries "$(queries_of "examples/${step#old-}")" ;;
    summary) python3 - "$VAR/reports" <<'EOF' | tee "$OUT/summary.md"
import json, sys
from pathlib import Path
from statistics import median
reports = {p.stem: json.loads(p.read_text()) for p in sorted(Path(sys.argv[1]).glob("*.json"))}
print("| report | harness | query | status | baseline ms | alone ms | kernel ms | speedup | calls/sample | set aside | "
      "DuckDB s in timing | round trip us (baseline, kernel) | wall s | kernel CPU beside baseline | "
      "kernel frozen beside baseline (time to freeze) | echo us (baseline, kernel) | device busy, beside; alone; fresh |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
def busy(b):  # 0.6.10: batches the drain found the device busy before, of all, and the longest wait
    return f"{b['busy']}/{b['samples']} ({b['max_ms']} ms)" if b else ""
for name, r in reports.items():
    for q in r["queries"]:
        if q["status"] == "missing":  # a query the set has no kernel for (0.6.x reports all 22)
            continue
        k = (q["stats"].get("kernel") or {})
        wall = (q["stats"].get("wall_s") or {})
        seconds = wall.get("query") or (wall.get("runner", 0) + wall.get("judge", 0))
        aside = f"{k['set_aside']} of {k['set_aside'] + k['n']}" if "set_aside" in k else ""
        b = q["stats"].get("baseline") or {}
        if b.get("aside_median_ms"):  # 0.6.12: the baseline's median over the rounds set aside
            aside += f" (baseline {b['aside_median_ms']:.4f} there)"
        duckdb = q["stats"].get("answering_s", {}).get("timing", "")
        trip = q["stats"].get("round_trip_us", {})  # 0.6.6: the baseline's is taken off both sides
        trip = f"{trip['baseline']:.1f}, {trip.get('kernel', 0):.1f}" if "baseline" in trip else ""
        alone = q["stats"].get("baseline_alone", {}).get("median_ms")
        alone = f"{alone:.4f}" if alone else ""
        echo = q["stats"].get("round_trip_us", {}).get("echo", {})  # 0.6.10: what came off each side
        echo = f"{echo.get('baseline', '')}, {echo.get('kernel', '')}" if echo else ""
        device = q["stats"].get("device_busy", {})
        device = "; ".join(busy(device.get(part)) for part in ("beside", "alone", "fresh")) if device else ""
        print(f"| {name} | {r['harness_version']} | Q{q['query']:02d} | {q['status']} | {q['baseline_ms']:.4f} | {alone} | "
              f"{(q['kernel_ms'] or 0):.4f} | {(q['speedup'] or 0):.3f} | {k.get('calls', 1)} | {aside} | "
              f"{duckdb} | {trip} | {seconds:.1f} | {q['stats'].get('kernel_cpu_beside_baseline', '')} | "
              f"{q['stats'].get('kernel_frozen_beside_baseline', '')} ({q['stats'].get('kernel_freezing_us', '')} us) | "
              f"{echo} | {device} |")
    print(f"| {name} | overall | | | | | | {r['overall_speedup'] or 0:.3f} | | | | | {r['wall_s']:.0f} | | | | |")
print()  # per set and query, each harness's speedups over its reports (0.6.x's cold and calibrated ones
# apart: a query timed against its calibration's compiled baseline, or one compiled in its runner), the move
print("| set, query | 0.6.x (new-*) rounds | median | spread | 0.4.1 (old-*) rounds | median | spread | move | "
      "prev-* rounds | median | spread | move | tail-* rounds | median | spread | move |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
def calibrated(q):
    return q["stats"].get("baseline_calibration") is not None
for set_ in ("cuda-core", "triton-core"):
    sides = ("new", "old", "prev", "tail")
    runs = {side: [r for n, r in reports.items() if n.startswith(f"{side}-{set_}")] for side in sides}
    numbers = sorted({q["query"] for rs in runs.values() for r in rs for q in r["queries"] if q["speedup"]})
    for number, kind in ((n, k) for n in numbers for k in ("calibrated", "cold")):
        cells, medians = {}, {}
        for side in sides:
            found = [q["speedup"] for r in runs[side] for q in r["queries"] if q["query"] == number and q["speedup"]
                     and (side == "old" or calibrated(q) == (kind == "calibrated"))]
            medians[side] = median(found) if found else None
            spread = f"{100 * (max(found) / min(found) - 1):.1f}%" if found else ""
            cells[side] = [", ".join(f"{x:.3f}" for x in found), f"{medians[side]:.3f}" if found else "", spread]
        if all(medians[side] is None for side in sides if side != "old"):
            continue
        def move(side):
            return f"{100 * (medians[side] / medians['old'] - 1):+.1f}%" if medians[side] and medians["old"] else ""
        row = cells["new"] + cells["old"] + [move("new")]
        row += [cell for side in ("prev", "tail") for cell in cells[side] + [move(side)]]
        print(f"| {set_} Q{number:02d}, 0.6.x {kind} | {' | '.join(row)} |")
EOF
      tar -C "$VAR" -czf "$OUT/reports.tgz" reports ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
