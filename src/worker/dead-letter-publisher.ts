// Poison records on their way to the dead-letter topic. At intake the worker keeps each record
// the batch writer dead-lettered, with its position (topic, partition, offset) and its original
// key and bytes; once ClickHouse acknowledged the batch's dead-letter rows, each row is matched to
// its record by the source the worker gave it (the same text, looked up, never parsed back into a
// position) and becomes a dead-letter topic record; publishing them (acks from all in-sync
// replicas) comes before the commit of their offsets.
import { isMessageTooLargeError, type OutgoingRecord, type StreamProducer } from '../kafka/client.ts';
import type { DeadLetterRow } from '../model/records.ts';
import { redactBytes } from '../redact/redact.ts';
import { DLQ_HEADERS, toDlqRecord } from '../kafka/dlq.ts';
import type { WorkerTelemetry } from './telemetry.ts';
import { asLogger, type LogTarget } from '../util/log.ts';

/** A consumed record the batch writer dead-lettered: where it was and its bytes as received. */
export interface PoisonRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

/**
 * One generation's poison records: those of the open batch, those of the sealed batch (being
 * written), and those acknowledged by ClickHouse that wait for the dead-letter topic.
 */
export class DeadLetterQueue {
  /** Poison records of the open batch, by the source their dead-letter row carries. */
  private open = new Map<string, PoisonRecord>();
  private sealedRecords: Map<string, PoisonRecord> | undefined;
  /** Dead-letter rows ClickHouse acknowledged during the current flush, by source. */
  private readonly acknowledged = new Map<string, DeadLetterRow>();
  /** Records for the dead-letter topic, acknowledged by ClickHouse and not yet by the topic. */
  private pendingRecords: OutgoingRecord[] = [];

  /**
   * The batch writer's hook (BatchWriterHooks.onDeadLettersWritten): every dead-letter row
   * ClickHouse acknowledged. A retried flush reports the same rows again; the map absorbs them.
   */
  readonly onDeadLettersWritten = (rows: readonly DeadLetterRow[]): void => {
    for (const row of rows) this.acknowledged.set(row.source, row);
  };

  /**
   * Keeps a poison record of the open batch. `source` is the text the worker gave the batch
   * writer for it (recordSource(topic, partition, offset)); the bytes are copied, because a
   * record's buffer pins the whole fetch it came in.
   */
  keep(source: string, record: PoisonRecord): void {
    this.open.set(source, { ...record, key: copyOf(record.key), value: copyOf(record.value) });
  }

  /** The open batch's poison records go with the batch being sealed (no-op when one is sealed). */
  seal(): void {
    if (this.sealedRecords !== undefined) return;
    this.sealedRecords = this.open;
    this.open = new Map();
  }

  /**
   * The sealed batch is acknowledged: each acknowledged dead-letter row of it becomes a record for
   * the dead-letter topic (the value as received, but for the secrets its stored row had
   * redacted). Returns the rows matched, in acknowledgement order.
   */
  acknowledgeSealed(): DeadLetterRow[] {
    const sealed = this.sealedRecords ?? new Map<string, PoisonRecord>();
    const matched: DeadLetterRow[] = [];
    for (const [source, dead] of this.acknowledged) {
      const original = sealed.get(source);
      if (original === undefined) continue;
      const value = dead.redactions > 0 && original.value !== null ? redactBytes(original.value).bytes : original.value;
      this.pendingRecords.push(toDlqRecord({ key: original.key, value }, dead, { topic: original.topic, partition: original.partition, offset: original.offset }));
      matched.push(dead);
    }
    this.acknowledged.clear();
    this.sealedRecords = undefined;
    return matched;
  }

  /** Records waiting for the dead-letter topic. */
  get pending(): readonly OutgoingRecord[] {
    return this.pendingRecords;
  }

  /** The dead-letter topic acknowledged `n` of the pending records (the first n). */
  published(n: number): void {
    this.pendingRecords = this.pendingRecords.slice(n);
  }
}

export interface DeadLetterPublisherOptions {
  readonly dlqTopic: string;
  /** Where its warning goes (a record that went without its value: the value is kept in dead_letters.raw). */
  readonly log: LogTarget;
  readonly telemetry: Pick<WorkerTelemetry, 'inSpan' | 'dlqPublished'>;
}

/** Publishes dead-letter records to the dead-letter topic. */
export class DeadLetterPublisher {
  /** Records the dead-letter topic acknowledged. */
  publishedRecords = 0;

  constructor(private readonly options: DeadLetterPublisherOptions) {}

  /**
   * Publishes the queue's pending records and marks them published once the topic acknowledged
   * them all. `around` wraps the main send (the worker heartbeats during it). A record the topic
   * cannot hold goes without its value and with `toolcanon.value_omitted_bytes` (its bytes are in
   * dead_letters.raw); everything else goes as it is. Throws when the topic fails otherwise; the
   * records stay pending for the next attempt.
   */
  async publish(producer: StreamProducer, queue: DeadLetterQueue, around: <T>(work: Promise<T>) => Promise<T> = (w) => w): Promise<number> {
    const records = queue.pending;
    const { dlqTopic, telemetry } = this.options;
    const log = asLogger(this.options.log);
    await telemetry.inSpan('toolcanon.worker.dlq_publish', { 'toolcanon.dlq.records': records.length }, async () => {
      try {
        await around(producer.send(dlqTopic, records));
      } catch (error) {
        if (!isMessageTooLargeError(error)) throw error;
        // One at a time, so only a record the dead-letter topic cannot hold loses its value there.
        for (const record of records) {
          try {
            await producer.send(dlqTopic, [record]);
          } catch (e) {
            if (!isMessageTooLargeError(e)) throw e;
            const size = Buffer.byteLength(record.value ?? '');
            const h = record.headers;
            log.warn(`Dead-letter record of ${String(h?.[DLQ_HEADERS.originTopic])}/${String(h?.[DLQ_HEADERS.originPartition])}/${String(h?.[DLQ_HEADERS.originOffset])} is too large for ${dlqTopic} (${size} bytes); publishing it without its value.`);
            await producer.send(dlqTopic, [withoutValue(record, size)]);
          }
        }
      }
    });
    this.publishedRecords += records.length;
    telemetry.dlqPublished(records.length);
    queue.published(records.length);
    return records.length;
  }
}

/** A dead-letter record without its value, saying how many bytes the value had. */
export function withoutValue(record: OutgoingRecord, size: number): OutgoingRecord {
  return { key: record.key, value: null, headers: { ...record.headers, [DLQ_HEADERS.valueOmittedBytes]: String(size) } };
}

function copyOf(bytes: Buffer | null): Buffer | null {
  return bytes === null ? null : Buffer.from(bytes);
}
