#!/usr/bin/env bash
# Issue 3 on the lent H200: validate the 22 TorchPlans against DuckDB at SF1 and SF10 on the GPU and
# benchmark DuckDB vs eager vs compiled vs the bandwidth floor at SF10. Data goes under var/data, which
# the device keeps between calls while the machine stays warm. Steps are time-boxed; every step writes
# its results to $OUT as it goes, so a cut-off step still returns what it measured.
#   bash scripts/gpu/torchplans.sh [STEP ...]    steps: bench10 validate10 validate1 (default: all)
#   QUERIES=12,13 bash scripts/gpu/torchplans.sh bench10
#   BENCH_GENERATED=1 ...    the bench also times the compiler's programs (evaluator/torchplan/generated)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
steps=("$@"); [ ${#steps[@]} -gt 0 ] || steps=(bench10 validate10 validate1)
only=${QUERIES:+--queries $QUERIES}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee -a "$OUT/gpu.txt"
python3 -m evaluator prepare --sf 10 --data-dir var/data 2>&1 | grep -v 'col/s'
for step in "${steps[@]}"; do
  case $step in
    bench10) timeout ${BENCH_TIMEOUT:-420} python3 -m evaluator bench --sf 10 --device cuda --data-dir var/data --max-time ${BENCH_MAX_TIME:-2} \
               $only ${BENCH_GENERATED:+--generated} --out "$OUT/bench-sf10${QUERIES:+-${QUERIES//,/-}}.json" 2>&1 \
               | tee -a "$OUT/bench-sf10.txt" ;;
    validate10) timeout ${VALIDATE_TIMEOUT:-240} python3 -m evaluator validate --sf 10 --device cuda \
               --data-dir var/data --random-sets ${RANDOM_SETS:-5} \
               $only --out "$OUT/validate-sf10.json" 2>&1 | grep -v 'query/s' | tee -a "$OUT/validate-sf10.txt" ;;
    validate1) python3 -m evaluator prepare --sf 1 --data-dir var/data 2>&1 | grep -v 'col/s'
               timeout ${VALIDATE_TIMEOUT:-180} python3 -m evaluator validate --sf 1 --device cuda \
               --data-dir var/data --random-sets ${RANDOM_SETS:-5} \
               $only --out "$OUT/validate-sf1.json" 2>&1 | grep -v 'query/s' | tee -a "$OUT/validate-sf1.txt" ;;
  esac
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv | tee -a "$OUT/gpu.txt"
