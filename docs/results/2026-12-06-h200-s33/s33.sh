#!/usr/bin/env bash
# Session 33's queue: each call runs the next steps that fit in BUDGET seconds; what ran is kept in
# /tmp/dkb-trust/done, so the same command continues on a warm machine.
set -uo pipefail
BUDGET=${BUDGET:-560}; OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/dkb-trust; DONE=/tmp/dkb-trust/done; touch $DONE
export CHANNEL_SF=8 CHANNEL_MODES=compiled
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$OUT/gpu.txt"; nproc >> "$OUT/gpu.txt"
case $card in *H200*) kind=h200 ;; *) kind=h100 ;; esac
echo "card: $card ($kind)"
if [ $kind = h200 ]; then queue="110:-:prepare 160:-:channel 60:-:warm
60:1:old-cuda-core 60:1:new-cuda-core 90:1:old-triton-core 110:1:new-triton-core
110:2:new-triton-core 90:2:old-triton-core 60:2:new-cuda-core 60:2:old-cuda-core
60:3:old-cuda-core 60:3:new-cuda-core 90:3:old-triton-core 110:3:new-triton-core 110:-:switch-q14"
else queue="110:-:prepare 60:-:warm 110:-:switch-q14 90:p:old-triton-core 110:p:new-triton-core
110:p2:new-triton-core 90:p2:old-triton-core 90:p3:old-triton-core 110:p3:new-triton-core"; fi
for item in $queue; do
  est=${item%%:*}; rest=${item#*:}; round=${rest%%:*}; step=${rest#*:}; key="$kind $round $step"
  grep -qxF "$key" $DONE && continue
  if [ $((SECONDS + est + 25)) -gt "$BUDGET" ]; then echo "[s33] stop before $key at ${SECONDS}s"; break; fi
  echo "[s33] $key at ${SECONDS}s"
  if [ "$step" = switch-q14 ]; then
    PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/switch.py /tmp/dkb-trust/data/sf10 --calls 7 \
      --conditions free,inline,inline+flush,pair --candidate 14=examples/triton-core/q14.py --candidate 14 \
      --out "$OUT/switch-q14.json" 2>&1 | grep -v ' done$' | tee -a "$OUT/trust.log"
  elif [ "$round" = - ]; then bash scripts/gpu/trust.sh "$step"
  else ROUND=$round bash scripts/gpu/trust.sh "$step"; fi
  echo "$key" >> $DONE
done
bash scripts/gpu/trust.sh summary bundle > /dev/null
cp $DONE "$OUT/done.txt"; echo "[s33] end at ${SECONDS}s"
