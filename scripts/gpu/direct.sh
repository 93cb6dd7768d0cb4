#!/usr/bin/env bash
# `python -m evaluator run` on the lent H200 with the site's data, calibration and sandbox, after
# `scripts/gpu/site.sh setup calibrate` in the same warm machine: for what the site's path does not
# show by itself, such as the A/B of a harness change on one machine, or a first look at a new set's
# statuses before it is uploaded. Figures that count for the product come from site.sh.
#   bash scripts/gpu/direct.sh NAME SET [evaluator run options ...]   ->  $OUT/NAME.json, $OUT/NAME.log
# The A/B of when the next query's runners start (harness 0.6.2, docs/benchmarks.md, session 11):
#   for r in 1 2; do for m in tail trials; do
#     bash scripts/gpu/direct.sh ahead-$m-r$r examples/triton-core --ahead $m --queries 1,3 --max-time 5
#   done; done
# Environment: VAR (/tmp/dkb-site, as site.sh), DATA ($VAR/data), OUT (./out-site), DEVICE (cuda), SF (10),
#   CHECK_SF (1), PYTHON (python3).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
VAR=${VAR:-/tmp/dkb-site}
OUT=${OUT:-$ROOT/out-site}
name=$1 set=$2
shift 2
mkdir -p "$OUT"
PYTHON=${PYTHON:-python3}
[ -d /tmp/site ] && export PYTHONPATH=/tmp/site:$ROOT || export PYTHONPATH=$ROOT
[ -x /tmp/bw/usr/bin/bwrap ] && export PATH=/tmp/bw/usr/bin:$PATH
started=$(date +%s)
"$PYTHON" -m evaluator run "$set" --sf "${SF:-10}" --check-sf "${CHECK_SF:-1}" --device "${DEVICE:-cuda}" \
  --data-dir "${DATA:-$VAR/data}" --sandbox bubblewrap --out "$OUT/$name.json" "$@" > "$OUT/$name.log" 2>&1
rc=$?
echo "[$(date +%T)] $name ($set $*): rc $rc in $(($(date +%s) - started)) s; $(tail -n 1 "$OUT/$name.log")"
