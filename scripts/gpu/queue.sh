#!/usr/bin/env bash
# A device session's steps as a queue: each call runs the next steps that fit in BUDGET seconds, and
# what ran is kept in /tmp/dkb-trust/done, so the same command continues on a warm machine (a lent one
# is given back 30 s after a call; a call is cut at 10 minutes). Sessions 34 and 35 ran copies of this
# (docs/results/2026-12-07-*/). Carry .whl, .deb and old/ (scripts/gpu/trust.sh says how).
#   export OUT && QUEUE="110:-:prepare 75:1:new-cuda-core ..." BUDGET=560 bash scripts/gpu/queue.sh
# (the device's $OUT exported, so that trust.sh and sandbox.sh write there too).
# An entry is EST:ROUND:STEP: EST the seconds it is expected to take, ROUND a label ("-": none), STEP
# one of trust.sh's steps (ROUND its ROUND), q06null, switch-q06, switch-q03 and switch-q14 (--profile),
# placement, or sandbox (ROUND a or b: session 25's two lists of scripts/gpu/sandbox.sh's rows).
set -uo pipefail
BUDGET=${BUDGET:-560}; export OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/dkb-trust; DONE=/tmp/dkb-trust/done; touch $DONE
SF10=/tmp/dkb-trust/data/sf10
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$OUT/gpu.txt"; nproc >> "$OUT/gpu.txt"
echo "card: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
ATTACKS_A=examples/cuda-core,gpu_side_stream,gpu_patch_synchronize,gpu_deferred_work
ATTACKS_B=gpu_illegal_address,gpu_out_of_memory,gpu_disturb_the_baseline,gpu_work_after_answering,rebind_the_clock,cube_per_table_content
log() { echo "[queue] $(date -u +%T.%3N) $*" | tee -a "$OUT/trust.log"; }
# The card's clocks, power and why it holds them back, every 50 ms through the call (one file a call):
# a latency-bound kernel's device time follows the SM clock, a bandwidth-bound one's hardly.
FIELDS=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu
nvidia-smi --query-gpu=clocks_event_reasons.active --format=csv > /dev/null 2>&1 && FIELDS+=,clocks_event_reasons.active
nvidia-smi --query-gpu=$FIELDS --format=csv -lms 50 -f "$OUT/clocks-$(date -u +%H%M%S).csv" & SAMPLER=$!
trap 'kill $SAMPLER 2>/dev/null' EXIT
bash scripts/gpu/trust.sh  # no step: installs the wheels into /tmp/site, once a machine
for item in ${QUEUE:?QUEUE names the steps}; do
  est=${item%%:*}; rest=${item#*:}; round=${rest%%:*}; step=${rest#*:}; key="$round $step"
  grep -qxF -- "$key" $DONE && continue  # `--`: a key may start with "-"
  if [ $((SECONDS + est + 25)) -gt "$BUDGET" ]; then log "stop before $key at ${SECONDS}s"; break; fi
  log "$key at ${SECONDS}s"
  case $step in
    q06null) PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/q06null.py $SF10 2>&1 | tee "$OUT/q06null-$round.md" ;;
    switch-q06) PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/switch.py $SF10 --calls 10 \
        --conditions free,inline,inline+flush,pair --candidate 6=examples/cuda-core/q06.py --candidate 6 \
        --out "$OUT/switch-q06-$round.json" 2>&1 | grep -v ' done$' | tee -a "$OUT/trust.log" ;;
    switch-q03) PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/switch.py $SF10 --calls 10 --profile \
        --conditions free+flush,inline+flush,pair --candidate 3=examples/triton-core/q03.py --candidate 3 \
        --out "$OUT/switch-q03-$round.json" 2>&1 | grep -v ' done$' | tee -a "$OUT/trust.log" ;;
    switch-q14) PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/switch.py $SF10 --calls 7 --rounds 4 \
        --conditions free,free+sandboxed,inline,pair --candidate 14=examples/triton-core/q14.py --profile \
        --out "$OUT/switch-q14-$round.json" 2>&1 | grep -v ' done$' | tee -a "$OUT/trust.log" ;;
    placement) PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/placement.py $SF10 --kernel examples/triton-core/q14.py \
        --kernel examples/cuda-core/q14.py --fixed 3 --rounds 3 --out "$OUT/placement-$round.json" 2>&1 | grep -v ' done$' | tee -a "$OUT/trust.log" ;;
    sandbox) if [ "$round" = a ]; then only=$ATTACKS_A; else only=$ATTACKS_B; fi
      ONLY=$only timeout $((est + 90)) bash scripts/gpu/sandbox.sh 2>&1 | tail -40
      mv "$OUT/sandbox.json" "$OUT/sandbox-$round.json"; mv "$OUT/sandbox-gpu.txt" "$OUT/sandbox-gpu-$round.txt" ;;
    *) if [ "$round" = - ]; then bash scripts/gpu/trust.sh "$step"; else ROUND=$round bash scripts/gpu/trust.sh "$step"; fi ;;
  esac
  echo "$key" >> $DONE
done
bash scripts/gpu/trust.sh summary bundle > /dev/null
cp $DONE "$OUT/done.txt"; log "end at ${SECONDS}s"
