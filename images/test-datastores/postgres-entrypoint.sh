#!/bin/sh
# Entrypoint of localhost/cubicle/postgres, the real-node test cluster's stand-in for the chart's
# default `postgres:16-bookworm` (Docker Hub cannot be reached from the test machines). It honours
# the same variables the chart's StatefulSet sets: POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB
# and PGDATA. Debian bookworm's PostgreSQL is 15; Cubicle's migrations need nothing newer.
set -eu
bin=/usr/lib/postgresql/15/bin
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "postgres-entrypoint: POSTGRES_PASSWORD is not set" >&2
    exit 1
  fi
  mkdir -p "$PGDATA"
  chmod 700 "$PGDATA"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  # Local (socket) connections trusted, as the official image does; over TCP a password.
  "$bin/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" -E UTF8 \
    --auth-local=trust --auth-host=scram-sha-256 --no-instructions
  rm -f "$pwfile"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" |
      "$bin/postgres" --single -D "$PGDATA" postgres >/dev/null
  fi
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' \
  -c unix_socket_directories=/var/run/postgresql "$@"
