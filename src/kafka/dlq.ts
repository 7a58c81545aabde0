// The dead-letter topic: what a poison record becomes there (a record the worker consumed, or a
// line `toolcanon produce` could not publish), and the source text of a Kafka record. How the
// worker finds a batch's poison records and publishes them: dead-letter-publisher.ts.
import type { OutgoingRecord } from './client.ts';
import type { DeadLetterRow } from '../model/records.ts';

/** Header names of a dead-letter record; the value is the original record value, byte for byte. */
export const DLQ_HEADERS = {
  reason: 'toolcanon.reason',
  detail: 'toolcanon.detail',
  originTopic: 'toolcanon.origin.topic',
  originPartition: 'toolcanon.origin.partition',
  originOffset: 'toolcanon.origin.offset',
  /** `file:line` of a line `toolcanon produce` did not publish (it has no partition or offset). */
  originSource: 'toolcanon.origin.source',
  deadLetterId: 'toolcanon.dead_letter_id',
  /** The value is null: the original (this many bytes) did not fit in the dead-letter topic. */
  valueOmittedBytes: 'toolcanon.value_omitted_bytes',
  /** The value is the first bytes of the original, which had this many (the rest did not fit). */
  valueOriginalBytes: 'toolcanon.value_original_bytes',
} as const;

/** Default dead-letter topic of a topic. */
export function defaultDlqTopic(topic: string): string {
  return `${topic}.dlq`;
}

/** The source string of a Kafka record, as stored in tool_calls.source and dead_letters.source. */
export function recordSource(topic: string, partition: number, offset: string): string {
  return `${topic}/${partition}/${offset}`;
}

export interface OriginalRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

export function toDlqRecord(original: OriginalRecord, dead: Pick<DeadLetterRow, 'reason' | 'detail' | 'dead_letter_id'>, origin: { topic: string; partition: number; offset: string }): OutgoingRecord {
  return {
    key: original.key,
    value: original.value ?? Buffer.alloc(0),
    headers: {
      [DLQ_HEADERS.reason]: dead.reason,
      [DLQ_HEADERS.detail]: dead.detail,
      [DLQ_HEADERS.originTopic]: origin.topic,
      [DLQ_HEADERS.originPartition]: String(origin.partition),
      [DLQ_HEADERS.originOffset]: origin.offset,
      [DLQ_HEADERS.deadLetterId]: dead.dead_letter_id,
    },
  };
}

/**
 * The dead-letter record of a line `toolcanon produce` could not publish (reason `oversized`):
 * keyed like the line would have been, the value the line's bytes (only the first `keep` of them
 * when the dead-letter topic cannot take them all; `toolcanon.value_original_bytes` says so), the
 * topic it was meant for and its `file:line`, and the id replay gives its `dead_letters` row.
 */
export function toUnpublishedDlqRecord(
  line: { readonly key: string | null; readonly raw: Buffer; readonly source: string },
  dead: { readonly detail: string; readonly deadLetterId: string },
  topic: string,
  keep = line.raw.byteLength,
): OutgoingRecord {
  const cut = keep < line.raw.byteLength;
  return {
    key: line.key,
    value: cut ? line.raw.subarray(0, keep) : line.raw,
    headers: {
      [DLQ_HEADERS.reason]: 'oversized',
      [DLQ_HEADERS.detail]: dead.detail,
      [DLQ_HEADERS.originTopic]: topic,
      [DLQ_HEADERS.originSource]: line.source,
      [DLQ_HEADERS.deadLetterId]: dead.deadLetterId,
      ...(cut ? { [DLQ_HEADERS.valueOriginalBytes]: String(line.raw.byteLength) } : {}),
    },
  };
}
