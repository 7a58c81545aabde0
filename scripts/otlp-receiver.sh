#!/usr/bin/env bash
# An OTLP/HTTP trace receiver for the export tests (scripts/otlp-receiver/OtlpReceiver.java): it
# decodes what `toolcanon export otlp` sends with the OpenTelemetry project's Java bindings of the
# OTLP protobufs and serves back what it received (GET /debug/spans).
#
# As scripts/kafka.sh does for Kafka, the classpath comes from Maven Central
# (io.opentelemetry.proto:opentelemetry-proto and protobuf-java-util for the JSON mapping) through
# a tiny generated pom, copied once into .cache/otlp-receiver/<proto version>/lib together with the
# compiled receiver. Later starts reuse that folder and never call Maven (they work offline).
#
# Usage: bash scripts/otlp-receiver.sh start|stop|status|classpath
#   start      resolve and compile if needed, start the receiver in the background (forgetting what
#              an earlier run received), wait until it answers, print OTLP_RECEIVER_URL=http://host:port.
#              Idempotent: if this checkout's receiver is already running, says so, exits 0.
#   stop       SIGTERM, wait up to 10 s, then SIGKILL. Exits 0 if it was not running.
#   status     exits 0 if running (and prints OTLP_RECEIVER_URL=...), 3 if not.
#   classpath  resolve (if needed) and print the classpath, one jar per line.
#
# Environment:
#   OTLP_PROTO_VERSION           default 1.11.0-alpha (opentelemetry-proto; its protobuf is 4.35.1)
#   OTLP_RECEIVER_PORT           default 14318
#   OTLP_RECEIVER_START_TIMEOUT  seconds to wait for the receiver, default 60
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache/otlp-receiver"
PROTO_VERSION="${OTLP_PROTO_VERSION:-1.11.0-alpha}"
PROTOBUF_VERSION=4.35.1
PORT="${OTLP_RECEIVER_PORT:-14318}"
START_TIMEOUT="${OTLP_RECEIVER_START_TIMEOUT:-60}"
HOST=127.0.0.1
SOURCE="$ROOT/scripts/otlp-receiver/OtlpReceiver.java"

VERSION_DIR="$CACHE/$PROTO_VERSION"
LIB="$VERSION_DIR/lib"
STAMP="$VERSION_DIR/resolved"
CLASSES="$VERSION_DIR/classes"
PID_FILE="$CACHE/receiver.pid"
LOG_FILE="$CACHE/receiver.log"
SERVICE=otlp-receiver.sh
LOCK_FILE="$CACHE/receiver.lock"
LOCK_TIMEOUT=$((START_TIMEOUT + 300))
STOP_GRACE=10
# shellcheck source=lib/service.sh
source "$ROOT/scripts/lib/service.sh"

require_java() {
  command -v java >/dev/null 2>&1 || die "java not found on PATH (the receiver needs a JDK 17; e.g. apt-get install openjdk-17-jdk-headless)"
  command -v javac >/dev/null 2>&1 || die "javac not found on PATH (the receiver is compiled on first start; e.g. apt-get install openjdk-17-jdk-headless)"
}

resolve_classpath() {
  resolve_maven_classpath otlp-receiver-classpath "io.opentelemetry.proto:opentelemetry-proto:$PROTO_VERSION" "$(
    maven_dependency io.opentelemetry.proto opentelemetry-proto "$PROTO_VERSION"
    maven_dependency com.google.protobuf protobuf-java-util "$PROTOBUF_VERSION"
  )"
}

compile_receiver() {
  # Recompiled whenever the source is newer than the class (the source is in the repository).
  if [[ -f "$CLASSES/OtlpReceiver.class" && "$CLASSES/OtlpReceiver.class" -nt "$SOURCE" ]]; then return 0; fi
  rm -rf "$CLASSES"
  mkdir -p "$CLASSES"
  javac -nowarn -d "$CLASSES" -cp "$LIB/*" "$SOURCE" >"$VERSION_DIR/javac.log" 2>&1 || { cat "$VERSION_DIR/javac.log" >&2; die "compiling $SOURCE failed"; }
}

is_ours() { tr '\0' ' ' <"/proc/$1/cmdline" | grep -q "OtlpReceiver $PORT"; }

answers() {
  # GET /debug/requests answers 200 with a JSON object once the server is up.
  local reply
  reply="$( (
    exec 3<>"/dev/tcp/$HOST/$PORT" || exit 1
    printf 'GET /debug/requests HTTP/1.0\r\nHost: %s\r\n\r\n' "$HOST" >&3
    timeout 3 cat <&3
  ) 2>/dev/null)" || return 1
  [[ "$reply" == "HTTP/1."?" 200"* ]]
}

print_address() { echo "OTLP_RECEIVER_URL=http://$HOST:$PORT"; }

cmd_start() {
  require_java
  local pid
  if pid="$(running_pid)"; then
    log "already running (pid $pid)"
    print_address
    return 0
  fi
  rm -f "$PID_FILE"
  port_open "$PORT" && die "port $PORT on $HOST is in use by a process this script did not start; stop it or set OTLP_RECEIVER_PORT"
  resolve_classpath
  compile_receiver
  mkdir -p "$CACHE"
  : >"$LOG_FILE"
  # setsid + all streams redirected: the receiver outlives the caller (as in kafka.sh); 9>&- keeps
  # the lock's descriptor out of it.
  setsid java -Xms32m -Xmx256m -XX:TieredStopAtLevel=1 -cp "$CLASSES:$LIB/*" OtlpReceiver "$PORT" </dev/null >>"$LOG_FILE" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$PID_FILE"
  local deadline=$((SECONDS + START_TIMEOUT))
  until answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 40 "$LOG_FILE" >&2
      rm -f "$PID_FILE"
      die "receiver exited during startup (log: $LOG_FILE)"
    fi
    if ((SECONDS >= deadline)); then
      tail -n 40 "$LOG_FILE" >&2
      stop_pid "$pid"
      die "receiver did not answer on $HOST:$PORT within ${START_TIMEOUT}s (log: $LOG_FILE)"
    fi
    sleep 0.2
  done
  log "OTLP receiver (opentelemetry-proto $PROTO_VERSION) started (pid $pid); log: $LOG_FILE"
  print_address
}

case "${1:-}" in
  start) with_lock cmd_start ;;
  stop) with_lock cmd_stop ;;
  status) cmd_status ;;
  classpath) with_lock resolve_classpath && ls -1 "$LIB"/*.jar ;;
  *)
    echo "usage: bash scripts/otlp-receiver.sh start|stop|status|classpath" >&2
    exit 2
    ;;
esac
