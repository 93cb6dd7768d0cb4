# The GPU worker image: django-q2's qcluster on a GPU host, evaluating inside bubblewrap.
#   docker build -f docker/evaluator.Dockerfile -t dkb-evaluator .
FROM nvcr.io/nvidia/pytorch:25.10-py3
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
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
    'psycopg[binary]>=3.2,<4' 'dj-database-url>=2.2,<4' 'whitenoise>=6.7,<7' 'pygments>=2.18,<3' matplotlib
CMD ["python", "manage.py", "qcluster"]
