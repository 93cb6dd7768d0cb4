#!/usr/bin/env bash
# Issue 4 on the lent H200: the harness's done-when runs. The example sets at SF10 (SF1 the check scale
# factor) REPEATS times, the planted-bug sets once, a 22-query set once; then a summary of medians and
# their spreads across the runs. Data, the compile cache and the reports live under var/, which the
# device keeps between calls while the machine stays warm (30 s after a call): chain the calls.
#   bash scripts/gpu/evaluation.sh [STEP ...]
#   steps: prepare warm examples planted full22 summary (default: all, in that order); full22-site (the
#   22-query set with a secret seed and no cache given: the evaluation warms its own, WARM_JOBS at once); variance
#   (scripts/gpu/variance.py on the prepared SF: where the medians' run-to-run spread comes from), spread
#   (scripts/gpu/spread.py: the host's speed per process, and the runner's placement), rounds
#   (scripts/gpu/rounds.py: host probes and the examples' times round by round, in fresh processes)
#   RUNS=2,3 bash scripts/gpu/evaluation.sh examples summary    # the example sets' runs 2 and 3 only
# Environment: SF (10), CHECK_SF (1), DEVICE (cuda), SEED (20261202: every run draws the same parameters,
# so the runs are comparable and the trusted compile cache matches them), RUNS (1,2,3), MAX_TIME (timing
# budget per query, s; 15, the protocol's cap), SETS (the example sets), WARM_QUERIES (1,3,6,14; set
# empty for all 22), FULL22_QUERIES (all),
# VAR (/tmp/dkb-var: data/, compile-cache/, reports/ under it), BUDGET (s this call may use, 570: a device call stops at 600; no evaluation starts with under 60 s
# left, and each is cut at the budget). Every evaluation writes its report as it ends; $OUT gets
# summary.md, evaluation.log, gpu.txt and reports.tgz (every report so far, this call's and earlier
# calls'), so a call cut short still returns what it measured.
#
# One device call is at most 600 s, so the work goes in chained calls (carry .whl, from
# ../shared/gpu/wheels.sh), each started within 30 s of the last (else the machine, and /tmp, is gone):
#   1. WARM_QUERIES= RUNS=1 bash scripts/gpu/evaluation.sh prepare warm examples   (~110 + ~110 + sets)
#      (full22 uses the cache too: warm all 22 first, else each runner compiles its baseline cold)
#   2. bash scripts/gpu/evaluation.sh full22              (the 22-query set: must end in one call)
#   3. RUNS=2,3 bash scripts/gpu/evaluation.sh examples summary
# Measured 2026-12-02: prepare 101-108 s; warm of all 22 237 s one at a time, ~110 s three at a time;
# an example query ~26-31 s (docs/benchmarks.md).
set -uo pipefail
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SF=${SF:-10} CHECK_SF=${CHECK_SF:-1} DEVICE=${DEVICE:-cuda} SEED=${SEED:-20261202} MAX_TIME=${MAX_TIME:-15}
RUNS=${RUNS:-1,2,3} BUDGET=${BUDGET:-570}
SETS=${SETS:-triton-q06-full triton-q06-core triton-core triton-full cuda-core}
WARM_QUERIES=${WARM_QUERIES-1,3,6,14}  # set and empty: all 22
# Outside the repository: the device re-copies the working tree for each call, and a var/ inside it
# was gone by the next call (2026-12-02); /tmp stays while the machine is held.
VAR=${VAR:-/tmp/dkb-var}; DATA=$VAR/data CACHE=$VAR/compile-cache REPORTS=$VAR/reports
mkdir -p "$REPORTS"
steps=("$@"); [ ${#steps[@]} -gt 0 ] || steps=(prepare warm examples planted full22 summary)
LOG="$OUT/evaluation.log"
log() { echo "[$(date +%T)] $*" | tee -a "$LOG"; }

queries_of() {  # the query numbers of a kernel set's files, e.g. 1,3,14
  ls "$1"/q*.py | sed 's/.*q0*\([0-9]*\)\.py$/\1/' | paste -sd, -
}

left() { local l=$((BUDGET - SECONDS)); [ "$l" -gt 1 ] || l=1; echo "$l"; }

evaluate() {  # evaluate SET_DIR NAME [extra args]: one report, var/reports/NAME.json
  local dir=$1 name=$2; shift 2
  if [ "$(left)" -lt 60 ]; then log "$name: skipped, $(left) s left of the call's budget"; return; fi
  local started=$SECONDS seed=(--seed "$SEED")
  [ -z "${UNSEEDED:-}" ] || seed=()  # UNSEEDED=1 evaluate ...: a secret seed, as on the site
  timeout "$(left)" python3 -m evaluator run "$dir" --sf "$SF" --check-sf "$CHECK_SF" --device "$DEVICE" \
    --data-dir "$DATA" "${seed[@]}" --max-time "$MAX_TIME" --no-prepare --out "$REPORTS/$name.json" "$@" \
    2>&1 | tee -a "$LOG"
  log "$name: $((SECONDS - started)) s"
}

full22_set() {  # any 22-file set: each file is the TorchPlan itself, so all of it is framework time
  rm -rf /tmp/full22 && mkdir -p /tmp/full22
  echo '{"model": "TorchPlans as kernels", "language": "triton", "scope": "full",
         "notes": "Each qNN.py imports the TorchPlan: a framework fallback by construction."}' \
    > /tmp/full22/manifest.json
  for n in $(seq -w 1 22); do
    echo "from evaluator.torchplan.plans.q$n import run_query  # noqa: F401" > "/tmp/full22/q$n.py"
  done
}

pack() {
  tar czf "$OUT/reports.tgz" -C "$VAR" reports
  compgen -G "$REPORTS/*.json" > /dev/null || return 0
  python3 scripts/gpu/summarize.py "$REPORTS"/*.json > "$OUT/summary.md" 2>>"$LOG" || true
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1 | tee -a "$OUT/gpu.txt"
for step in "${steps[@]}"; do
  started=$SECONDS
  log "step $step"
  case $step in
    prepare)  # SF1 ~15-25 s, SF10 ~105-210 s on the H200 host
      timeout "$(left)" bash -c "python3 -m evaluator prepare --sf $CHECK_SF --data-dir $DATA && \
        python3 -m evaluator prepare --sf $SF --data-dir $DATA" 2>&1 | grep -v 'col/s' | tee -a "$LOG" ;;
    warm)  # trusted: compile the baselines the example sets repeat, with the runs' seed
      timeout "$(left)" python3 -m evaluator warm --cache-dir "$CACHE" --sf "$SF" --device "$DEVICE" --jobs "${WARM_JOBS:-3}" \
        --data-dir "$DATA" --seed "$SEED" ${WARM_QUERIES:+--queries "$WARM_QUERIES"} 2>&1 | tee -a "$LOG" ;;
    examples)
      cache=(); [ -d "$CACHE" ] && cache=(--compile-cache "$CACHE")
      for run in ${RUNS//,/ }; do
        for set in $SETS; do
          evaluate "examples/$set" "$set-r$run" --queries "$(queries_of "examples/$set")" "${cache[@]}"
          pack
        done
      done ;;
    planted)
      cache=(); [ -d "$CACHE" ] && cache=(--compile-cache "$CACHE")
      for set in float32-literal hardcoded-default torch-fallback; do
        evaluate "examples/planted/$set" "planted-$set" --queries 6 "${cache[@]}"
        pack
      done ;;
    full22)
      full22_set
      cache=(); [ -d "$CACHE" ] && cache=(--compile-cache "$CACHE")
      evaluate /tmp/full22 full22 ${FULL22_QUERIES:+--queries $FULL22_QUERIES} "${cache[@]}"
      pack ;;
    full22-site)  # as the site runs it: a secret seed and no cache given, so the evaluation warms its own
      full22_set
      UNSEEDED=1 evaluate /tmp/full22 full22-site --warm-jobs "${WARM_JOBS:-4}" \
        ${FULL22_QUERIES:+--queries $FULL22_QUERIES}
      pack ;;
    variance)
      timeout "$(left)" python3 scripts/gpu/variance.py "$DATA/sf$SF" "${VARIANCE_S:-3}" > "$OUT/variance.json" \
        2> >(tee -a "$LOG" >&2) ;;
    spread)
      timeout "$(left)" python3 scripts/gpu/spread.py "$DATA/sf$SF" "${VARIANCE_S:-3}" "${SPREAD_SAMPLES:-5}" \
        > "$OUT/spread.json" 2> >(tee -a "$LOG" >&2) ;;
    rounds)  # one process started after another until a process's time (~40 s) before the budget
      timeout "$(left)" python3 scripts/gpu/rounds.py "$DATA/sf$SF" "${VARIANCE_S:-3}" "$(( $(left) - 40 ))" \
        > "$OUT/rounds.jsonl" 2> >(tee -a "$LOG" >&2) ;;
    summary)
      pack
      cat "$OUT/summary.md" ;;
  esac
  log "step $step done in $((SECONDS - started)) s"
done
pack
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1 | tee -a "$OUT/gpu.txt"
