// Publishes JSONL events to a topic, one record per non-blank line, keyed by the event's
// session_id so that one session stays on one partition (and in order). The record value is the
// line's bytes exactly as in the file: a broken line is published as it is, for the worker to
// dead-letter.
//
// A line the topic cannot take (its record would exceed the topic's max.message.bytes) is not
// lost: it goes to the dead-letter topic as an `oversized` dead letter in the worker's format
// (src/worker/dlq.ts), with its `file:line`, keyed as it would have been, its bytes as the value,
// cut to what the dead-letter topic takes when even that is too small (a header says so).
import { deadLetter, trimLine } from '../decode/event.ts';
import { redactBytes } from '../redact/redact.ts';
import { listInputFiles, openInput, readLines, type InputFile } from '../source/file.ts';
import { defaultDlqTopic, toUnpublishedDlqRecord } from '../worker/dlq.ts';
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
  /** Lines too large for the topic, sent to the dead-letter topic as `oversized`. */
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
  const { topic } = options;
  const dlqTopic = options.dlqTopic ?? defaultDlqTopic(topic);
  const log = options.log ?? (() => undefined);
  const maxRecords = options.maxBatchRecords ?? 5_000;
  const maxMessageBytes = options.maxMessageBytes ?? KAFKA_DEFAULT_MAX_MESSAGE_BYTES;
  const limit = maxMessageBytes - RECORD_OVERHEAD_BYTES;
  // Per-record framing (offsets, lengths, key) counts towards the batch too.
  const maxBytes = Math.min(options.batchMaxBytes ?? 4 * 1024 * 1024, limit);
  const limitText = `max.message.bytes ${maxMessageBytes}${options.maxMessageBytes === undefined ? " (Kafka's default: the topic's could not be read)" : ''}`;
  const result: PublishResult = { recordsRead: 0, published: 0, bytesPublished: 0, unkeyed: 0, blankLines: 0, dlqTopic, deadLettered: [] };

  // The dead-letter topic is prepared on the first dead letter only: a clean run creates nothing.
  let dlqLimit: Promise<number> | undefined;
  const prepareDlq = (): Promise<number> =>
    (dlqLimit ??= (async () => {
      const admin = options.admin;
      if (admin === undefined) return maxMessageBytes;
      const partitions = await admin.partitionCount(topic);
      const created = await admin.ensureTopic(dlqTopic, {
        partitions: partitions ?? 1,
        configs: options.maxMessageBytes === undefined ? {} : { 'max.message.bytes': String(options.maxMessageBytes) },
      });
      if (created) log(`Created dead-letter topic ${dlqTopic} (${partitions ?? 1} partition(s)).`);
      return (await admin.maxMessageBytes(dlqTopic)) ?? maxMessageBytes;
    })());

  /** Sends a line the topic cannot take to the dead-letter topic, cut to fit when it must be. */
  const sendToDlq = async (received: Omit<Pending, 'record' | 'recordBytes'>, why: string): Promise<void> => {
    const redacted = options.redact === false ? undefined : redactBytes(received.raw);
    const line = redacted === undefined || redacted.count === 0 ? received : { ...received, raw: redacted.bytes, bytes: redacted.bytes.byteLength };
    const detail = `${received.bytes} bytes: more than ${topic} takes in one record (${why})`;
    // The id replay gives the same line's dead letter: the same bytes from the same place.
    // line.raw is already redacted (when redaction is on): not scanned a second time.
    const deadLetterId = deadLetter(trimLine(line.raw), 'oversized', detail, line.source, '', false).dead_letter_id;
    const dead = { detail, deadLetterId };
    const room = (await prepareDlq()) - RECORD_OVERHEAD_BYTES - extraBytes(toUnpublishedDlqRecord(line, dead, topic, 0));
    let keep = line.bytes <= room ? line.bytes : utf8Cut(line.raw, room);
    for (;;) {
      try {
        await producer.send(dlqTopic, [toUnpublishedDlqRecord(line, dead, topic, keep)]);
        break;
      } catch (error) {
        // The dead-letter topic takes less than its configuration said: halve until it fits.
        if (!isMessageTooLargeError(error) || keep === 0) throw error;
        keep = utf8Cut(line.raw, Math.floor(keep / 2));
      }
    }
    const produced: ProducedDeadLetter = { source: line.source, bytes: line.bytes, keptBytes: keep, dlqTopic, detail };
    result.deadLettered.push(produced);
    options.onDeadLetter?.(produced);
  };

  let batch: Pending[] = [];
  let batchBytes = 0;
  const sent = (n: number, bytes: number): void => {
    result.published += n;
    result.bytesPublished += bytes;
    options.onProgress?.(result.published, result.bytesPublished);
  };
  const send = async (): Promise<void> => {
    if (batch.length === 0) return;
    const records = batch;
    const bytes = batchBytes;
    batch = [];
    batchBytes = 0;
    try {
      // One request at a time: records of one partition stay in the order of the files.
      await producer.send(topic, records.map((p) => p.record));
      sent(records.length, bytes);
    } catch (error) {
      if (!isMessageTooLargeError(error)) throw error;
      // The topic takes less than its configuration said (or it could not be read): one record
      // at a time, so that only the records it refuses go to the dead-letter topic. Records of
      // other partitions in the refused request may have been written already and are then on
      // the topic twice (delivery is at least once; the tables deduplicate).
      log(`${topic} refused a request of ${records.length} record(s) as too large although it fits ${limitText}; sending them one at a time.`);
      for (const p of records) {
        try {
          await producer.send(topic, [p.record]);
          sent(1, p.recordBytes);
        } catch (e) {
          if (!isMessageTooLargeError(e)) throw e;
          await sendToDlq(p, `the broker refused it as too large, ${limitText}`);
        }
      }
    }
  };

  for (const file of files) {
    for await (const line of readLines(openInput(file), file.path, undefined, () => result.blankLines++)) {
      result.recordsRead++;
      const raw = Buffer.from(line.bytes.buffer, line.bytes.byteOffset, line.bytes.byteLength);
      const key = sessionKeyOf(line.bytes);
      const keyBytes = Buffer.byteLength(key ?? '');
      if (raw.byteLength + keyBytes > limit) {
        await sendToDlq({ raw, key, source: line.source, bytes: raw.byteLength }, `${limitText}, less ${RECORD_OVERHEAD_BYTES} bytes kept for the key and the record framing`);
        continue;
      }
      if (key === null) result.unkeyed++;
      const recordBytes = raw.byteLength + keyBytes + RECORD_FRAMING_BYTES;
      if (batch.length > 0 && (batch.length >= maxRecords || batchBytes + recordBytes > maxBytes)) await send();
      batch.push({ record: { key, value: raw }, raw, key, source: line.source, bytes: raw.byteLength, recordBytes });
      batchBytes += recordBytes;
    }
  }
  await send();
  return result;
}
