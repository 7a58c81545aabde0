// The dead-letter queue and publisher on their own: poison records kept with their position at
// intake, matched to the dead-letter rows a real batch writer got acknowledged by a real embedded
// ClickHouse (no parsing of the source back into a position), and published to a real broker's
// dead-letter topic, a record it cannot hold without its value.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowClickHouseTime, DEFAULT_LIMITS } from '../../src/decode/event.ts';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { BatchWriter, emptyCounts } from '../../src/pipeline/batch-writer.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { DeadLetterPublisher, DeadLetterQueue, withoutValue } from '../../src/worker/dead-letter-publisher.ts';
import { DLQ_HEADERS, recordSource } from '../../src/kafka/dlq.ts';
import { createWorkerTelemetry } from '../../src/worker/telemetry.ts';
import { countOf, openTempSink } from '../helpers/db.ts';
import { eventLine } from '../helpers/events.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import { readTopic, testClient, uniqueName } from '../helpers/worker.ts';

interface Rec {
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

/** Feeds records of topic `t` through a batch writer and the queue, as the worker's intake does. */
function intake(writer: BatchWriter, queue: DeadLetterQueue, topic: string, records: readonly Rec[]): void {
  const ingestedAt = nowClickHouseTime();
  for (const r of records) {
    const source = recordSource(topic, r.partition, r.offset);
    if (writer.add({ bytes: r.value ?? Buffer.alloc(0), source }, ingestedAt, DEFAULT_LIMITS).kind === 'dead') queue.keep(source, { topic, ...r });
  }
}

describe('DeadLetterQueue with a real batch writer and engine', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('dlq-queue'));
  });
  afterAll(() => cleanup());

  it('matches each acknowledged dead letter to its record, with the position it was consumed at', async () => {
    const queue = new DeadLetterQueue();
    const writer = new BatchWriter(sink, emptyCounts(), { batchMaxRows: 100, batchMaxBytes: 1 << 20 }, undefined, { onDeadLettersWritten: queue.onDeadLettersWritten });
    // A topic name with slashes-free dots and dashes; offsets beyond 2^53 stay text.
    const topic = 'tool.events-x';
    const notJson = Buffer.from('{"schema":');
    const badUtf8 = Buffer.from([0x7b, 0xff, 0x7d]);
    intake(writer, queue, topic, [
      { partition: 0, offset: '5', key: Buffer.from('s-1'), value: Buffer.from(eventLine({ call_id: 'ok-1' })) },
      { partition: 0, offset: '6', key: Buffer.from('s-1'), value: notJson },
      { partition: 3, offset: '9007199254740993', key: null, value: badUtf8 },
      { partition: 3, offset: '9007199254740994', key: null, value: null },
    ]);
    writer.seal();
    queue.seal();
    // The next batch fills behind the sealed one: its poison record is not matched yet.
    intake(writer, queue, topic, [{ partition: 1, offset: '0', key: null, value: Buffer.from('nope') }]);
    await writer.writeSealed();
    const matched = queue.acknowledgeSealed();
    expect(matched.map((d) => d.reason).sort()).toEqual(['invalid_json', 'invalid_json', 'invalid_utf8']);
    const byOffset = new Map(queue.pending.map((r) => [String(r.headers?.[DLQ_HEADERS.originOffset]), r]));
    expect([...byOffset.keys()].sort()).toEqual(['6', '9007199254740993', '9007199254740994']);
    const six = byOffset.get('6');
    expect(six?.key).toEqual(Buffer.from('s-1'));
    expect(six?.value).toEqual(notJson);
    expect(six?.headers).toMatchObject({ [DLQ_HEADERS.originTopic]: topic, [DLQ_HEADERS.originPartition]: '0', [DLQ_HEADERS.reason]: 'invalid_json' });
    expect(byOffset.get('9007199254740993')?.value).toEqual(badUtf8);
    expect(byOffset.get('9007199254740993')?.headers?.[DLQ_HEADERS.originPartition]).toBe('3');
    expect(byOffset.get('9007199254740994')?.value).toEqual(Buffer.alloc(0));
    // Each carries the id of its stored dead_letters row.
    // (Those of this topic: the other tests of this file write to the same tables.)
    const ids = await sink.queryRows<{ dead_letter_id: string }>({ query: 'SELECT dead_letter_id FROM dead_letters FINAL WHERE startsWith(source, {prefix:String})', query_params: { prefix: `${topic}/` } });
    expect(ids).toHaveLength(3);
    expect(queue.pending.map((r) => r.headers?.[DLQ_HEADERS.deadLetterId]).sort()).toEqual(ids.map((r) => r.dead_letter_id).sort());

    // The record behind follows with its own batch.
    queue.published(queue.pending.length);
    expect(queue.pending).toHaveLength(0);
    writer.seal();
    queue.seal();
    await writer.writeSealed();
    expect(queue.acknowledgeSealed().map((d) => d.source)).toEqual([recordSource(topic, 1, '0')]);
    expect(await countOf(sink, `SELECT count() AS n FROM dead_letters FINAL WHERE startsWith(source, '${topic}/')`)).toBe(4);
  });

  it('a write that failed after its dead letters were stored is retried: each dead letter is published once', async () => {
    const queue = new DeadLetterQueue();
    const writer = new BatchWriter(sink, emptyCounts(), { batchMaxRows: 100, batchMaxBytes: 1 << 20 }, undefined, { onDeadLettersWritten: queue.onDeadLettersWritten });
    intake(writer, queue, 't-retry', [
      { partition: 0, offset: '1', key: null, value: Buffer.from('x') },
      { partition: 0, offset: '2', key: null, value: Buffer.from(eventLine({ call_id: 'retry-ok' })) },
    ]);
    writer.seal();
    queue.seal();
    // Dead letters are inserted first; the tool_calls insert then fails.
    await sink.client.command({ query: 'DETACH TABLE tool_calls' });
    try {
      await expect(writer.writeSealed()).rejects.toThrow();
    } finally {
      await sink.client.command({ query: 'ATTACH TABLE tool_calls' });
    }
    await writer.writeSealed();
    const matched = queue.acknowledgeSealed();
    expect(matched.map((d) => d.source)).toEqual([recordSource('t-retry', 0, '1')]);
    expect(queue.pending).toHaveLength(1);
  });

  it('replaces secrets in the value as the stored dead letter had them redacted', async () => {
    const queue = new DeadLetterQueue();
    const writer = new BatchWriter(sink, emptyCounts(), { batchMaxRows: 100, batchMaxBytes: 1 << 20 }, undefined, { onDeadLettersWritten: queue.onDeadLettersWritten });
    const secret = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
    intake(writer, queue, 't-secret', [{ partition: 0, offset: '0', key: null, value: Buffer.from(`{"token":"${secret}"`) }]);
    writer.seal();
    queue.seal();
    await writer.writeSealed();
    queue.acknowledgeSealed();
    const value = String(queue.pending[0]?.value);
    expect(value).not.toContain(secret);
    expect(value).toMatch(/\[REDACTED:github_token:[0-9a-f]+\]/);
  });
});

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/worker/dead-letter-publisher.test.ts');

describe.skipIf(brokers === null)('DeadLetterPublisher against a real broker', () => {
  const dlqTopic = uniqueName('tc-dlqpub');
  let client: KafkaClient;
  let admin: KafkaAdmin;
  beforeAll(async () => {
    client = testClient(brokers ?? [], 'dlq-publisher-test');
    admin = await client.admin();
    // Room for small records only: a 40 KiB value does not fit.
    await admin.ensureTopic(dlqTopic, { partitions: 1, configs: { 'max.message.bytes': '20000' } });
  });
  afterAll(async () => {
    await admin?.deleteTopics([dlqTopic]).catch(() => undefined);
    await admin?.disconnect();
  });

  it('publishes every pending record; one the topic cannot hold goes without its value, saying its size', async () => {
    const queue = new DeadLetterQueue();
    const { sink, cleanup } = await openTempSink('dlq-publisher');
    try {
      const writer = new BatchWriter(sink, emptyCounts(), { batchMaxRows: 100, batchMaxBytes: 1 << 20 }, undefined, { onDeadLettersWritten: queue.onDeadLettersWritten });
      const big = Buffer.from(`{${'x'.repeat(40_000)}`);
      intake(writer, queue, 'src-topic', [
        { partition: 0, offset: '1', key: Buffer.from('k1'), value: Buffer.from('not json') },
        { partition: 0, offset: '2', key: Buffer.from('k2'), value: big },
      ]);
      writer.seal();
      queue.seal();
      await writer.writeSealed();
      queue.acknowledgeSealed();
    } finally {
      await cleanup();
    }
    const logs: string[] = [];
    const publisher = new DeadLetterPublisher({ dlqTopic, log: (l) => logs.push(l), telemetry: createWorkerTelemetry('src-topic', 'g', { lagByPartition: () => new Map(), bufferedEvents: () => 0, isPaused: () => false }) });
    const producer = await client.producer();
    let wrapped = 0;
    try {
      expect(await publisher.publish(producer, queue, (work) => (wrapped++, work))).toBe(2);
    } finally {
      await producer.disconnect();
    }
    expect(wrapped).toBe(1);
    expect(queue.pending).toHaveLength(0);
    expect(publisher.publishedRecords).toBe(2);
    expect(logs).toEqual([`warning: Dead-letter record of src-topic/0/2 is too large for ${dlqTopic} (40001 bytes); publishing it without its value.`]);

    const read = await readTopic(client, dlqTopic, 2);
    expect(read).toHaveLength(2);
    const byOffset = new Map(read.map((r) => [String(r.headers[DLQ_HEADERS.originOffset]), r]));
    expect(byOffset.get('1')?.value).toEqual(Buffer.from('not json'));
    expect(byOffset.get('1')?.headers[DLQ_HEADERS.valueOmittedBytes]).toBeUndefined();
    expect(byOffset.get('2')?.key).toEqual(Buffer.from('k2'));
    expect(byOffset.get('2')?.value).toBeNull();
    expect(String(byOffset.get('2')?.headers[DLQ_HEADERS.valueOmittedBytes])).toBe('40001');
    expect(String(byOffset.get('2')?.headers[DLQ_HEADERS.reason])).toBe('invalid_json');
  });

  it('withoutValue keeps key and headers', () => {
    const r = withoutValue({ key: 'k', value: 'vvv', headers: { a: 'b' } }, 3);
    expect(r).toEqual({ key: 'k', value: null, headers: { a: 'b', [DLQ_HEADERS.valueOmittedBytes]: '3' } });
  });
});
