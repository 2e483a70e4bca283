#!/usr/bin/env bash
# A throwaway PostgreSQL server on a loopback port, for Pulumi's PostgreSQL state backend.
#
#   scripts/postgres.sh start DIR          create the cluster on first use, then start it
#   scripts/postgres.sh url DIR [TABLE]    print the backend URL (PULUMI_BACKEND_URL / pulumi login)
#   scripts/postgres.sh stop DIR           stop the server (fast shutdown), keeping its data
#   scripts/postgres.sh status DIR         exit 0 when the server is running
#   scripts/postgres.sh clean DIR          stop the server and delete the cluster
#
# DIR keeps postgres.env (port, password, where the cluster lives). The server is Debian's
# `postgresql` package; when it is missing and we are root (CI), it is installed with apt-get.
# PostgreSQL refuses to run as root, so as root the cluster lives in a fresh /tmp directory owned
# by the `postgres` user the package creates, and the server runs as that user (runuser).
# One database, `pulumi`, and one role, `pulumi`, with a random password (scram-sha-256).
set -euo pipefail

say() { printf '[postgres] %s\n' "$*" >&2; }
die() { printf '[postgres] error: %s\n' "$*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: $0 start|url|stop|status|clean DIR [TABLE]"
COMMAND="$1"
DIR="$(mkdir -p "$2" && cd "$2" && pwd)"
TABLE="${3:-}"
ENV_FILE="$DIR/postgres.env"
SERVER_USER=postgres

is_root() { [ "$(id -u)" = 0 ]; }

# Run a server-side command (initdb, pg_ctl) as the user the server runs as.
as_server() {
  if is_root; then runuser -u "$SERVER_USER" -- "$@"; else "$@"; fi
}

# The highest-versioned /usr/lib/postgresql/<version>/bin, or nothing (and status 0, so that
# set -e lets ensure_installed install it) when there is none.
newest_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    if [ -d "$dir" ]; then printf '%s\n' "$dir"; fi
  done | sort -V | tail -1
}

ensure_installed() {
  PG_BIN="${PG_BIN:-$(newest_bin)}"
  if [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ]; then
    return
  fi
  is_root || die "PostgreSQL is not installed: run 'sudo apt-get install postgresql' (Debian/Ubuntu), then retry"
  command -v apt-get >/dev/null || die "PostgreSQL is not installed and there is no apt-get: install PostgreSQL >= 13 and set PG_BIN to its bin directory"
  say "installing Debian's postgresql package (one-off)"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null \
    || die "apt-get install postgresql failed"
  PG_BIN="$(newest_bin)"
  [ -x "${PG_BIN:-/nonexistent}/initdb" ] || die "postgresql installed, but no initdb under /usr/lib/postgresql/*/bin"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Create the cluster (once): data directory, role `pulumi` with a random password, settings.
init_cluster() {
  local base password pwfile
  ensure_installed
  if is_root; then
    id "$SERVER_USER" >/dev/null 2>&1 || die "no '$SERVER_USER' user to run the server as (the postgresql package creates it)"
    base="$(mktemp -d "${TMPDIR:-/tmp}/together-postgres.XXXXXX")"
    chown "$SERVER_USER" "$base"
  else
    base="$DIR/cluster"
    mkdir -p "$base"
  fi
  chmod 700 "$base"
  password="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
  pwfile="$base/initial-password"
  printf '%s\n' "$password" >"$pwfile"
  is_root && chown "$SERVER_USER" "$pwfile"
  as_server "$PG_BIN/initdb" -D "$base/data" -U pulumi --pwfile="$pwfile" \
    --auth=scram-sha-256 -E UTF8 --no-instructions >"$DIR/initdb.log" 2>&1 \
    || { rm -f "$pwfile"; cat "$DIR/initdb.log" >&2; die "initdb failed"; }
  rm -f "$pwfile"
  umask 077
  cat >"$ENV_FILE" <<ENV
PG_BIN='$PG_BIN'
PG_BASE='$base'
PG_PORT='${PG_PORT:-$(free_port)}'
PG_PASSWORD='$password'
ENV
}

load() {
  [ -f "$ENV_FILE" ] || return 1
  # shellcheck source=/dev/null
  source "$ENV_FILE"
}

running() { load && as_server "$PG_BIN/pg_ctl" -D "$PG_BASE/data" status >/dev/null 2>&1; }

psql_as_pulumi() {
  PGPASSWORD="$PG_PASSWORD" "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U pulumi -v ON_ERROR_STOP=1 -qtA "$@"
}

start() {
  load || init_cluster
  load
  if running; then
    return
  fi
  as_server "$PG_BIN/pg_ctl" -D "$PG_BASE/data" -l "$PG_BASE/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$PG_PORT -c unix_socket_directories=$PG_BASE" \
    start >/dev/null || { tail -20 "$PG_BASE/server.log" >&2 || true; die "the server did not start"; }
  if [ -z "$(psql_as_pulumi -d postgres -c "SELECT 1 FROM pg_database WHERE datname = 'pulumi'")" ]; then
    psql_as_pulumi -d postgres -c "CREATE DATABASE pulumi"
  fi
  say "running on 127.0.0.1:$PG_PORT (data: $PG_BASE/data)"
}

url() {
  load || die "no server in $DIR: run '$0 start $DIR' first"
  local query="sslmode=disable"
  [ -n "$TABLE" ] && query="$query&table=$TABLE"
  printf 'postgres://pulumi:%s@127.0.0.1:%s/pulumi?%s\n' "$PG_PASSWORD" "$PG_PORT" "$query"
}

stop() {
  if running; then
    as_server "$PG_BIN/pg_ctl" -D "$PG_BASE/data" -m fast -w stop >/dev/null
    say "stopped"
  fi
}

clean() {
  stop
  if load; then
    rm -rf "$PG_BASE"
  fi
  rm -f "$ENV_FILE" "$DIR/initdb.log"
}

case "$COMMAND" in
  start) start ;;
  url) url ;;
  stop) stop ;;
  status) running ;;
  clean) clean ;;
  *) die "unknown command '$COMMAND' (start, url, stop, status, clean)" ;;
esac
