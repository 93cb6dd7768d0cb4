#!/usr/bin/env bash
# Build the stack's images with no container registry: a Debian bookworm base made by debootstrap from
# Debian's own mirror, then the web, worker, PostgreSQL and Redis images on it (Python packages from PyPI,
# torch from a local wheel where the host has one). Works with podman (here) or docker.
#
#   scripts/images.sh                  base web worker postgres redis (what the compose stack needs)
#   scripts/images.sh worker           only the CPU worker (and the base, if missing)
#   scripts/images.sh worker-cuda      the CUDA worker, on GPU hosts
#
# The base is cached: it is made only when localhost/debian-base:bookworm is missing (REBUILD_BASE=1 forces
# it); the other images reuse the engine's layer cache. Each step's wall time is printed.
# Environment: ENGINE (podman or docker; default: whichever is on PATH, podman first), BASE_IMAGE (skip
# debootstrap and build on this image instead, e.g. docker.io/library/debian:bookworm-slim), WHEELS (a
# folder of wheels pip may use; default /opt/wheels), PIP_CERT (a CA bundle pip trusts inside the build),
# MIRROR (Debian mirror for debootstrap).
set -euo pipefail
cd "$(dirname "$0")/.."

ENGINE=${ENGINE:-$(command -v podman || command -v docker || true)}
[ -n "$ENGINE" ] || { echo "images.sh: neither podman nor docker is installed" >&2; exit 2; }
BASE=localhost/debian-base:bookworm
BASE_IMAGE=${BASE_IMAGE:-$BASE}
WHEELS=${WHEELS:-/opt/wheels}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
TAG_WEB=localhost/dkb-web:latest
TAG_WORKER=localhost/dkb-worker:cpu
TAG_WORKER_CUDA=localhost/dkb-worker:cuda
TAG_POSTGRES=localhost/dkb-postgres:15
TAG_REDIS=localhost/dkb-redis:7

build_flags=()
if [ "$(basename "$ENGINE")" = podman ]; then
  # runc, not crun (crun refuses hybrid cgroups here), and explicit ulimits (neither runtime may raise
  # RLIMIT_NOFILE/NPROC to the defaults here); docker format keeps HEALTHCHECK; host network for apt and pip.
  build_flags=(--runtime runc --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 --format docker
               --network host --layers)
  [ -d "$WHEELS" ] && build_flags+=(--volume "$(realpath "$WHEELS"):/wheels:ro")
  # A TLS-intercepting proxy's CA bundle (the host's PIP_CERT), for pip inside the build.
  if [ -n "${PIP_CERT:-}" ] && [ -f "$PIP_CERT" ]; then
    build_flags+=(--volume "$(realpath "$PIP_CERT"):/run/host-ca.pem:ro" --build-arg PIP_CERT=/run/host-ca.pem)
  fi
fi

timed() {  # timed LABEL COMMAND...: run it, then print how long it took
  local label=$1 start=$SECONDS
  shift
  "$@"
  echo "images.sh: $label built in $((SECONDS - start)) s"
}

exists() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }

base() {
  [ "$BASE_IMAGE" = "$BASE" ] || return 0
  if exists "$BASE" && [ -z "${REBUILD_BASE:-}" ]; then
    echo "images.sh: $BASE exists (cached; REBUILD_BASE=1 remakes it)"
    return 0
  fi
  command -v debootstrap >/dev/null || { echo "images.sh: apt-get install debootstrap" >&2; exit 2; }
  local root
  root=$(mktemp -d /var/tmp/dkb-base.XXXXXX)
  debootstrap --variant=minbase bookworm "$root" "$MIRROR" >/dev/null
  # What the official slim image leaves out: package lists and caches; apt then fetches what it needs.
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
  echo "deb $MIRROR bookworm main" > "$root/etc/apt/sources.list"
  echo "deb $MIRROR bookworm-updates main" >> "$root/etc/apt/sources.list"
  echo "deb http://deb.debian.org/debian-security bookworm-security main" >> "$root/etc/apt/sources.list"
  tar -C "$root" -c . | "$ENGINE" import --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null
  rm -rf "$root"
}

build() {  # build TAG DOCKERFILE [ARGS...]
  local tag=$1 file=$2
  shift 2
  "$ENGINE" build "${build_flags[@]}" --build-arg BASE_IMAGE="$BASE_IMAGE" -f "$file" -t "$tag" "$@" .
}

# torch: the CPU build from the local wheel where there is one (download.pytorch.org may be unreachable).
cpu_torch=()
compgen -G "$WHEELS/torch-2.13.0+cpu-*.whl" >/dev/null && cpu_torch=(--build-arg TORCH_INDEX=)

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(web worker postgres redis)
timed base base
for target in "${targets[@]}"; do
  case $target in
    base) ;;
    web) timed web build "$TAG_WEB" docker/Dockerfile --target web "${cpu_torch[@]}" ;;
    worker) timed worker build "$TAG_WORKER" docker/Dockerfile --target worker "${cpu_torch[@]}" ;;
    worker-cuda) timed worker-cuda build "$TAG_WORKER_CUDA" docker/Dockerfile --target worker --build-arg TORCH=cuda ;;
    postgres) timed postgres build "$TAG_POSTGRES" docker/postgres.Dockerfile ;;
    redis) timed redis build "$TAG_REDIS" docker/redis.Dockerfile ;;
    *) echo "images.sh: unknown image '$target' (base web worker worker-cuda postgres redis)" >&2; exit 2 ;;
  esac
done
