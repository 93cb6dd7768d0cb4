#!/usr/bin/env bash
# The compose stack with whichever engine is here: `docker compose` or podman-compose.
#   scripts/stack.sh up            start it (after scripts/images.sh); waits for the init to finish
#   COMPOSE_PROFILES=h200 scripts/stack.sh up      on a GPU host: its worker too
#   scripts/stack.sh down -v       stop it and drop its volumes; any other compose command passes through
# Settings come from docker/.env (docker/.env.example) or the environment; COMPOSE_PROJECT_NAME names it.
#
# podman (< 4.6, Debian 12's 4.3) needs two things docker does not: docker/containers.conf (runc, ulimits),
# and `up` in phases: podman-compose cannot wait for `service_healthy` there, and podman 4.3 fails to start
# a container whose dependency has already exited ("depends on container ... not found in input list"), so
# the database and Redis start first, then the init runs to completion, then the rest start without
# dependencies (the init has waited for PostgreSQL and Redis itself).
set -euo pipefail
cd "$(dirname "$0")/.."
FILE=docker/compose.yaml

if [ -n "${ENGINE:-}" ] && [ "$(basename "$ENGINE")" = docker ] || ! command -v podman >/dev/null; then
  command -v docker >/dev/null || { echo "stack.sh: neither podman nor docker is installed" >&2; exit 2; }
  if [ "${1:-}" = up ]; then
    shift
    exec docker compose -f "$FILE" up -d --no-build --wait "$@"
  fi
  exec docker compose -f "$FILE" "$@"
fi

if [ -z "${CONTAINERS_CONF:-}" ]; then
  # docker/containers.conf, its ulimits lowered to this shell's hard limits where those are lower (runc
  # cannot raise a limit past them); never under the 4096 open files the sandbox gives a runner.
  lower() { local hard=$1 want=$2; [ "$hard" = unlimited ] || [ "$hard" -ge "$want" ] && echo "$want" || echo "$hard"; }
  nofile=$(lower "$(ulimit -Hn)" 16384)
  nproc=$(lower "$(ulimit -Hu)" 32768)
  CONTAINERS_CONF=$(mktemp "${TMPDIR:-/tmp}/dkb-containers-XXXXXX.conf")
  trap 'rm -f "$CONTAINERS_CONF"' EXIT
  sed -e "s/nofile=16384:16384/nofile=$nofile:$nofile/" -e "s/nproc=32768:32768/nproc=$nproc:$nproc/" \
    docker/containers.conf >"$CONTAINERS_CONF"
  export CONTAINERS_CONF
fi
compose=$(command -v podman-compose || echo "$PWD/.venv/bin/podman-compose")
[ -x "$compose" ] || { echo "stack.sh: pip install podman-compose (or apt-get install podman-compose)" >&2; exit 2; }
profiles=()  # COMPOSE_PROFILES=h200 adds that GPU worker, as with docker compose
COMPOSE_PROFILES=${COMPOSE_PROFILES:-}
for profile in ${COMPOSE_PROFILES//,/ }; do profiles+=(--profile "$profile"); done
run() { "$compose" "${profiles[@]}" -f "$FILE" "$@"; }
[ "${1:-}" = up ] || { run "$@"; exit; }  # not exec: the trap removes the conf

project=${COMPOSE_PROJECT_NAME:-dkb}
run up -d --no-build --no-deps db redis
run up -d --no-build --no-deps --force-recreate init
status=$(podman wait "${project}_init_1")
if [ "$status" != 0 ]; then
  podman logs --tail 50 "${project}_init_1" >&2
  echo "stack.sh: the init failed (status $status)" >&2
  exit 1
fi
rest=$(run config --services | grep -v -x -E 'db|redis|init' | tr '\n' ' ')
# shellcheck disable=SC2086  # the service names, one word each
run up -d --no-build --no-deps $rest
