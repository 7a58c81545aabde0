// Publishes JSONL events to a topic, one record per non-blank line, keyed by the event's
// session_id so that one session stays on one partition (and in order). The record value is the
// line's bytes exactly as in the file: a broken line is published as it is, for the worker to
// dead-letter.
import { listInputFiles, openInput, readLines, type InputFile } from '../source/file.ts';
import { KAFKA_DEFAULT_MAX_MESSAGE_BYTES, type OutgoingRecord, type StreamProducer } from './client.ts';

export interface PublishOptions {
  readonly topic: string;
  /** Records per send request. */
  readonly maxBatchRecords?: number;
  /**
   * Bytes of values per send request. It never exceeds the topic's limit: Kafka applies
   * max.message.bytes to a whole record batch, and kafkajs sends one batch per partition
   * without splitting it, so one send must fit even when all its records share a partition.
   */
  readonly maxBatchBytes?: number;
  /** Lines larger than this are not sent (the broker would refuse them); they are reported. */
  readonly maxMessageBytes?: number;
  readonly onProgress?: (published: number, bytes: number) => void;
}

export interface PublishResult {
  published: number;
  bytesPublished: number;
  /** Records sent without a key: the line had no string session_id (not JSON, say). */
  unkeyed: number;
  blankLines: number;
  /** Lines too large for the topic, by source (`path:line`). */
  readonly tooLarge: Array<{ source: string; bytes: number }>;
}

/** Room left in a record batch for the batch header and the record's framing, key and headers. */
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

export async function publishPaths(producer: StreamProducer, paths: readonly string[], options: PublishOptions): Promise<PublishResult> {
  return publishFiles(producer, listInputFiles(paths), options);
}

export async function publishFiles(producer: StreamProducer, files: readonly InputFile[], options: PublishOptions): Promise<PublishResult> {
  const maxRecords = options.maxBatchRecords ?? 5_000;
  const limit = (options.maxMessageBytes ?? KAFKA_DEFAULT_MAX_MESSAGE_BYTES) - RECORD_OVERHEAD_BYTES;
  // Per-record framing (offsets, lengths, key) counts towards the batch too.
  const maxBytes = Math.min(options.maxBatchBytes ?? 4 * 1024 * 1024, limit);
  const result: PublishResult = { published: 0, bytesPublished: 0, unkeyed: 0, blankLines: 0, tooLarge: [] };
  let batch: OutgoingRecord[] = [];
  let batchBytes = 0;
  const send = async (): Promise<void> => {
    if (batch.length === 0) return;
    // One request at a time: records of one partition stay in the order of the files.
    await producer.send(options.topic, batch);
    result.published += batch.length;
    result.bytesPublished += batchBytes;
    batch = [];
    batchBytes = 0;
    options.onProgress?.(result.published, result.bytesPublished);
  };
  for (const file of files) {
    for await (const line of readLines(openInput(file), file.path, undefined, () => result.blankLines++)) {
      if (line.bytes.byteLength > limit) {
        result.tooLarge.push({ source: line.source, bytes: line.bytes.byteLength });
        continue;
      }
      const key = sessionKeyOf(line.bytes);
      if (key === null) result.unkeyed++;
      const value = Buffer.from(line.bytes.buffer, line.bytes.byteOffset, line.bytes.byteLength);
      const recordBytes = value.byteLength + Buffer.byteLength(key ?? '') + RECORD_FRAMING_BYTES;
      if (batch.length > 0 && (batch.length >= maxRecords || batchBytes + recordBytes > maxBytes)) await send();
      batch.push({ key, value });
      batchBytes += recordBytes;
    }
  }
  await send();
  return result;
}
