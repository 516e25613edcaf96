#!/usr/bin/env sh
# PgBouncer in front of the local PostgreSQL server, as a hosted pooler runs it: PgBouncer's
# default settings (no ignore_startup_parameters, the default max_client_conn and
# default_pool_size) except what a local run must set: the pool mode, the address, trust
# authentication for the postgres user, every database forwarded to the server, and the
# pid and log files in a directory of its own.
#
#   scripts/pgbouncer.sh start [transaction|session]   # transaction by default; waits until it answers
#   scripts/pgbouncer.sh stop                          # immediate shutdown; waits until it is gone
#
# PGBOUNCER_PORT (6432), PGBOUNCER_DIR (a directory under $TMPDIR named by the port) and
# PGBOUNCER_SERVER (host=127.0.0.1 port=5432) change where it listens, where its files go and
# where it forwards. PgBouncer refuses to run as root: as root it runs as the postgres user.
set -eu

command="${1:-}"
mode="${2:-transaction}"
port="${PGBOUNCER_PORT:-6432}"
dir="${PGBOUNCER_DIR:-${TMPDIR:-/tmp}/pgbouncer-$port}"
server="${PGBOUNCER_SERVER:-host=127.0.0.1 port=5432}"

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

running() {
  [ -f "$dir/pgbouncer.pid" ] && kill -0 "$(cat "$dir/pgbouncer.pid")" 2>/dev/null
}

case "$command" in
  start)
    case "$mode" in transaction | session) ;; *) echo "pool mode: transaction or session, not $mode" >&2; exit 2 ;; esac
    command -v pgbouncer >/dev/null || { echo 'PgBouncer is not installed: apt-get install pgbouncer' >&2; exit 2; }
    if running; then echo "PgBouncer already runs on port $port ($dir)" >&2; exit 1; fi
    mkdir -p "$dir"
    cat >"$dir/pgbouncer.ini" <<EOF
[databases]
* = $server

[pgbouncer]
pool_mode = $mode
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/userlist.txt
pidfile = $dir/pgbouncer.pid
logfile = $dir/pgbouncer.log
EOF
    echo '"postgres" ""' >"$dir/userlist.txt"
    [ "$(id -u)" = 0 ] && chown -R postgres "$dir"
    as_owner pgbouncer -d -q "$dir/pgbouncer.ini"
    for _ in $(seq 1 50); do
      pg_isready -q -h 127.0.0.1 -p "$port" -d postgres -U postgres && break
      sleep 0.1
    done
    pg_isready -q -h 127.0.0.1 -p "$port" -d postgres -U postgres || {
      echo "PgBouncer did not start; see $dir/pgbouncer.log" >&2
      exit 1
    }
    echo "PgBouncer ($mode mode) on 127.0.0.1:$port, files in $dir"
    ;;
  stop)
    running || exit 0
    pid="$(cat "$dir/pgbouncer.pid")"
    kill -TERM "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
    echo "PgBouncer ($pid) did not stop" >&2
    exit 1
    ;;
  *)
    echo "usage: $0 start [transaction|session] | stop" >&2
    exit 2
    ;;
esac
