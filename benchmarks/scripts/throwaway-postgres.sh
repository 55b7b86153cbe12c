#!/bin/sh
# A throwaway PostgreSQL 15 on 127.0.0.1 for benchmarks and CI (the same steps as the hub tests'
# PostgresServer fixture; TOOLCHAIN.md, "Hub persistence and cluster").
#
#   eval "$(benchmarks/scripts/throwaway-postgres.sh start)"   # exports CAPSULE_PG_URL/USER/PASSWORD/DIR
#   ...
#   benchmarks/scripts/throwaway-postgres.sh stop "$CAPSULE_PG_DIR"
#
# Needs Debian's postgresql (apt-get install -y postgresql). As root the server runs as the
# postgres user (root cannot run it); as anyone else, as that user.
set -eu
BIN=/usr/lib/postgresql/15/bin

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
  [ -x "$BIN/initdb" ] || {
    echo "no $BIN/initdb: apt-get update && apt-get install -y postgresql" >&2
    exit 2
  }
  dir=$(mktemp -d /tmp/capsule-pg-XXXXXX)
  password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
  chmod 700 "$dir"
  printf '%s\n' "$password" >"$dir/pwfile"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir/pwfile"
  as_pg "$BIN/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pwfile" --auth-local=peer \
    --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    exit 1
  }
  rm -f "$dir/pwfile"
  # A random high port; a taken one makes pg_ctl fail, and the next try picks another.
  tries=0
  until
    port=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000))
    as_pg "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" \
      -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir" -w -t 60 start \
      >/dev/null
  do
    tries=$((tries + 1))
    [ "$tries" -lt 5 ] || {
      cat "$dir/server.log" >&2
      exit 1
    }
  done
  PGPASSWORD=$password psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -q \
    -c "CREATE ROLE capsule LOGIN PASSWORD '$password'" -c "CREATE DATABASE capsule OWNER capsule" >&2
  echo "export CAPSULE_PG_URL=jdbc:postgresql://127.0.0.1:$port/capsule"
  echo "export CAPSULE_PG_USER=capsule"
  echo "export CAPSULE_PG_PASSWORD=$password"
  echo "export CAPSULE_PG_DIR=$dir"
  ;;
stop)
  dir=${2:?usage: $0 stop DIR}
  case "$dir" in /tmp/capsule-pg-*) ;; *) echo "not a throwaway server directory: $dir" >&2; exit 2 ;; esac
  as_pg "$BIN/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null || true
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start | stop DIR" >&2
  exit 2
  ;;
esac
