# The evaluator image. The docker backend (sandbox/docker.py) starts every untrusted runner in a fresh
# container of it (`--user 65534:65534`, read-only, no network); the GPU worker (qcluster) runs from it
# too, as the non-root user `dkb`, and then evaluates inside bubblewrap (compose.yaml).
#
# The base is pinned by digest, given at build time: no digest is written here because no registry could
# be reached where this file was written. Look it up, build, push, and pin what was pushed:
#   docker buildx imagetools inspect nvcr.io/nvidia/pytorch:25.10-py3        # its "Digest:"
#   docker build -f docker/evaluator.Dockerfile \
#     --build-arg BASE_IMAGE=nvcr.io/nvidia/pytorch:25.10-py3@sha256:<digest> -t REGISTRY/dkb-evaluator .
#   docker push REGISTRY/dkb-evaluator      # then DKB_EVALUATOR_IMAGE=REGISTRY/dkb-evaluator@sha256:<digest>
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG BASE_IMAGE
RUN case "${BASE_IMAGE}" in \
      *@sha256:[0-9a-f]*) ;; \
      *) echo "BASE_IMAGE must be pinned by digest (image@sha256:...), got '${BASE_IMAGE}'" >&2; exit 1 ;; \
    esac
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md manage.py ./
COPY evaluator evaluator
COPY sandbox sandbox
COPY leaderboard leaderboard
COPY templates templates
COPY static static
# The base image's CUDA build of torch and its triton stay; only the rest is installed.
RUN pip install --no-deps . && pip install duckdb==1.5.5 duckdb-extension-tpch==1.5.5 sqlglot==30.31.0 \
    tqdm 'django>=5.2,<5.3' 'djangorestframework>=3.15,<4' 'django-q2>=1.11,<1.12' 'redis>=5,<9' \
    'psycopg[binary]>=3.2,<4' 'dj-database-url>=2.2,<4' 'whitenoise>=6.7,<7' 'pygments>=2.18,<3' matplotlib \
    'django-filter>=24.3,<27' 'drf-spectacular>=0.28,<0.31' 'drf-spectacular-sidecar>=2024.11.1,<2028'
# Runner containers start in /tmp (--workdir), so `python -m evaluator.runner` imports the installed package.
RUN python -c "import evaluator.runner, sandbox" && useradd --system --uid 10001 --home-dir /tmp dkb
USER dkb
CMD ["python", "manage.py", "qcluster"]
