// The worker's OpenTelemetry instruments, through @opentelemetry/api only: without an SDK
// registered by the user they are no-ops that cost a function call (docs/worker.md shows how
// to register one).
import { metrics, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';

const SCOPE = 'toolcanon.worker';
const VERSION = '0.1.0';

/** Values the observable gauges read when a metric reader collects. */
export interface GaugeSource {
  /** Lag (high watermark minus committed offset) per assigned partition. */
  lagByPartition(): ReadonlyMap<number, bigint>;
  bufferedEvents(): number;
  isPaused(): boolean;
}

export interface WorkerTelemetry {
  readonly eventsConsumed: (n: number, bytes: number) => void;
  readonly rowsWritten: (rows: number, deadLetters: number, durationMs: number) => void;
  readonly deadLettered: (reason: string) => void;
  readonly flushFailed: (error: unknown) => void;
  readonly dlqPublished: (n: number) => void;
  readonly committed: (n: number) => void;
  readonly rebalanced: (droppedEvents: number) => void;
  /** Runs `fn` inside a span; marks the span failed when it throws. */
  readonly inSpan: <T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>) => Promise<T>;
}

export function createWorkerTelemetry(topic: string, groupId: string, gauges: GaugeSource): WorkerTelemetry {
  const meter = metrics.getMeter(SCOPE, VERSION);
  const tracer = trace.getTracer(SCOPE, VERSION);
  const base: Attributes = { 'messaging.system': 'kafka', 'messaging.destination.name': topic, 'messaging.consumer.group.name': groupId };

  const consumed = meter.createCounter('toolcanon.worker.events_consumed_total', { description: 'Kafka records taken into a batch', unit: '{event}' });
  const consumedBytes = meter.createCounter('toolcanon.worker.bytes_consumed_total', { description: 'Bytes of record values taken into a batch', unit: 'By' });
  const written = meter.createCounter('toolcanon.worker.rows_written_total', { description: 'Rows acknowledged by ClickHouse (re-deliveries included)', unit: '{row}' });
  const dead = meter.createCounter('toolcanon.worker.dead_letters_total', { description: 'Events written as dead letters, by reason', unit: '{event}' });
  const flushes = meter.createCounter('toolcanon.worker.flushes_total', { description: 'Batch flushes to ClickHouse, by outcome', unit: '{flush}' });
  const flushDuration = meter.createHistogram('toolcanon.worker.flush_duration_ms', { description: 'Time for ClickHouse to acknowledge a batch', unit: 'ms' });
  const dlq = meter.createCounter('toolcanon.worker.dlq_published_total', { description: 'Records published to the dead-letter topic', unit: '{record}' });
  const commits = meter.createCounter('toolcanon.worker.commits_total', { description: 'Offset commits after an acknowledged batch', unit: '{commit}' });
  const rebalances = meter.createCounter('toolcanon.worker.rebalances_total', { description: 'Group joins (the first one included)', unit: '{rebalance}' });
  const dropped = meter.createCounter('toolcanon.worker.buffered_events_dropped_total', { description: 'Uncommitted buffered events dropped at a rebalance (redelivered from the last commit)', unit: '{event}' });

  const lag = meter.createObservableGauge('toolcanon.worker.partition_lag', { description: 'High watermark minus committed offset', unit: '{record}' });
  lag.addCallback((result) => {
    for (const [partition, value] of gauges.lagByPartition()) result.observe(Number(value), { ...base, 'messaging.destination.partition.id': String(partition) });
  });
  const buffered = meter.createObservableGauge('toolcanon.worker.buffered_events', { description: 'Events decoded and waiting for the next flush', unit: '{event}' });
  buffered.addCallback((result) => result.observe(gauges.bufferedEvents(), base));
  const paused = meter.createObservableGauge('toolcanon.worker.paused', { description: '1 while fetching is paused because ClickHouse is failing', unit: '1' });
  paused.addCallback((result) => result.observe(gauges.isPaused() ? 1 : 0, base));

  return {
    eventsConsumed: (n, bytes) => {
      consumed.add(n, base);
      consumedBytes.add(bytes, base);
    },
    rowsWritten: (rows, deadLetters, durationMs) => {
      written.add(rows + deadLetters, base);
      flushes.add(1, { ...base, outcome: 'ok' });
      flushDuration.record(durationMs, base);
    },
    deadLettered: (reason) => dead.add(1, { ...base, reason }),
    flushFailed: () => flushes.add(1, { ...base, outcome: 'error' }),
    dlqPublished: (n) => dlq.add(n, base),
    committed: (n) => commits.add(n, base),
    rebalanced: (n) => {
      rebalances.add(1, base);
      if (n > 0) dropped.add(n, base);
    },
    inSpan: (name, attributes, fn) =>
      tracer.startActiveSpan(name, { attributes: { ...base, ...attributes } }, async (span) => {
        try {
          return await fn(span);
        } catch (error) {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          span.end();
        }
      }),
  };
}
