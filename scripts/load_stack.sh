#!/usr/bin/env bash
# A bounded loopback load test of the composed stack (docs/deploy.md): the stack started as a project of
# its own (scripts/stack.sh, images from scripts/images.sh), example sets uploaded through the API so the
# worker evaluates while it runs, locust headless with CLIENTS clients for RUN_TIME on the leaderboard page
# and GET /api/submissions/, then the stack and its volumes removed. Prints requests/s, median and p99.
#
#   scripts/load_stack.sh                 # 50 clients, 60 s
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
CLIENTS=${CLIENTS:-50}
RUN_TIME=${RUN_TIME:-60s}
OUT=$(mktemp -d /tmp/dkb-load-stack-XXXXXX)
PORT=$("$PY" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
URL=http://127.0.0.1:$PORT
export COMPOSE_PROJECT_NAME=dkb-load-$$ DKB_BIND=127.0.0.1 DKB_PORT=$PORT
SECRET_KEY=$("$PY" -c "import secrets; print(secrets.token_urlsafe(50))")
export SECRET_KEY
trap 'scripts/stack.sh logs --tail 30 web worker >"$OUT/stack.log" 2>&1 || true; scripts/stack.sh down --volumes --timeout 10 >/dev/null 2>&1' EXIT

scripts/stack.sh up >"$OUT/up.log" 2>&1
for _ in $(seq 150); do "$PY" -c "import urllib.request; urllib.request.urlopen('$URL/api/hardware/')" 2>/dev/null && break; sleep 1; done
made=$(scripts/stack.sh run --rm --no-deps web python manage.py shell -c \
  "from django.contrib.auth.models import User; from leaderboard import services; u = User.objects.create_user('loader', 'l@example.org', 'x' * 20); print('token', services.api_token_rotate(user=u).key)" 2>/dev/null)
TOKEN=$(echo "$made" | grep -o -E 'token [0-9a-f]{40}' | cut -d' ' -f2)
for set in examples/triton-q06-full examples/triton-q06-core examples/triton-core examples/triton-full; do
  "$PY" -m evaluator submit "$set" --server "$URL" --token "$TOKEN" --publish --no-wait >>"$OUT/submit.log" 2>&1
done

.venv/bin/locust -f scripts/locust_stack.py --headless --host "$URL" -u "$CLIENTS" -r 10 --run-time "$RUN_TIME" \
  --csv "$OUT/locust" --only-summary --loglevel WARNING >"$OUT/locust.log" 2>&1 || true
"$PY" - "$OUT/locust_stats.csv" "$URL" <<'PY'
import csv, json, sys, urllib.request
for row in csv.DictReader(open(sys.argv[1])):
    if row["Name"] in ("home", "api submissions"):
        print(f"{row['Name']}: {row['Request Count']} requests ({row['Failure Count']} failed), "
              f"{float(row['Requests/s']):.1f} requests/s, median {row['50%']} ms, p99 {row['99%']} ms")
runs = json.load(urllib.request.urlopen(sys.argv[2] + "/api/runs/?page_size=50"))["results"]
print("runs during the test:", ", ".join(f"{r['id']} {r['status']}" for r in runs))
PY
echo "load average after: $(cut -d" " -f1-3 /proc/loadavg)"
echo "logs and locust's CSV: $OUT"
