#!/usr/bin/env bash
# The site's own path, end to end, on the lent H200 (or on a CPU at SF0.01 to try it first): a fresh
# SQLite site, its worker (manage.py qcluster) and gunicorn on 127.0.0.1; kernel sets uploaded through
# the REST API with a user's token, their runs waited for, the results read back from the API and the
# submission page. Per set: upload-to-result wall time, each query's status and speedup, the overall
# speedup and the report's "timing" section; repeats of one set side by side (each upload draws its own
# secret seed) with their largest relative spread; whether the planted bugs were caught.
#   bash scripts/gpu/site.sh STEP ...
#   steps: setup (wheels, bubblewrap, migrate, dkb_setup, prepare CHECK_SF and SF), calibrate (baselines,
#   timed on their own; chunks of CAL_JOBS queries, resumable: a query already recorded is skipped),
#   serve (start worker and gunicorn unless running), upload [SET ...] (default $SETS), wait, summary,
#   stop. Default: setup serve upload wait summary. Every call ends with a summary in $OUT.
#   A set is a folder under examples/ (cuda-core, planted/torch-fallback ...), a path, or full22 (the 22
#   TorchPlans as a Triton set: scripts/gpu/plans_as_set.py); NAME:3 uploads it three times.
# Environment: DEVICE (auto: cuda when torch sees one), SF (10 on cuda, 0.01 on cpu), CHECK_SF (1 on
#   cuda, none on cpu; "none" or a list such as 1,0.1), SETS (below), BUDGET (s this call may use, 570:
#   a device call stops at 600), VAR (/tmp/dkb-site: database, data, logs, state; kept while the machine
#   is warm), OUT (./out-site), PORT (8765), DKB_SANDBOX (bubblewrap), KIND (ranked|feedback),
#   CAL_JOBS (4), CAL_QUERIES (all 22), DKB_EVAL_TIMEOUT_S (1800, the site's), PYTHON (python3, or
#   .venv/bin/python3 where there is one).
#
# On the GPU host nothing of the web stack is installed: carry .whl (WITH_DEPS=1 ../shared/gpu/wheels.sh
# ...) and .deb (../shared/gpu/bubblewrap.sh). One device call is at most 600 s and the server dies with
# the call, so chain calls (each within 30 s of the last, else /tmp is gone) and let every call that
# uploads or waits serve again; a run still evaluating when its call ends is lost (marked failed by the
# next serve), so upload only what fits one call:
#   1. bash scripts/gpu/site.sh setup calibrate       (SF1 + SF10 prepare, then as much calibration as fits)
#   2. bash scripts/gpu/site.sh calibrate              (the rest of the calibration, if any)
#   3. bash scripts/gpu/site.sh serve upload cuda-core triton-core:3 wait summary
#   4. bash scripts/gpu/site.sh serve upload triton-q06-full planted/float32-literal planted/hardcoded-default planted/torch-fallback wait summary
#   5. bash scripts/gpu/site.sh serve upload full22 wait summary
# Here (CPU): PATH=$PWD/.venv/bin:$PATH DEVICE=cpu BUDGET=400 bash scripts/gpu/site.sh setup serve upload wait
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
STARTED=$(date +%s)
BUDGET=${BUDGET:-570}
VAR=${VAR:-/tmp/dkb-site}
OUT=${OUT:-$ROOT/out-site}
PORT=${PORT:-8765}
KIND=${KIND:-ranked}
CAL_JOBS=${CAL_JOBS:-4}
SETS=${SETS:-cuda-core triton-core:3 triton-q06-full planted/float32-literal planted/hardcoded-default planted/torch-fallback full22}
mkdir -p "$VAR"/{logs,state,sets} "$OUT"
LOG=$OUT/site.log
log() { echo "[$(date +%T)] $*" | tee -a "$LOG"; }
left() {  # seconds left of the budget, at least 1 (`timeout 0` would mean no limit at all)
  local l=$((BUDGET - ($(date +%s) - STARTED))); [ "$l" -gt 1 ] || l=1; echo "$l"
}

# --- the Python, the web stack and bubblewrap ---------------------------------------------------------
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python3 ]; then PYTHON=$ROOT/.venv/bin/python3; else PYTHON=python3; fi
fi
export PYTHONPATH=$ROOT PYTHONUNBUFFERED=1
if [ -d .whl ] && ! "$PYTHON" -c 'import django, rest_framework, django_q, gunicorn, duckdb' 2>/dev/null; then
  # Each call: the device copies a fresh tree, but /tmp/site stays while the machine is warm.
  stamp=$(ls .whl | md5sum | cut -c1-12)
  if [ "$(cat /tmp/site/.stamp 2>/dev/null)" != "$stamp" ]; then
    log "installing $(ls .whl | wc -l) wheels into /tmp/site"
    rm -rf /tmp/site
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl \
      && echo "$stamp" > /tmp/site/.stamp
  fi
  export PYTHONPATH=/tmp/site:$ROOT
fi
export DKB_SANDBOX=${DKB_SANDBOX:-bubblewrap}
if [ "$DKB_SANDBOX" = bubblewrap ] && ! command -v bwrap > /dev/null; then
  if compgen -G ".deb/bubblewrap_*.deb" > /dev/null; then
    [ -x /tmp/bw/usr/bin/bwrap ] || dpkg -x .deb/bubblewrap_*.deb /tmp/bw  # a folder of its own, never /
    export PATH=/tmp/bw/usr/bin:$PATH
  else
    log "WARNING: no bwrap and no .deb/bubblewrap_*.deb: evaluations will fail (DKB_SANDBOX=process to run unisolated)"
  fi
fi

# --- the site's settings --------------------------------------------------------------------------------
if [ "${DEVICE:-auto}" = auto ]; then
  DEVICE=$("$PYTHON" -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")' 2>/dev/null || echo cpu)
fi
if [ "$DEVICE" = cuda ]; then SF=${SF:-10} CHECK_SF=${CHECK_SF:-1}; else SF=${SF:-0.01} CHECK_SF=${CHECK_SF:-none}; fi
unset DATABASE_URL REDIS_URL  # SQLite in $VAR and django-q2's ORM broker
export DKB_VAR_DIR=$VAR/site DKB_DATA_DIR=$VAR/data DKB_DEVICE=$DEVICE DKB_SCALE_FACTOR=$SF
export DKB_CHECK_SCALE_FACTORS=$CHECK_SF STATIC_ROOT=$VAR/site/static DJANGO_SETTINGS_MODULE=leaderboard.settings
manage() { "$PYTHON" manage.py "$@"; }
client() { "$PYTHON" scripts/gpu/site_client.py "$@" --state "$VAR/state" --out "$OUT"; }

alive() {  # alive NAME: its pid file names a live process whose command line has NAME
  local pid; pid=$(cat "$VAR/$1.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && grep -qa "$1" "/proc/$pid/cmdline" 2>/dev/null
}

serve() {
  if ! alive qcluster; then
    # A run left "running" by a worker that died with the previous call can never finish: fail it now,
    # as the site's scheduled reclaim would, so `wait` reports it instead of waiting on it.
    manage shell -v 0 -c "
from leaderboard import services
from leaderboard.models import EvaluationRun
for run in EvaluationRun.objects.filter(status=EvaluationRun.Status.RUNNING):
    services.evaluation_fail(run=run, error='worker lost: its device call ended mid-evaluation', retryable=True)
    print(f'run {run.pk}: was running when its worker ended; marked failed')" 2>&1 | tee -a "$LOG"
    setsid "$PYTHON" manage.py qcluster >> "$VAR/logs/qcluster.log" 2>&1 < /dev/null &
    echo $! > "$VAR/qcluster.pid"
    log "worker started (pid $(cat "$VAR/qcluster.pid"), log $VAR/logs/qcluster.log)"
  else
    log "worker already running (pid $(cat "$VAR/qcluster.pid"))"
  fi
  if ! alive gunicorn; then
    setsid "$PYTHON" -m gunicorn leaderboard.wsgi:application --bind "127.0.0.1:$PORT" --workers 3 \
      --timeout 120 --access-logfile "$VAR/logs/access.log" >> "$VAR/logs/gunicorn.log" 2>&1 < /dev/null &
    echo $! > "$VAR/gunicorn.pid"
    log "gunicorn started on 127.0.0.1:$PORT (pid $(cat "$VAR/gunicorn.pid"))"
  fi
  for _ in $(seq 60); do
    curl -fso /dev/null "http://127.0.0.1:$PORT/" 2>/dev/null \
      || "$PYTHON" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$PORT/', timeout=5)" 2>/dev/null \
      && { log "site answers on http://127.0.0.1:$PORT/"; break; }
    sleep 1
  done
  if [ ! -s "$VAR/token" ]; then
    manage shell -v 0 -c "
from django.contrib.auth import get_user_model
from leaderboard import services
user, _ = get_user_model().objects.get_or_create(username='site-bench')
print(services.api_token_rotate(user=user).key)" > "$VAR/token.new" && mv "$VAR/token.new" "$VAR/token"
    log "user site-bench has an API token ($VAR/token)"
  fi
}

stop() {
  for name in gunicorn qcluster; do
    if alive "$name"; then
      local pid; pid=$(cat "$VAR/$name.pid")
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"  # setsid: its group is its own
      for _ in $(seq 20); do alive "$name" || break; sleep 0.5; done
      alive "$name" && kill -KILL -- "-$pid" 2>/dev/null
      log "$name stopped"
    fi
    rm -f "$VAR/$name.pid"
  done
}

set_folder() {  # set_folder NAME: the kernel set's folder
  case $1 in
    full22)
      "$PYTHON" scripts/gpu/plans_as_set.py "$VAR/sets/full22" --check >&2 || return 1
      echo "$VAR/sets/full22" ;;
    /*|./*) echo "$1" ;;
    *) echo "$ROOT/examples/$1" ;;
  esac
}

upload() {
  local specs=() spec name count folder
  for spec in "$@"; do
    name=${spec%%:*} count=1
    [ "$spec" = "$name" ] || count=${spec##*:}
    folder=$(set_folder "$name") || { log "$name: no such set"; continue; }
    [ -f "$folder/manifest.json" ] || { log "$name: $folder has no manifest.json"; continue; }
    for _ in $(seq "$count"); do specs+=("$name=$folder"); done
  done
  client upload --base "http://127.0.0.1:$PORT" --token-file "$VAR/token" --kind "$KIND" "${specs[@]}" 2>&1 | tee -a "$LOG"
}

calibrate() {
  local queries=${CAL_QUERIES:-$(seq -s, 1 22)} use_site=1 how="manage.py dkb_baselines" todo chunk t0
  # The site's command once it exists (it also stores the rows the query pages show), else the CLI.
  manage shell -v 0 -c "from leaderboard.services import baseline_calibrate" 2>/dev/null \
    || { use_site=; how="python -m evaluator baselines"; }
  # Queries already recorded for this hardware, SF, harness and torch are skipped: calls can resume.
  todo=$("$PYTHON" -c "
from pathlib import Path
from evaluator.baselines import recorded
done = recorded(Path('$DKB_DATA_DIR'), $SF, '$DEVICE')
print(' '.join(q for q in '$queries'.split(',') if int(q) not in done))")
  log "calibration at SF$SF on $DEVICE: to do ${todo:-nothing} ($how)"
  set -- $todo
  while [ $# -gt 0 ]; do
    chunk=$(echo "${@:1:$CAL_JOBS}" | tr ' ' ,)
    if [ "$(left)" -lt "${CAL_CHUNK_S:-150}" ]; then log "calibration: $(left) s left, stopping before Q$chunk"; break; fi
    t0=$(date +%s)
    if [ -n "$use_site" ]; then
      timeout "$(left)" "$PYTHON" manage.py dkb_baselines --queries "$chunk" --jobs "$CAL_JOBS" 2>&1 | tee -a "$LOG"
    else
      timeout "$(left)" "$PYTHON" -m evaluator baselines --sf "$SF" --data-dir "$DKB_DATA_DIR" --device "$DEVICE" \
        --queries "$chunk" --jobs "$CAL_JOBS" 2>&1 | tee -a "$LOG"
    fi
    "$PYTHON" - "$VAR/state/calibration.json" "$(( $(date +%s) - t0 ))" "$chunk" <<'EOF'
import json, sys
from pathlib import Path
path, seconds, chunk = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
c = json.loads(path.read_text()) if path.exists() else {"seconds": 0.0, "queries": ""}
c["seconds"] += seconds
c["queries"] = ",".join(q for q in (c["queries"].split(",") + chunk.split(",")) if q)
path.write_text(json.dumps(c))
EOF
    log "calibration of Q$chunk: $(( $(date +%s) - t0 )) s"
    shift $(( $# < CAL_JOBS ? $# : CAL_JOBS ))
  done
}

setup() {
  log "setup: SF$SF (check SF: $CHECK_SF) on $DEVICE, sandbox $DKB_SANDBOX, var $VAR"
  manage migrate --noinput 2>&1 | tail -n 2 | tee -a "$LOG"
  manage dkb_setup 2>&1 | grep -v '^query ' | tee -a "$LOG"
  local sf
  for sf in $("$PYTHON" -c "from evaluator.harness import check_scale_factors as c; print(*(f'{x:g}' for x in c('$CHECK_SF', $SF)))") $SF; do
    local t0; t0=$(date +%s)
    timeout "$(left)" "$PYTHON" -m evaluator prepare --sf "$sf" --data-dir "$DKB_DATA_DIR" 2>&1 | grep -v 'col/s' | tee -a "$LOG"
    log "prepare SF$sf: $(( $(date +%s) - t0 )) s"
  done
}

steps=("$@"); [ ${#steps[@]} -gt 0 ] || steps=(setup serve upload wait summary)
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$OUT/gpu.txt"
log "call: ${steps[*]} (budget $BUDGET s)"
i=0
while [ $i -lt ${#steps[@]} ]; do
  step=${steps[$i]}; i=$((i + 1))
  t0=$(date +%s)
  log "step $step ($(left) s left)"
  case $step in
    setup) setup ;;
    calibrate) calibrate ;;
    serve) serve ;;
    upload)  # the sets are the arguments up to the next step's name
      sets=()
      while [ $i -lt ${#steps[@]} ] && ! [[ ${steps[$i]} =~ ^(setup|calibrate|serve|upload|wait|summary|stop)$ ]]; do
        sets+=("${steps[$i]}"); i=$((i + 1))
      done
      [ ${#sets[@]} -gt 0 ] || read -ra sets <<< "$SETS"
      alive gunicorn || serve
      upload "${sets[@]}" ;;
    wait)
      alive gunicorn || serve
      # Keep ~15 s for the summary and for stopping the servers.
      client wait --base "http://127.0.0.1:$PORT" --token-file "$VAR/token" --deadline $((STARTED + BUDGET - 15)) 2>&1 | tee -a "$LOG" ;;
    summary) client summary > /dev/null && cat "$OUT/summary.md" ;;
    stop) stop ;;
    *) log "unknown step $step (setup calibrate serve upload wait summary stop)"; exit 2 ;;
  esac
  log "step $step done in $(( $(date +%s) - t0 )) s"
done
client summary > /dev/null 2>&1 || true
cp "$VAR"/logs/*.log "$OUT/" 2>/dev/null || true
log "call done in $(( $(date +%s) - STARTED )) s; summary in $OUT/summary.md"
