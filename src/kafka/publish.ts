// Publishes JSONL events to a topic, one record per non-blank line, keyed by the event's
// session_id so that one session stays on one partition (and in order). The record value is the
// line's bytes exactly as in the file: a broken line is published as it is, for the worker to
// dead-letter.
//
// A line the topic cannot take (its record would exceed the topic's max.message.bytes) is not
// lost: it goes to the dead-letter topic as an `oversized` dead letter in the worker's format
// (src/kafka/dlq.ts), with its `file:line`, keyed as it would have been, its bytes as the value,
// cut to what the dead-letter topic takes when even that is too small (a header says so).
import { deadLetter, trimLine } from '../decode/event.ts';
import type { DeadLetterReason } from '../model/records.ts';
import { redactBytes } from '../redact/redact.ts';
import { listInputFiles, openInput, readLines, type InputFile } from '../source/file.ts';
import { defaultDlqTopic, DLQ_HEADERS, toUnpublishedDlqRecord } from './dlq.ts';
import { isMessageTooLargeError, KAFKA_DEFAULT_MAX_MESSAGE_BYTES, type KafkaAdmin, type OutgoingRecord, type StreamProducer } from './client.ts';

export interface PublishOptions {
  readonly topic: string;
  /** Where lines the topic cannot take go (default `<topic>.dlq`). */
  readonly dlqTopic?: string;
  /**
   * Creates the dead-letter topic when it is missing, as the worker does (the topic's partition
   * count and max.message.bytes), and reads its limit; used only once a line is dead-lettered.
   * Without it the topic is left to the broker's auto-creation and assumed to take what the
   * topic takes.
   */
  readonly admin?: Pick<KafkaAdmin, 'ensureTopic' | 'partitionCount' | 'maxMessageBytes'>;
  /** Records per send request. */
  readonly maxBatchRecords?: number;
  /**
   * Bytes of values per send request. It never exceeds the topic's limit: Kafka applies
   * max.message.bytes to a whole record batch, and kafkajs sends one batch per partition
   * without splitting it, so one send must fit even when all its records share a partition.
   */
  readonly batchMaxBytes?: number;
  /**
   * The topic's max.message.bytes, as its configuration says (undefined: unknown, Kafka's
   * default is assumed). Lines whose record would not fit go to the dead-letter topic.
   */
  readonly maxMessageBytes?: number;
  /**
   * Redact secrets in what goes to the dead-letter topic (default true), as every dead letter
   * is. The topic itself gets the lines as they are: the worker that reads it redacts.
   */
  readonly redact?: boolean;
  readonly onProgress?: (published: number, bytes: number) => void;
  /** Told of each line sent to the dead-letter topic, once it is there. */
  readonly onDeadLetter?: (dead: ProducedDeadLetter) => void;
  /** Notes on stderr (a dead-letter topic created, a limit learnt from the broker). */
  readonly log?: (line: string) => void;
}

export interface ProducedDeadLetter {
  /** `path:line` of the line. */
  readonly source: string;
  /** The line's size. */
  readonly bytes: number;
  /** Bytes of the line in the dead-letter record's value (all of them unless the topic is too small). */
  readonly keptBytes: number;
  readonly dlqTopic: string;
  readonly detail: string;
  /** `oversized`, or the reason of a record queued with addDeadLetter (`import_malformed`). */
  readonly reason: DeadLetterReason;
}

export interface PublishResult {
  /** Non-blank lines read: each is published or dead-lettered. */
  recordsRead: number;
  published: number;
  bytesPublished: number;
  /** Records sent without a key: the line had no string session_id (not JSON, say). */
  unkeyed: number;
  blankLines: number;
  readonly dlqTopic: string;
  /** Lines too large for the topic, sent to the dead-letter topic as `oversized` (and other dead letters queued). */
  readonly deadLettered: ProducedDeadLetter[];
}

/**
 * Room kept in a record batch for the batch header (61 bytes) and a record's framing (varint
 * lengths, deltas, attributes, header framing). Measured on Kafka 3.9: a record with a 36-byte
 * key and no headers fits when its value is max.message.bytes - 108; with the ~360 bytes of
 * dead-letter headers, max.message.bytes - 471. Key and header bytes are counted on top.
 */
const RECORD_OVERHEAD_BYTES = 1024;
/** Upper bound of one record's framing inside a batch (varint lengths, deltas, attributes). */
const RECORD_FRAMING_BYTES = 32;
const utf8 = new TextDecoder('utf-8');

/** The session_id of an envelope line, or null when there is none to read. */
export function sessionKeyOf(line: Uint8Array): string | null {
  try {
    const event = JSON.parse(utf8.decode(line)) as unknown;
    if (typeof event === 'object' && event !== null && !Array.isArray(event)) {
      const id = (event as Record<string, unknown>)['session_id'];
      if (typeof id === 'string' && id !== '') return id;
    }
  } catch {
    // Not JSON: published unkeyed, for the worker to dead-letter.
  }
  return null;
}

/** Bytes of a record besides its value: key, header names and values. */
function extraBytes(record: OutgoingRecord): number {
  let n = record.key === null ? 0 : Buffer.byteLength(record.key);
  for (const [name, value] of Object.entries(record.headers ?? {})) n += Buffer.byteLength(name) + Buffer.byteLength(value);
  return n;
}

/** The largest cut at or below `n` that does not split a UTF-8 sequence (for text lines). */
function utf8Cut(bytes: Buffer, n: number): number {
  let cut = Math.max(0, Math.min(n, bytes.byteLength));
  for (let back = 0; back < 3 && cut > 0 && cut < bytes.byteLength && ((bytes[cut] as number) & 0xc0) === 0x80; back++) cut--;
  return cut;
}

interface Pending {
  readonly record: OutgoingRecord;
  readonly raw: Buffer;
  readonly key: string | null;
  readonly source: string;
  /** The line's size. */
  readonly bytes: number;
  /** Its share of a send request: value, key and framing. */
  readonly recordBytes: number;
}

export async function publishPaths(producer: StreamProducer, paths: readonly string[], options: PublishOptions): Promise<PublishResult> {
  return publishFiles(producer, listInputFiles(paths), options);
}

export async function publishFiles(producer: StreamProducer, files: readonly InputFile[], options: PublishOptions): Promise<PublishResult> {
  const publisher = new RecordPublisher(producer, options);
  for (const file of files) {
    for await (const line of readLines(openInput(file), file.path, undefined, () => publisher.result.blankLines++, file.path === '-' ? undefined : { path: file.path })) {
      const raw = Buffer.from(line.bytes.buffer, line.bytes.byteOffset, line.bytes.byteLength);
      if (publisher.add(raw, sessionKeyOf(line.bytes), line.source)) await publisher.flush();
    }
  }
  await publisher.flush();
  return publisher.result;
}

/** Header names of a dead letter's machine (import --to-kafka: the importing machine). */
export const DLQ_MACHINE_HEADERS = { host: 'toolcanon.origin.host', deviceId: 'toolcanon.origin.device_id' } as const;

/** A record for the dead-letter topic that is not a line too large (an importer's malformed record). */
interface QueuedDeadLetter {
  readonly line: Omit<Pending, 'record' | 'recordBytes'>;
  /** Why the topic cannot take it (oversized), or the reason and detail of another dead letter. */
  readonly why: { readonly oversized: string } | { readonly reason: DeadLetterReason; readonly detail: string; readonly headers: Readonly<Record<string, string>> };
}

/**
 * Publishes records to a topic in send requests that fit it, in the order added; a record the
 * topic cannot take goes to the dead-letter topic as `oversized`, as do other dead letters
 * queued with addDeadLetter. add() only queues (and says when a flush is due); flush() sends
 * and resolves once the broker acknowledged everything added (acks = all).
 */
export class RecordPublisher {
  readonly result: PublishResult;
  private readonly topic: string;
  private readonly dlqTopic: string;
  private readonly log: (line: string) => void;
  private readonly maxRecords: number;
  private readonly maxMessageBytes: number;
  private readonly limit: number;
  private readonly maxBytes: number;
  private readonly limitText: string;
  private batch: Pending[] = [];
  private batchBytes = 0;
  /** Full send requests and dead letters waiting for the next flush, in order. */
  private queue: ({ readonly batch: Pending[]; readonly bytes: number } | QueuedDeadLetter)[] = [];
  /** The dead-letter topic is prepared on the first dead letter only: a clean run creates nothing. */
  private dlqLimit: Promise<number> | undefined;

  constructor(
    private readonly producer: StreamProducer,
    private readonly options: PublishOptions,
  ) {
    this.topic = options.topic;
    this.dlqTopic = options.dlqTopic ?? defaultDlqTopic(options.topic);
    this.log = options.log ?? (() => undefined);
    this.maxRecords = options.maxBatchRecords ?? 5_000;
    this.maxMessageBytes = options.maxMessageBytes ?? KAFKA_DEFAULT_MAX_MESSAGE_BYTES;
    this.limit = this.maxMessageBytes - RECORD_OVERHEAD_BYTES;
    // Per-record framing (offsets, lengths, key) counts towards the batch too.
    this.maxBytes = Math.min(options.batchMaxBytes ?? 4 * 1024 * 1024, this.limit);
    this.limitText = `max.message.bytes ${this.maxMessageBytes}${options.maxMessageBytes === undefined ? " (Kafka's default: the topic's could not be read)" : ''}`;
    this.result = { recordsRead: 0, published: 0, bytesPublished: 0, unkeyed: 0, blankLines: 0, dlqTopic: this.dlqTopic, deadLettered: [] };
  }

  /** Queues one record (a line's bytes, keyed); true when a flush is due. */
  add(raw: Buffer, key: string | null, source: string): boolean {
    this.result.recordsRead++;
    const keyBytes = Buffer.byteLength(key ?? '');
    if (raw.byteLength + keyBytes > this.limit) {
      this.queue.push({ line: { raw, key, source, bytes: raw.byteLength }, why: { oversized: `${this.limitText}, less ${RECORD_OVERHEAD_BYTES} bytes kept for the key and the record framing` } });
      return true;
    }
    if (key === null) this.result.unkeyed++;
    const recordBytes = raw.byteLength + keyBytes + RECORD_FRAMING_BYTES;
    if (this.batch.length > 0 && (this.batch.length >= this.maxRecords || this.batchBytes + recordBytes > this.maxBytes)) {
      this.queue.push({ batch: this.batch, bytes: this.batchBytes });
      this.batch = [];
      this.batchBytes = 0;
    }
    this.batch.push({ record: { key, value: raw }, raw, key, source, bytes: raw.byteLength, recordBytes });
    this.batchBytes += recordBytes;
    return this.queue.length > 0;
  }

  /**
   * Queues a record read but not publishable (an importer's malformed record) for the
   * dead-letter topic, with its reason, detail and extra headers; counted as read. True: a
   * flush is due.
   */
  addDeadLetter(raw: Buffer, key: string | null, source: string, reason: DeadLetterReason, detail: string, headers: Readonly<Record<string, string>> = {}): boolean {
    this.result.recordsRead++;
    this.queue.push({ line: { raw, key, source, bytes: raw.byteLength }, why: { reason, detail, headers } });
    return true;
  }

  /** Sends everything queued; resolves when the broker acknowledged all of it. */
  async flush(): Promise<void> {
    const queue = this.queue;
    this.queue = [];
    if (this.batch.length > 0) queue.push({ batch: this.batch, bytes: this.batchBytes });
    this.batch = [];
    this.batchBytes = 0;
    // One request at a time: records of one partition stay in the order they were added.
    for (const q of queue) {
      if ('batch' in q) await this.send(q.batch, q.bytes);
      else await this.sendToDlq(q.line, q.why);
    }
  }

  private prepareDlq(): Promise<number> {
    return (this.dlqLimit ??= (async () => {
      const admin = this.options.admin;
      if (admin === undefined) return this.maxMessageBytes;
      const partitions = await admin.partitionCount(this.topic);
      const created = await admin.ensureTopic(this.dlqTopic, {
        partitions: partitions ?? 1,
        configs: this.options.maxMessageBytes === undefined ? {} : { 'max.message.bytes': String(this.options.maxMessageBytes) },
      });
      if (created) this.log(`Created dead-letter topic ${this.dlqTopic} (${partitions ?? 1} partition(s)).`);
      return (await admin.maxMessageBytes(this.dlqTopic)) ?? this.maxMessageBytes;
    })());
  }

  /** Sends a record to the dead-letter topic, cut to fit when it must be. */
  private async sendToDlq(received: Omit<Pending, 'record' | 'recordBytes'>, why: QueuedDeadLetter['why']): Promise<void> {
    const redacted = this.options.redact === false ? undefined : redactBytes(received.raw);
    const line = redacted === undefined || redacted.count === 0 ? received : { ...received, raw: redacted.bytes, bytes: redacted.bytes.byteLength };
    const reason: DeadLetterReason = 'oversized' in why ? 'oversized' : why.reason;
    const detail = 'oversized' in why ? `${received.bytes} bytes: more than ${this.topic} takes in one record (${why.oversized})` : why.detail;
    const extra = 'oversized' in why ? {} : why.headers;
    // The id replay gives the same line's dead letter: the same bytes from the same place.
    // line.raw is already redacted (when redaction is on): not scanned a second time.
    const deadLetterId = deadLetter(trimLine(line.raw), reason, detail, line.source, '', false).dead_letter_id;
    const dead = { detail, deadLetterId };
    const recordOf = (keep: number): OutgoingRecord => {
      const r = toUnpublishedDlqRecord(line, dead, this.topic, keep);
      return reason === 'oversized' && Object.keys(extra).length === 0 ? r : { ...r, headers: { ...r.headers, [DLQ_HEADERS.reason]: reason, ...extra } };
    };
    const room = (await this.prepareDlq()) - RECORD_OVERHEAD_BYTES - extraBytes(recordOf(0));
    let keep = line.bytes <= room ? line.bytes : utf8Cut(line.raw, room);
    for (;;) {
      try {
        await this.producer.send(this.dlqTopic, [recordOf(keep)]);
        break;
      } catch (error) {
        // The dead-letter topic takes less than its configuration said: halve until it fits.
        if (!isMessageTooLargeError(error) || keep === 0) throw error;
        keep = utf8Cut(line.raw, Math.floor(keep / 2));
      }
    }
    const produced: ProducedDeadLetter = { source: line.source, bytes: line.bytes, keptBytes: keep, dlqTopic: this.dlqTopic, detail, reason };
    this.result.deadLettered.push(produced);
    this.options.onDeadLetter?.(produced);
  }

  private sent(n: number, bytes: number): void {
    this.result.published += n;
    this.result.bytesPublished += bytes;
    this.options.onProgress?.(this.result.published, this.result.bytesPublished);
  }

  private async send(records: Pending[], bytes: number): Promise<void> {
    try {
      await this.producer.send(this.topic, records.map((p) => p.record));
      this.sent(records.length, bytes);
    } catch (error) {
      if (!isMessageTooLargeError(error)) throw error;
      // The topic takes less than its configuration said (or it could not be read): one record
      // at a time, so that only the records it refuses go to the dead-letter topic. Records of
      // other partitions in the refused request may have been written already and are then on
      // the topic twice (delivery is at least once; the tables deduplicate).
      this.log(`${this.topic} refused a request of ${records.length} record(s) as too large although it fits ${this.limitText}; sending them one at a time.`);
      for (const p of records) {
        try {
          await this.producer.send(this.topic, [p.record]);
          this.sent(1, p.recordBytes);
        } catch (e) {
          if (!isMessageTooLargeError(e)) throw e;
          await this.sendToDlq(p, { oversized: `the broker refused it as too large, ${this.limitText}` });
        }
      }
    }
  }
}
