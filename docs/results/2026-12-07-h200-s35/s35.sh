#!/usr/bin/env bash
# Session 35's queue: each call runs the next steps that fit in BUDGET seconds; what ran is kept in
# /tmp/dkb-trust/done, so the same command continues on a warm machine. Needs .whl, .deb and old/.
set -uo pipefail
BUDGET=${BUDGET:-560}; OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/dkb-trust; DONE=/tmp/dkb-trust/done; touch $DONE
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$OUT/gpu.txt"; nproc >> "$OUT/gpu.txt"
echo "card: $card"
ATTACKS_A=examples/cuda-core,gpu_side_stream,gpu_patch_synchronize,gpu_deferred_work
ATTACKS_B=gpu_illegal_address,gpu_out_of_memory,gpu_disturb_the_baseline,gpu_work_after_answering,rebind_the_clock,cube_per_table_content
queue="110:-:prepare 60:-:warm 75:1:new-cuda-core 50:1:old-cuda-core 50:2:old-cuda-core 75:2:new-cuda-core
75:3:new-cuda-core 50:3:old-cuda-core 95:1:new-triton-core 75:1:old-triton-core 90:-:q06null 75:2:old-triton-core
95:2:new-triton-core 95:3:new-triton-core 75:3:old-triton-core 120:a:sandbox 150:b:sandbox 75:4:new-cuda-core 50:4:old-cuda-core"
for item in $queue; do
  est=${item%%:*}; rest=${item#*:}; round=${rest%%:*}; step=${rest#*:}; key="$round $step"
  grep -qxF -- "$key" $DONE && continue
  if [ $((SECONDS + est + 25)) -gt "$BUDGET" ]; then echo "[s35] stop before $key at ${SECONDS}s"; break; fi
  echo "[s35] $key at ${SECONDS}s" | tee -a "$OUT/trust.log"
  case $step in
    switch-q06)
      PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/switch.py /tmp/dkb-trust/data/sf10 --calls 10 \
        --conditions free,inline,inline+flush,pair --candidate 6=examples/cuda-core/q06.py --candidate 6 \
        --out "$OUT/switch-q06-$round.json" 2>&1 | grep -v ' done$' | tee -a "$OUT/trust.log" ;;
    q06null)
      PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu/q06null.py /tmp/dkb-trust/data/sf10 2>&1 | tee "$OUT/q06null.md" ;;
    sandbox)
      if [ $round = a ]; then only=$ATTACKS_A; else only=$ATTACKS_B; fi
      ONLY=$only timeout $((est + 90)) bash scripts/gpu/sandbox.sh 2>&1 | tail -40
      mv "$OUT/sandbox.json" "$OUT/sandbox-$round.json"; mv "$OUT/sandbox-gpu.txt" "$OUT/sandbox-gpu-$round.txt" ;;
    *) if [ "$round" = - ]; then bash scripts/gpu/trust.sh "$step"; else ROUND=$round bash scripts/gpu/trust.sh "$step"; fi ;;
  esac
  echo "$key" >> $DONE
done
bash scripts/gpu/trust.sh summary bundle > /dev/null
cp $DONE "$OUT/done.txt"; echo "[s35] end at ${SECONDS}s"
