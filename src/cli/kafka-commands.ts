// `toolcanon consume` (the stream worker) and `toolcanon produce` (publish JSONL files to a topic).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DEFAULT_LIMITS } from '../decode/event.ts';
import { createKafkaClient, type KafkaAdmin, type StreamProducer } from '../kafka/client.ts';
import { publishPaths } from '../kafka/publish.ts';
import { brokerListHasCredentials, kafkaSecurityFromEnv } from '../kafka/security.ts';
import { ConfigError } from '../config/secrets.ts';
import { SinkError } from '../sink/errors.ts';
import { redactionFromEnv } from '../redact/redact.ts';
import { ClickHouseSink, type SinkTarget } from '../sink/clickhouse.ts';
import { backoffDelayMs, sleep } from '../worker/backoff.ts';
import { rateRows, storedRows } from './summary.ts';
import { createLogger, LOG_FORMATS, LOG_LEVELS, parseLogLevel, type LogFormat, type Logger } from '../util/log.ts';
import { heartbeatIntervalFor, WORKER_DEFAULTS, type WorkerConfig } from '../worker/config.ts';
import { defaultDlqTopic } from '../kafka/dlq.ts';
import { defaultClientId, StreamWorker, type WorkerSummary } from '../worker/worker.ts';
import { OUTPUT_FORMATS, renderRows, type OutputFormat, type Row } from './format.ts';
import { accountingConfig } from './accounting-flags.ts';
import { UsageError, type Io } from './io.ts';
import { checkClickHouseUrl, clusterName, retentionDays } from './sink-flags.ts';
import { parseArgsUsageError } from './suggest.ts';

const D = WORKER_DEFAULTS;

const CONSUME_USAGE = `Usage: toolcanon consume --brokers HOST:PORT[,HOST:PORT…] --topic TOPIC [options]

Consumes toolcanon events from a Kafka topic in a consumer group and writes them to ClickHouse
(validate -> project -> account, as replay does). Offsets are committed only after ClickHouse
has acknowledged everything before them. Stops cleanly on SIGTERM/SIGINT.

Options:
  --brokers LIST                   Bootstrap brokers (or $TOOLCANON_KAFKA_BROKERS); SASL and TLS from
                                   $TOOLCANON_KAFKA_SASL_* and $TOOLCANON_KAFKA_SSL* (see README), never here
  --topic TOPIC                    Topic to consume
  --group GROUP                    Consumer group (default ${D.groupId})
  --dlq-topic TOPIC                Dead-letter topic (default <topic>.dlq)
  --db DIR                         Embedded ClickHouse data directory (default .toolcanon/db, or $TOOLCANON_DB)
  --retention-days N               Keep N days of event time in every table (0 removes it)
  --clickhouse URL                 A ClickHouse server instead (or $TOOLCANON_CLICKHOUSE_URL)
  --cluster NAME                   The server's cluster: replicated tables, a Distributed table each
                                   (or $TOOLCANON_CLICKHOUSE_CLUSTER; see docs/scaling-out.md)
  --batch-max-rows N               Flush after N buffered events (default ${D.batchMaxRows})
  --batch-max-bytes N              Flush after N bytes of buffered record values (default ${D.batchMaxBytes})
  --batch-max-wait-ms N            Flush when the oldest buffered event is N ms old (default ${D.batchMaxWaitMs})
  --max-event-bytes N              Larger events are dead-lettered as oversized (default ${DEFAULT_LIMITS.maxEventBytes})
  --max-depth N                    Deeper JSON is dead-lettered as too_deep (default ${DEFAULT_LIMITS.maxDepth})
  --threshold-pct N                Context threshold for breaches, percent (default 85)
  --headroom-tokens N              Headroom: moves the trigger earlier by N tokens (default 0)
  --models FILE                    JSON { "model": contextWindowTokens } laid over the shipped table
  --retry-initial-ms N             First backoff while ClickHouse fails (default ${D.retry.initialMs})
  --retry-max-ms N                 Backoff ceiling (default ${D.retry.maxMs})
  --shutdown-timeout-ms N          Longest a SIGTERM/SIGINT shutdown may take (default ${D.shutdownTimeoutMs})
  --progress-interval-ms N         Progress line interval on stderr, 0 = none (default ${D.progressIntervalMs})
  --start-from earliest|latest     Where a new group starts (default earliest)
  --session-timeout-ms N           Group session timeout (default ${D.sessionTimeoutMs})
  --fetch-max-bytes N              Bytes per fetch, all partitions (default ${D.fetchMaxBytes})
  --fetch-max-bytes-per-partition N  Bytes per partition and fetch (default ${D.fetchMaxBytesPerPartition})
  --fetch-max-wait-ms N            Longest the broker holds an empty fetch (default ${D.fetchMaxWaitMs})
  --client-id ID                   Kafka client id (default toolcanon-<host>-<pid>)
  --no-redact                      Store secrets verbatim (default: redacted in rows, dead letters and the
                                   DLQ topic; or TOOLCANON_REDACT=0)
  --format table|json|csv          Format of the summary printed at exit (default table)
  --log-level error|warn|info|debug  Quietest log level on stderr (default info, or $TOOLCANON_LOG_LEVEL):
                                   error = data was or may be lost, warn = degraded, info = progress
  --log-format text|json           Log lines as text or one JSON object each (or $TOOLCANON_LOG_FORMAT)
  -h, --help                       Show this help
`;

const PRODUCE_USAGE = `Usage: toolcanon produce <paths…|-> --brokers HOST:PORT[,…] --topic TOPIC [options]

Publishes JSONL events (files, directories of *.jsonl, or - for stdin), one record per non-blank
line, keyed by session_id. Values are the lines' bytes as they are, broken lines included. A line
larger than the topic's max.message.bytes goes to the dead-letter topic as oversized (with its
file:line; its bytes cut to what that topic takes, if they must be), and the run still exits 0.

Options:
  --brokers LIST                   Bootstrap brokers (or $TOOLCANON_KAFKA_BROKERS); SASL and TLS from
                                   $TOOLCANON_KAFKA_SASL_* and $TOOLCANON_KAFKA_SSL* (see README), never here
  --topic TOPIC                    Topic to publish to
  --dlq-topic TOPIC                Dead-letter topic for lines the topic cannot take (default <topic>.dlq)
  --partitions N                   Partitions when the topic has to be created (default 6)
  --topic-max-message-bytes N      max.message.bytes when the topic has to be created (default: broker's)
  --no-redact                      Send oversized lines to the DLQ topic with their secrets (default:
                                   redacted, as every dead letter; the topic gets lines as they are)
  --format table|json|csv          Summary format (default table)
  --log-level error|warn|info|debug  Quietest log level on stderr (default info, or $TOOLCANON_LOG_LEVEL):
                                   error = data was or may be lost, warn = degraded, info = progress
  --log-format text|json           Log lines as text or one JSON object each (or $TOOLCANON_LOG_FORMAT)
  -h, --help                       Show this help

Example:
  toolcanon produce fixtures --brokers 127.0.0.1:19092 --topic tool-events
`;

const CONSUME_OPTIONS = {
  brokers: { type: 'string' },
  'retention-days': { type: 'string' },
  topic: { type: 'string' },
  group: { type: 'string' },
  'dlq-topic': { type: 'string' },
  db: { type: 'string' },
  clickhouse: { type: 'string' },
  cluster: { type: 'string' },
  'batch-max-rows': { type: 'string' },
  'batch-max-bytes': { type: 'string' },
  'batch-max-wait-ms': { type: 'string' },
  'max-event-bytes': { type: 'string' },
  'max-depth': { type: 'string' },
  'threshold-pct': { type: 'string' },
  'headroom-tokens': { type: 'string' },
  models: { type: 'string' },
  'retry-initial-ms': { type: 'string' },
  'retry-max-ms': { type: 'string' },
  'shutdown-timeout-ms': { type: 'string' },
  'progress-interval-ms': { type: 'string' },
  'start-from': { type: 'string' },
  'session-timeout-ms': { type: 'string' },
  'fetch-max-bytes': { type: 'string' },
  'fetch-max-bytes-per-partition': { type: 'string' },
  'fetch-max-wait-ms': { type: 'string' },
  'client-id': { type: 'string' },
  'no-redact': { type: 'boolean', default: false },
  format: { type: 'string', default: 'table' },
  'log-level': { type: 'string' },
  'log-format': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

const PRODUCE_OPTIONS = {
  brokers: { type: 'string' },
  topic: { type: 'string' },
  'dlq-topic': { type: 'string' },
  partitions: { type: 'string' },
  'topic-max-message-bytes': { type: 'string' },
  'no-redact': { type: 'boolean', default: false },
  format: { type: 'string', default: 'table' },
  'log-level': { type: 'string' },
  'log-format': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

function parse<O extends ParseArgsConfig['options']>(args: readonly string[], options: O, command: string) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw parseArgsUsageError(error, options ?? {}, command);
  }
}

/** The logger of a long-running command: --log-level / --log-format, else the environment, else info / text. */
export function loggerFrom(level: string | undefined, logFormat: string | undefined, io: Io, env: NodeJS.ProcessEnv = process.env): Logger {
  const rawLevel = level ?? env['TOOLCANON_LOG_LEVEL'];
  const parsed = rawLevel === undefined || rawLevel === '' ? 'info' : parseLogLevel(rawLevel);
  const from = level === undefined ? '$TOOLCANON_LOG_LEVEL' : '--log-level';
  if (parsed === undefined) throw new UsageError(`${from} must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(rawLevel)}`);
  const rawFormat = logFormat ?? env['TOOLCANON_LOG_FORMAT'] ?? 'text';
  if (!(LOG_FORMATS as readonly string[]).includes(rawFormat)) {
    throw new UsageError(`${logFormat === undefined ? '$TOOLCANON_LOG_FORMAT' : '--log-format'} must be one of ${LOG_FORMATS.join(', ')}, got ${JSON.stringify(rawFormat)}`);
  }
  return createLogger({ write: (line) => io.err(line), level: parsed, format: rawFormat as LogFormat });
}

function integer(name: string, value: string | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!/^[0-9]+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${name} must be an integer of at least ${min}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

function format(value: string): OutputFormat {
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}, got ${JSON.stringify(value)}`);
}

export function brokersFrom(value: string | undefined, command: string): string[] {
  const from = value !== undefined ? '--brokers' : '$TOOLCANON_KAFKA_BROKERS';
  if (brokerListHasCredentials(value ?? process.env['TOOLCANON_KAFKA_BROKERS'] ?? '')) {
    // Not repeated: it holds a user and password, and argv is visible to every user of the machine.
    throw new UsageError(
      `${from} must be host:port[,host:port…] without a user or password: set $TOOLCANON_KAFKA_SASL_MECHANISM, $TOOLCANON_KAFKA_SASL_USERNAME and $TOOLCANON_KAFKA_SASL_PASSWORD (or $TOOLCANON_KAFKA_SASL_PASSWORD_FILE) instead`,
    );
  }
  const list = (value ?? process.env['TOOLCANON_KAFKA_BROKERS'] ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  if (list.length === 0) throw new UsageError(`${command} needs --brokers host:port (or $TOOLCANON_KAFKA_BROKERS)`);
  for (const b of list) if (!/^[^\s:]+:[0-9]+$/.test(b)) throw new UsageError(`--brokers: ${JSON.stringify(b)} is not host:port`);
  return list;
}

export function topicFrom(value: string | undefined, command: string, flag = 'topic'): string {
  if (value === undefined || value === '') throw new UsageError(`${command} needs --${flag} TOPIC`);
  if (!/^[a-zA-Z0-9._-]{1,249}$/.test(value)) throw new UsageError(`--${flag}: ${JSON.stringify(value)} is not a valid Kafka topic name`);
  return value;
}

/** Parses `consume` flags into a worker configuration (exported for tests). */
export function parseConsumeArgs(args: readonly string[]): {
  config: WorkerConfig;
  db: string | undefined;
  clickhouse: string | undefined;
  cluster?: string | undefined;
  retentionDays?: number | undefined;
  format: OutputFormat;
  log?: { level: string | undefined; format: string | undefined };
  help: boolean;
} {
  const { values, positionals } = parse(args, CONSUME_OPTIONS, 'consume');
  if (values.help) return { config: undefined as unknown as WorkerConfig, db: undefined, clickhouse: undefined, format: 'table', help: true };
  if (positionals.length) throw new UsageError(`consume takes no positional arguments, got ${JSON.stringify(positionals[0])}`);
  const topic = topicFrom(values.topic, 'consume');
  if (values.clickhouse !== undefined) checkClickHouseUrl(values.clickhouse, '--clickhouse');
  const cluster = clusterName(values.cluster, values.clickhouse);
  const security = kafkaSecurityFromEnv();
  const startFrom = values['start-from'] ?? 'earliest';
  if (startFrom !== 'earliest' && startFrom !== 'latest') throw new UsageError(`--start-from must be earliest or latest, got ${JSON.stringify(startFrom)}`);
  const sessionTimeoutMs = integer('session-timeout-ms', values['session-timeout-ms'], D.sessionTimeoutMs, 1000);
  const retryInitialMs = integer('retry-initial-ms', values['retry-initial-ms'], D.retry.initialMs);
  const retryMaxMs = integer('retry-max-ms', values['retry-max-ms'], Math.max(D.retry.maxMs, retryInitialMs));
  if (retryMaxMs < retryInitialMs) throw new UsageError('--retry-max-ms must be at least --retry-initial-ms');
  const config: WorkerConfig = {
    brokers: brokersFrom(values.brokers, 'consume'),
    topic,
    groupId: values.group ?? D.groupId,
    clientId: values['client-id'] ?? defaultClientId(),
    dlqTopic: values['dlq-topic'] === undefined ? defaultDlqTopic(topic) : topicFrom(values['dlq-topic'], 'consume', 'dlq-topic'),
    batchMaxRows: integer('batch-max-rows', values['batch-max-rows'], D.batchMaxRows),
    batchMaxBytes: integer('batch-max-bytes', values['batch-max-bytes'], D.batchMaxBytes),
    batchMaxWaitMs: integer('batch-max-wait-ms', values['batch-max-wait-ms'], D.batchMaxWaitMs),
    limits: {
      maxEventBytes: integer('max-event-bytes', values['max-event-bytes'], DEFAULT_LIMITS.maxEventBytes),
      maxDepth: integer('max-depth', values['max-depth'], DEFAULT_LIMITS.maxDepth),
      redact: !values['no-redact'] && redactionFromEnv(),
    },
    accounting: accountingConfig(values),
    retry: { initialMs: retryInitialMs, maxMs: retryMaxMs },
    shutdownTimeoutMs: integer('shutdown-timeout-ms', values['shutdown-timeout-ms'], D.shutdownTimeoutMs),
    progressIntervalMs: integer('progress-interval-ms', values['progress-interval-ms'], D.progressIntervalMs, 0),
    fromBeginning: startFrom === 'earliest',
    sessionTimeoutMs,
    heartbeatIntervalMs: heartbeatIntervalFor(sessionTimeoutMs),
    rebalanceTimeoutMs: Math.max(D.rebalanceTimeoutMs, sessionTimeoutMs),
    fetchMaxWaitMs: integer('fetch-max-wait-ms', values['fetch-max-wait-ms'], D.fetchMaxWaitMs),
    fetchMaxBytes: integer('fetch-max-bytes', values['fetch-max-bytes'], D.fetchMaxBytes),
    fetchMaxBytesPerPartition: integer('fetch-max-bytes-per-partition', values['fetch-max-bytes-per-partition'], D.fetchMaxBytesPerPartition),
    ...(security.sasl || security.ssl ? { security } : {}),
  };
  return {
    config,
    db: values.db,
    clickhouse: values.clickhouse,
    cluster,
    retentionDays: retentionDays(values['retention-days']),
    format: format(values.format),
    log: { level: values['log-level'], format: values['log-format'] },
    help: false,
  };
}

function summaryRows(s: WorkerSummary): Row[] {
  const c = s.counts;
  return [
    { metric: 'events_consumed', value: s.stats.eventsConsumed },
    ...storedRows(c),
    { metric: 'dlq_published', value: s.stats.dlqPublished },
    { metric: 'events_committed', value: s.stats.eventsCommitted },
    { metric: 'flushes', value: s.stats.flushes },
    { metric: 'failed_flushes', value: s.stats.flushFailures },
    { metric: 'commits', value: s.stats.commits },
    { metric: 'rebalances', value: s.stats.rebalances },
    { metric: 'buffered_events_dropped', value: s.stats.bufferedEventsDropped },
    { metric: 'bytes_consumed', value: s.stats.bytesConsumed },
    ...rateRows(s.stats.eventsConsumed, s.elapsedMs),
    { metric: 'peak_rss_bytes', value: s.peakRssBytes },
    { metric: 'clean_exit', value: s.clean },
  ];
}

/** Opens the sink, retrying with backoff while ClickHouse is unavailable (until a signal). */
async function openSinkPatiently(target: SinkTarget, log: Logger, signal: AbortSignal): Promise<ClickHouseSink | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      const sink = await ClickHouseSink.open(target);
      // The database the worker writes, named once (the server's URL without credentials).
      log.info(`database: ${sink.description}`);
      return sink;
    } catch (error) {
      if (signal.aborted) return undefined;
      // What needs a fix first (a data directory that is a file, read-only or in use; a server
      // refusing the credentials; a setting) is reported once: waiting would not change it.
      if ((error instanceof SinkError && !error.transient) || error instanceof ConfigError) throw error;
      const delayMs = backoffDelayMs({ initialMs: WORKER_DEFAULTS.retry.initialMs, maxMs: WORKER_DEFAULTS.retry.maxMs }, attempt);
      log.warn(`ClickHouse is not available (attempt ${attempt}): ${(error as Error).message}; retrying in ${delayMs} ms.`);
      await sleep(delayMs, signal);
      if (signal.aborted) return undefined;
    }
  }
}

export async function runConsumeCommand(args: readonly string[], io: Io): Promise<number> {
  const parsed = parseConsumeArgs(args);
  if (parsed.help) {
    io.out(CONSUME_USAGE);
    return 0;
  }
  const log = loggerFrom(parsed.log?.level, parsed.log?.format, io);
  const stopSignal = new AbortController();
  let worker: StreamWorker | undefined;
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      log.warn(`Received ${signal} again: exiting now without a final flush (nothing uncommitted is lost; it is consumed again).`);
      process.exit(1);
    }
    stopSignal.abort();
    void worker?.stop(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    const sink = await openSinkPatiently({ db: parsed.db, clickhouseUrl: parsed.clickhouse, retentionDays: parsed.retentionDays, cluster: parsed.cluster }, log, stopSignal.signal);
    if (sink === undefined) return 0; // stopped before anything was consumed
    try {
      worker = new StreamWorker({ config: parsed.config, sink, log });
      if (stopSignal.signal.aborted) void worker.stop('signal');
      // A stop may come while the start still waits for Kafka (a broker slow to answer, a long
      // group join): the worker finishes then, without waiting for the start. A start that
      // fails because the stop closed its connections is not an error: the stop reports how the
      // worker ended.
      const started = worker.start().catch((error: unknown) => {
        if (!stopSignal.signal.aborted) throw error;
      });
      await Promise.race([started, worker.finished]);
      const summary = await worker.finished;
      io.out(renderRows(summaryRows(summary), parsed.format));
      if (summary.fatal) io.err(`toolcanon: the worker stopped: ${summary.fatal.message}`);
      return summary.clean ? 0 : 1;
    } catch (error) {
      if (worker !== undefined) await worker.stop('error');
      throw error;
    } finally {
      await sink.close();
    }
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

export async function runProduceCommand(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, PRODUCE_OPTIONS, 'produce');
  if (values.help) {
    io.out(PRODUCE_USAGE);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('produce needs at least one path (a file, a directory, or - for stdin)');
  const brokers = brokersFrom(values.brokers, 'produce');
  const topic = topicFrom(values.topic, 'produce');
  const dlqTopic = values['dlq-topic'] === undefined ? defaultDlqTopic(topic) : topicFrom(values['dlq-topic'], 'produce', 'dlq-topic');
  if (dlqTopic === topic) throw new UsageError(`--dlq-topic must differ from --topic (both are ${JSON.stringify(topic)})`);
  const partitions = integer('partitions', values.partitions, 6);
  const topicMaxMessageBytes = values['topic-max-message-bytes'] === undefined ? undefined : integer('topic-max-message-bytes', values['topic-max-message-bytes'], 0);
  const outputFormat = format(values.format);
  const log = loggerFrom(values['log-level'], values['log-format'], io);

  const security = kafkaSecurityFromEnv();
  const client = createKafkaClient({ brokers, clientId: `toolcanon-produce-${process.pid}`, log, security });
  let admin: KafkaAdmin | undefined;
  let producer: StreamProducer | undefined;
  try {
    admin = await client.admin();
    const created = await admin.ensureTopic(topic, {
      partitions,
      configs: topicMaxMessageBytes === undefined ? {} : { 'max.message.bytes': String(topicMaxMessageBytes) },
    });
    if (created) log.info(`Created topic ${topic} (${partitions} partition(s)).`);
    // The topic's own limit (its override or the broker default it inherits), so that a line it
    // cannot take goes to the dead-letter topic instead of failing the run.
    const maxMessageBytes = await admin.maxMessageBytes(topic);
    producer = await client.producer();
    const started = performance.now();
    const result = await publishPaths(producer, positionals, {
      topic,
      dlqTopic,
      admin,
      redact: !values['no-redact'] && redactionFromEnv(),
      ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
      log: (line) => log.info(line),
      onDeadLetter: (d) =>
        log.warn(
          `${d.source}: ${d.detail}; sent to the DLQ topic ${d.dlqTopic} as oversized` +
            (d.keptBytes < d.bytes ? ` with its first ${d.keptBytes} bytes (${d.dlqTopic} takes no more; header toolcanon.value_original_bytes ${d.bytes}; the whole line stays in the file)` : ''),
        ),
    });
    const elapsedMs = performance.now() - started;
    const dead = result.deadLettered.length;
    io.out(
      renderRows(
        [
          { metric: 'records_read', value: result.recordsRead },
          { metric: 'records_published', value: result.published },
          { metric: 'bytes_published', value: result.bytesPublished },
          { metric: 'unkeyed_records', value: result.unkeyed },
          { metric: 'dead_lettered_oversized', value: dead },
          { metric: 'blank_lines_skipped', value: result.blankLines },
          { metric: 'elapsed_ms', value: Math.round(elapsedMs) },
          { metric: 'records_per_s', value: elapsedMs > 0 ? Math.round((result.published * 1000) / elapsedMs) : 0 },
        ],
        outputFormat,
      ),
    );
    const records = (n: number): string => `${n} record${n === 1 ? '' : 's'}`;
    log.info(`${records(result.published)} produced to ${topic}` + (dead > 0 ? `, ${dead} sent to the DLQ topic ${result.dlqTopic} as oversized.` : '.'));
    // Every line read is on the topic or in the dead-letter topic; anything else is a loss.
    if (result.published + dead !== result.recordsRead) {
      io.err(`toolcanon: ${result.recordsRead - result.published - dead} of ${records(result.recordsRead)} read were neither produced nor dead-lettered.`);
      return 1;
    }
    return 0;
  } finally {
    await producer?.disconnect().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
  }
}
