# The web image: gunicorn serving the leaderboard. Built from the repository root:
#   docker build -f docker/web.Dockerfile -t dkb-web .
FROM python:3.11-slim-bookworm
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY evaluator evaluator
COPY sandbox sandbox
COPY leaderboard leaderboard
COPY templates templates
COPY static static
COPY manage.py ./
# The web tier never runs kernels: the CPU build of torch is enough for query metadata.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu && pip install .
RUN STATIC_ROOT=/app/staticfiles python manage.py collectstatic --noinput
RUN useradd --system --uid 10001 dkb
USER dkb
EXPOSE 8000
CMD ["gunicorn", "leaderboard.wsgi", "--bind", "0.0.0.0:8000", "--workers", "4"]
