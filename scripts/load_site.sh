#!/usr/bin/env bash
# A bounded loopback load test of the home page: gunicorn on 127.0.0.1 serving a throwaway database of
# SETS published sets x 22 results (scripts/bench_site.py builds it), locust headless with CLIENTS clients
# for RUN_TIME, then both stopped. Prints the home page's requests/s, median and p99.
#
#   bash scripts/load_site.sh                     # 100 sets, 2 workers (as make run), 50 clients, 60 s
#   SETS=1000 WORKERS=3 bash scripts/load_site.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
SETS=${SETS:-100}
WORKERS=${WORKERS:-2}
CLIENTS=${CLIENTS:-50}
RUN_TIME=${RUN_TIME:-60s}
PORT=${PORT:-8765}
export DKB_VAR_DIR=${DKB_VAR_DIR:-$(mktemp -d /tmp/dkb-load-XXXXXX)}
"$PY" scripts/bench_site.py --sets "$SETS" --keep "$DKB_VAR_DIR" --build-only

.venv/bin/gunicorn leaderboard.wsgi --bind "127.0.0.1:$PORT" --workers "$WORKERS" \
  --log-level warning >"$DKB_VAR_DIR/gunicorn.log" 2>&1 &
GUNICORN=$!
trap 'kill "$GUNICORN" 2>/dev/null; wait "$GUNICORN" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  "$PY" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/')" 2>/dev/null && break
  sleep 0.2
done

.venv/bin/locust -f scripts/locustfile.py --headless --host "http://127.0.0.1:$PORT" \
  -u "$CLIENTS" -r 10 --run-time "$RUN_TIME" --csv "$DKB_VAR_DIR/locust" --only-summary \
  --loglevel WARNING >"$DKB_VAR_DIR/locust.log" 2>&1 || true
"$PY" - "$DKB_VAR_DIR/locust_stats.csv" <<'PY'
import csv, sys
for row in csv.DictReader(open(sys.argv[1])):
    if row["Name"] == "home":
        print(f"home page, {row['Request Count']} requests ({row['Failure Count']} failed): "
              f"{float(row['Requests/s']):.1f} requests/s, median {row['50%']} ms, p99 {row['99%']} ms, "
              f"max {float(row['Max Response Time']):.0f} ms")
PY
echo "load average after: $(cut -d" " -f1-3 /proc/loadavg)"
echo "database, logs and locust's CSV: $DKB_VAR_DIR"
