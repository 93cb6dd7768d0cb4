# PostgreSQL 15 from Debian's packages (no registry image needed). Configured like the official image:
# POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB make the cluster on first start, in the volume at PGDATA.
ARG BASE_IMAGE=docker.io/library/debian:bookworm-slim
FROM ${BASE_IMAGE}
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PGDATA=/var/lib/postgresql/data
# No cluster at install time: the entrypoint makes one in the volume.
RUN mkdir -p /etc/postgresql-common/createcluster.d \
    && echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/no-main-cluster.conf \
    && apt-get update && apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p "$PGDATA" /run/postgresql && chown postgres:postgres "$PGDATA" /run/postgresql \
    && chmod 700 "$PGDATA"
COPY docker/postgres-start.sh /usr/local/bin/postgres-start
USER postgres
EXPOSE 5432
HEALTHCHECK --interval=5s --timeout=5s --retries=10 CMD pg_isready -q -h 127.0.0.1 -U "${POSTGRES_USER:-postgres}"
CMD ["postgres-start"]
