#!/usr/bin/env bash
# Single-node Apache Kafka broker (KRaft, broker+controller in one JVM) for tests and CI.
#
# There is no Kafka tarball here: the broker's classpath is assembled from Maven Central
# (org.apache.kafka:kafka_2.13 and its runtime dependencies, plus a reload4j logging
# binding) by a tiny generated pom, and copied once into .cache/kafka/<version>/lib.
# Later starts reuse that folder and never call Maven (they work offline).
#
# Usage: bash scripts/kafka.sh start|stop|status|classpath
#   start      resolve the classpath if needed, format fresh storage, start the broker in
#              the background, wait until it serves metadata, print KAFKA_BROKERS=host:port.
#              Idempotent: if this checkout's broker is already running, says so, exits 0.
#   stop       SIGTERM, wait up to 30 s, then SIGKILL. Exits 0 if it was not running. Then
#              stops the OTLP receiver the export tests start (scripts/otlp-receiver.sh stop),
#              so `npm run kafka:stop` leaves no test service of this checkout but the
#              ClickHouse server (`npm run clickhouse:stop`).
#   status     exits 0 if running (and prints KAFKA_BROKERS=...), 3 if not.
#   classpath  resolve (if needed) and print the classpath, one jar per line.
#
# Environment:
#   KAFKA_VERSION          default 3.9.1 (stay on 3.9.x: kafkajs 2.2.4 speaks protocol
#                          versions that Kafka 4.x removed)
#   KAFKA_PORT             PLAINTEXT listener port, default 19092
#   KAFKA_CONTROLLER_PORT  CONTROLLER listener port, default 19093
#   KAFKA_SASL_PORT        SASL_PLAINTEXT listener port (mechanism PLAIN), default 19094; its
#                          one user is toolcanon-test with password KAFKA_SASL_TEST_PASSWORD
#                          (default toolcanon-test-secret): a test account for a loopback broker
#   KAFKA_HEAP_OPTS        default "-Xms256m -Xmx512m"
#   KAFKA_START_TIMEOUT    seconds to wait for the broker, default 90
#
# Files (all under .cache/kafka/, which is git-ignored):
#   <version>/pom.xml, <version>/lib/*.jar   the cached classpath
#   server.properties, log4j.properties       written by every start
#   data/                                     KRaft metadata + log dirs (wiped by every start)
#   kafka.pid, kafka.log                      the running broker's pid and its output
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache/kafka"
KAFKA_VERSION="${KAFKA_VERSION:-3.9.1}"
KAFKA_PORT="${KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19093}"
KAFKA_SASL_PORT="${KAFKA_SASL_PORT:-19094}"
KAFKA_SASL_TEST_USER=toolcanon-test
KAFKA_SASL_TEST_PASSWORD="${KAFKA_SASL_TEST_PASSWORD:-toolcanon-test-secret}"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
HOST=127.0.0.1

VERSION_DIR="$CACHE/$KAFKA_VERSION"
LIB="$VERSION_DIR/lib"
STAMP="$VERSION_DIR/resolved"
DATA="$CACHE/data"
PID_FILE="$CACHE/kafka.pid"
LOG_FILE="$CACHE/kafka.log"
CONFIG="$CACHE/server.properties"
LOG4J="$CACHE/log4j.properties"
SERVICE=kafka.sh
LOCK_FILE="$CACHE/kafka.lock"
LOCK_TIMEOUT=$((KAFKA_START_TIMEOUT + 120))
STOP_GRACE=30
# shellcheck source=lib/service.sh
source "$ROOT/scripts/lib/service.sh"

require_java() {
  command -v java >/dev/null 2>&1 || die "java not found on PATH (Kafka needs a JRE, 17 is known to work; e.g. apt-get install openjdk-17-jre-headless)"
}

# ---------------------------------------------------------------------------------------
# Classpath
# ---------------------------------------------------------------------------------------
resolve_classpath() {
  # slf4j-reload4j + reload4j are what the Kafka 3.9 tarball ships as its logging binding;
  # without them the broker logs nothing (slf4j NOP) and kafka.utils.Log4jController breaks.
  resolve_maven_classpath kafka-broker-classpath "org.apache.kafka:kafka_2.13:$KAFKA_VERSION" "$(
    maven_dependency org.apache.kafka kafka_2.13 "$KAFKA_VERSION"
    maven_dependency org.slf4j slf4j-reload4j 1.7.36
    maven_dependency ch.qos.reload4j reload4j 1.2.25
  )"
}

# ---------------------------------------------------------------------------------------
# Process bookkeeping
# ---------------------------------------------------------------------------------------
is_ours() { tr '\0' ' ' <"/proc/$1/cmdline" | grep -q "kafka.Kafka $CONFIG"; }

# Tiny Kafka protocol client: send one raw request (printf escapes) to the PLAINTEXT
# listener and print the first N bytes of the response as hex (empty on any failure).
kafka_request() {
  local request=$1 nbytes=$2
  (
    exec 3<>"/dev/tcp/$HOST/$KAFKA_PORT" || exit 1
    # shellcheck disable=SC2059
    printf "$request" >&3
    timeout 3 head -c "$nbytes" <&3 | od -An -tx1 | tr -d ' \n'
  ) 2>/dev/null || true
}

# Readiness, checked with real requests (every request header here: api_key, api_version,
# correlation_id=7, client_id="probe"; every response starts size(int32) correlation_id(int32)):
# 1. Metadata v0 (all topics) -> brokers array count. Fenced brokers are left out of
#    metadata, so a count >= 1 means the broker is registered and unfenced.
metadata_ok() {
  local hex
  hex="$(kafka_request '\x00\x00\x00\x13\x00\x03\x00\x00\x00\x00\x00\x07\x00\x05probe\x00\x00\x00\x00' 12)"
  [[ ${#hex} -eq 24 && "${hex:8:8}" == "00000007" ]] || return 1
  (( 16#${hex:16:8} >= 1 ))
}
# 2. FindCoordinator v0 for group "probe" -> error_code 0. The first such request makes the
#    broker create __consumer_offsets; until it has a leader the answer is
#    COORDINATOR_NOT_AVAILABLE.
coordinator_found() {
  local hex
  hex="$(kafka_request '\x00\x00\x00\x16\x00\x0a\x00\x00\x00\x00\x00\x07\x00\x05probe\x00\x05probe' 10)"
  [[ ${#hex} -eq 20 && "${hex:8:8}" == "00000007" && "${hex:16:4}" == "0000" ]]
}
# 3. DescribeGroups v0 ["probe"] -> groups count 1 with error_code 0 (COORDINATOR_LOAD_IN_PROGRESS
#    while the offsets partition loads). __consumer_offsets has a single partition (see the
#    config), so once this group's coordinator is loaded, every group's is. Without steps 2-3
#    the first kafkajs consumer on a fresh broker crashes once with "The coordinator is loading"
#    and restarts itself.
group_coordinator_ready() {
  local hex
  hex="$(kafka_request '\x00\x00\x00\x1a\x00\x0f\x00\x00\x00\x00\x00\x07\x00\x05probe\x00\x00\x00\x01\x00\x05probe' 14)"
  [[ ${#hex} -eq 28 && "${hex:8:8}" == "00000007" && "${hex:16:8}" == "00000001" && "${hex:24:4}" == "0000" ]]
}

print_address() {
  echo "KAFKA_BROKERS=$HOST:$KAFKA_PORT"
  echo "KAFKA_SASL_BROKERS=$HOST:$KAFKA_SASL_PORT"
}

# ---------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------
write_config() {
  cat >"$CONFIG" <<EOF
# Written by scripts/kafka.sh on every start; edit the script, not this file.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT,SASL_PLAINTEXT://$HOST:$KAFKA_SASL_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT,SASL_PLAINTEXT://$HOST:$KAFKA_SASL_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
# A SASL listener beside the plaintext one, for the credentials test: PLAIN, one test user.
listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$KAFKA_SASL_TEST_USER="$KAFKA_SASL_TEST_PASSWORD";
log.dirs=$DATA/logs
metadata.log.dir=$DATA/metadata
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=3
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
log.retention.hours=4
log.segment.bytes=67108864
EOF
  cat >"$LOG4J" <<'EOF'
# Written by scripts/kafka.sh: everything goes to stdout, which the script sends to kafka.log.
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.log.LogCleaner=WARN
log4j.logger.org.apache.kafka.storage.internals.log=WARN
log4j.logger.kafka.log.UnifiedLog=WARN
log4j.logger.kafka.log.LogManager=WARN
EOF
}

cmd_start() {
  require_java
  local pid
  if pid="$(running_pid)"; then
    log "already running (pid $pid)"
    print_address
    return 0
  fi
  rm -f "$PID_FILE"
  if port_open "$KAFKA_PORT" || port_open "$KAFKA_CONTROLLER_PORT" || port_open "$KAFKA_SASL_PORT"; then
    die "port $KAFKA_PORT, $KAFKA_CONTROLLER_PORT or $KAFKA_SASL_PORT on $HOST is in use by a process this script did not start; stop it or set KAFKA_PORT / KAFKA_CONTROLLER_PORT / KAFKA_SASL_PORT"
  fi
  resolve_classpath
  local cp="$LIB/*"
  local t0=$SECONDS

  # Fresh storage on every start: tests create their own (uniquely named) topics, so there is
  # nothing worth keeping, and a fresh cluster id avoids any stale-metadata surprises.
  rm -rf "$DATA"
  mkdir -p "$DATA"
  write_config

  # Random cluster id, as kafka-storage.sh random-uuid would print (22 chars, url-safe base64
  # of 16 random bytes); one starting with '-' would be read as an option, so draw again.
  local cluster_id
  while :; do
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
    [[ "$cluster_id" != -* ]] && break
  done

  local jvm_common=(-Dlog4j.configuration="file:$LOG4J" -Djava.awt.headless=true)
  # shellcheck disable=SC2206
  local heap=($KAFKA_HEAP_OPTS)
  : >"$LOG_FILE"
  if ! java -Xmx256m -XX:TieredStopAtLevel=1 "${jvm_common[@]}" -cp "$cp" kafka.tools.StorageTool \
      format -t "$cluster_id" -c "$CONFIG" --ignore-formatted >>"$LOG_FILE" 2>&1; then
    tail -n 30 "$LOG_FILE" >&2
    die "formatting KRaft storage failed (see $LOG_FILE)"
  fi

  # setsid + all three streams redirected: the broker outlives the caller (a test runner
  # that captures this script's output gets EOF as soon as this script exits). 9>&- keeps
  # the start/stop lock's descriptor out of the broker, or it would hold the lock forever.
  setsid java -server "${heap[@]}" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:+ExplicitGCInvokesConcurrent "${jvm_common[@]}" -Dkafka.logs.dir="$CACHE" \
    -cp "$cp" kafka.Kafka "$CONFIG" </dev/null >>"$LOG_FILE" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$PID_FILE"

  local deadline=$((SECONDS + KAFKA_START_TIMEOUT))
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 40 "$LOG_FILE" >&2
      rm -f "$PID_FILE"
      die "broker exited during startup (log: $LOG_FILE)"
    fi
    if port_open "$KAFKA_PORT" && port_open "$KAFKA_SASL_PORT" && metadata_ok && coordinator_found && group_coordinator_ready; then
      break
    fi
    if ((SECONDS >= deadline)); then
      tail -n 40 "$LOG_FILE" >&2
      stop_pid "$pid"
      die "broker did not answer on $HOST:$KAFKA_PORT within ${KAFKA_START_TIMEOUT}s (log: $LOG_FILE)"
    fi
    sleep 0.25
  done
  log "Kafka $KAFKA_VERSION started (pid $pid) in $((SECONDS - t0)) s; log: $LOG_FILE"
  print_address
}

cmd_classpath() {
  resolve_classpath
  ls -1 "$LIB"/*.jar
}

case "${1:-}" in
  start) with_lock cmd_start ;;
  stop)
    with_lock cmd_stop
    # The tests' other JVM: the OTLP receiver of test/export (its own script, lock and pid file).
    bash "$ROOT/scripts/otlp-receiver.sh" stop
    ;;
  status) cmd_status ;;
  classpath) with_lock cmd_classpath ;;
  *)
    echo "usage: bash scripts/kafka.sh start|stop|status|classpath" >&2
    exit 2
    ;;
esac
