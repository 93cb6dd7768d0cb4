#!/usr/bin/env bash
# Issue 2 on the lent H200: the Q6 example sets at SF1 (and the full one at SF10), directly and under
# bubblewrap. Needs .whl (../shared/gpu/wheels.sh) and .deb (../shared/gpu/bubblewrap.sh) carried along.
set -euo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
dpkg -x .deb/bubblewrap_*.deb /tmp/bw && export PATH=/tmp/bw/usr/bin:$PATH
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
python3 -c 'import torch, triton, duckdb; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__, "duckdb", duckdb.__version__)' | tee -a "$OUT/gpu.txt"
time python3 -m evaluator prepare --sf 1 --data-dir /tmp/data
for set in triton-q06-full triton-q06-core; do
  time python3 -m evaluator run "examples/$set" --sf 1 --device cuda --data-dir /tmp/data --out "$OUT/$set-sf1.json"
done
time python3 -m sandbox examples/triton-q06-full --sf 1 --device cuda --data-dir /tmp/data \
  --out "$OUT/triton-q06-full-sf1-bubblewrap.json"
time python3 -m evaluator prepare --sf 10 --data-dir /tmp/data
time python3 -m evaluator run examples/triton-q06-full --sf 10 --device cuda --data-dir /tmp/data \
  --out "$OUT/triton-q06-full-sf10.json"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv | tee -a "$OUT/gpu.txt"
