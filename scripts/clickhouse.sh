#!/usr/bin/env bash
# A ClickHouse HTTP server for tests, CI and local use, from what `npm ci` installed: the engine
# library of the `chdb` package (ClickHouse's clickhouse-local) started by
# scripts/clickhouse-server.mjs through ffi-rs. No download, no compiler, no Java.
#
# It is the real engine and HTTP protocol (@clickhouse/client works against it), not a whole
# clickhouse-server: there is no access management (no users, no passwords, no CREATE USER) and no
# system.query_log. Because anyone who can connect is an administrator, it listens on 127.0.0.1
# ONLY; this script has no option to change that.
#
# Usage: bash scripts/clickhouse.sh start|stop|status|url
#   start   start the server in the background, wait until GET /ping answers "Ok.", print
#           CLICKHOUSE_URL=http://127.0.0.1:PORT. Idempotent: if this checkout's server is already
#           running, says so, prints the URL, exits 0.
#   stop    SIGTERM (the launcher closes the engine's stdin: a clean shutdown), wait up to 30 s,
#           then SIGKILL. Exits 0 if it was not running.
#   status  exits 0 if running (and prints CLICKHOUSE_URL=...), 3 if not.
#   url     prints the URL (http://127.0.0.1:PORT): the running server's, else the one a start
#           would use.
#
# The server starts with only the `default` database. `toolcanon replay|import|consume --clickhouse
# http://127.0.0.1:18123/tc` creates the database its URL names when it is missing; for anything
# else: curl http://127.0.0.1:18123/ --data-binary 'CREATE DATABASE IF NOT EXISTS tc'.
#
# Environment:
#   CLICKHOUSE_HTTP_PORT      HTTP port, default 18123
#   CLICKHOUSE_START_TIMEOUT  seconds to wait for /ping, default 60
#   CLICKHOUSE_STATE_DIR      the folder of the files below, default .cache/clickhouse; another
#                             folder (and port) runs another server beside this checkout's
#
# Files (all under .cache/clickhouse/, which is git-ignored, or CLICKHOUSE_STATE_DIR):
#   data/                             the server's data; KEPT across restarts (a restarted server
#                                     has its databases back). Wipe it with: stop, rm -rf it.
#   clickhouse.pid, clickhouse.log    the running launcher's pid and the engine's log
#   engine.pid                        the engine process's pid (a child of the launcher): kill -9
#                                     it to crash the server (the launcher then exits too); SIGTERM
#                                     to the launcher (stop) is the clean shutdown
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# A second, separate server (e.g. one a fault test kills) takes its own state dir and port:
# CLICKHOUSE_STATE_DIR=/tmp/x CLICKHOUSE_HTTP_PORT=18124 bash scripts/clickhouse.sh start
CACHE="${CLICKHOUSE_STATE_DIR:-$ROOT/.cache/clickhouse}"
[[ "$CACHE" = /* ]] || CACHE="$PWD/$CACHE"
PORT="${CLICKHOUSE_HTTP_PORT:-18123}"
START_TIMEOUT="${CLICKHOUSE_START_TIMEOUT:-60}"
# Loopback only: the listener enforces no credentials (see above).
HOST=127.0.0.1
LAUNCHER="$ROOT/scripts/clickhouse-server.mjs"

DATA="$CACHE/data"
PID_FILE="$CACHE/clickhouse.pid"
ENGINE_PID_FILE="$CACHE/engine.pid"
LOG_FILE="$CACHE/clickhouse.log"
SERVICE=clickhouse.sh
LOCK_FILE="$CACHE/clickhouse.lock"
LOCK_TIMEOUT=$((START_TIMEOUT + 60))
STOP_GRACE=30
# running_pid, stop_pid, cmd_stop, cmd_status, with_lock, port_open, die, log (its Maven
# helpers are not used here).
# shellcheck source=lib/service.sh
source "$ROOT/scripts/lib/service.sh"

is_ours() { tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF "clickhouse-server.mjs --path $DATA "; }

# The port a running server of this checkout was started with (from its command line).
port_of() { tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | grep -A1 -x -- --port | tail -n 1 || true; }

# The URL: a running server's own port, else CLICKHOUSE_HTTP_PORT's.
url() {
  local pid port=$PORT running
  if pid="$(running_pid)"; then
    running="$(port_of "$pid")"
    [[ "$running" =~ ^[0-9]+$ ]] && port=$running
  fi
  echo "http://$HOST:$port"
}
print_address() {
  echo "CLICKHOUSE_URL=$(url)"
  [[ -f "$ENGINE_PID_FILE" ]] && echo "CLICKHOUSE_ENGINE_PID=$(cat "$ENGINE_PID_FILE")"
  return 0
}

# GET /ping over bash's /dev/tcp (no curl needed); ClickHouse answers "Ok.".
ping_ok() {
  (
    exec 3<>"/dev/tcp/$HOST/$PORT" || exit 1
    printf 'GET /ping HTTP/1.0\r\nHost: %s:%s\r\n\r\n' "$HOST" "$PORT" >&3
    timeout 3 cat <&3
  ) 2>/dev/null | grep -q '^Ok\.'
}

cmd_start() {
  command -v node >/dev/null 2>&1 || die "node not found on PATH"
  [[ -d "$ROOT/node_modules/chdb" && -d "$ROOT/node_modules/ffi-rs" ]] || die "chdb and ffi-rs are not installed: run npm ci"
  local pid running_port
  if pid="$(running_pid)"; then
    log "already running (pid $pid)"
    # It keeps the port it was started with; say so if that is not the one asked for now.
    running_port="$(port_of "$pid")"
    if [[ "$running_port" =~ ^[0-9]+$ && "$running_port" != "$PORT" ]]; then
      log "note: it listens on port $running_port, not CLICKHOUSE_HTTP_PORT=$PORT (stop it first to change the port)"
    fi
    print_address
    return 0
  fi
  rm -f "$PID_FILE" "$ENGINE_PID_FILE"
  if port_open "$PORT"; then
    die "port $PORT on $HOST is in use by a process this script did not start; stop it or set CLICKHOUSE_HTTP_PORT"
  fi
  mkdir -p "$DATA"
  local t0
  t0=$(date +%s%N)
  : >"$LOG_FILE"
  # setsid + all three streams redirected: the server outlives the caller (a test runner that
  # captures this script's output gets EOF as soon as this script exits). 9>&- keeps the
  # start/stop lock's descriptor out of the server, or it would hold the lock forever.
  setsid node "$LAUNCHER" --path "$DATA" --port "$PORT" --host "$HOST" --engine-pid-file "$ENGINE_PID_FILE" </dev/null >>"$LOG_FILE" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$PID_FILE"

  local deadline=$((SECONDS + START_TIMEOUT))
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 40 "$LOG_FILE" >&2
      rm -f "$PID_FILE"
      die "server exited during startup (log: $LOG_FILE)"
    fi
    ping_ok && break
    if ((SECONDS >= deadline)); then
      tail -n 40 "$LOG_FILE" >&2
      stop_pid "$pid"
      rm -f "$PID_FILE"
      die "server did not answer $(url)/ping within ${START_TIMEOUT}s (log: $LOG_FILE)"
    fi
    sleep 0.1
  done
  local ms=$((($(date +%s%N) - t0) / 1000000))
  log "ClickHouse (chdb's clickhouse-local) started (pid $pid) in ${ms} ms; data: $DATA; log: $LOG_FILE"
  print_address
}

case "${1:-}" in
  start) with_lock cmd_start ;;
  stop) with_lock cmd_stop ;;
  status) cmd_status ;;
  url) url ;;
  *)
    echo "usage: bash scripts/clickhouse.sh start|stop|status|url" >&2
    exit 2
    ;;
esac
