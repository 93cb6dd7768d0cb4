# Redis 7 from Debian's packages (no registry image needed): the django-q2 broker and the shared cache.
ARG BASE_IMAGE=docker.io/library/debian:bookworm-slim
FROM ${BASE_IMAGE}
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/* && mkdir -p /data && chown redis:redis /data
USER redis
WORKDIR /data
EXPOSE 6379
HEALTHCHECK --interval=5s --timeout=5s --retries=10 CMD redis-cli ping | grep -q PONG
# Queued runs survive a restart (append-only file in the volume).
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--dir", "/data", "--appendonly", "yes"]
