#!/bin/sh
# Make the cluster on first start (an empty PGDATA), then run PostgreSQL in the foreground.
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    postgres --single -D "$PGDATA" postgres <<SQL >/dev/null
CREATE DATABASE "$POSTGRES_DB" OWNER "$POSTGRES_USER";
SQL
  fi
  echo "postgres-start: made a cluster in $PGDATA with database $POSTGRES_DB"
fi
exec postgres -c listen_addresses='*'
