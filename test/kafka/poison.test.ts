// Issue 3, test 2: poison records in the middle of a partition (not JSON, invalid UTF-8,
// schema-invalid, oversized, too deep, an empty value) never stall it. Each ends in the
// dead-letter topic (value = the original bytes; headers = reason, origin topic, partition,
// offset) and in dead_letters; every good record after them is written.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient, OutgoingRecord } from '../../src/kafka/client.ts';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import type { WorkerSummary } from '../../src/worker/worker.ts';
import { countOf, makeTempDir } from '../helpers/db.ts';
import { eventLine } from '../helpers/events.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import {
  DLQ_TOPIC_HEADERS as H,
  generateEvents,
  type ReadRecord,
  readTopic,
  releaseKafkaTest,
  sendAll,
  startInProcessWorker,
  testClient,
  uniqueName,
  waitForAllCommitted,
} from '../helpers/worker.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/kafka/poison.test.ts');

const KEY = 'poison-session';
const MAX_EVENT_BYTES = 64 * 1024;

/** The poison records, each with the reason the worker must give. */
function poison(): Array<{ value: Buffer | null; reason: string }> {
  return [
    { value: Buffer.from('this is not json'), reason: 'invalid_json' },
    { value: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]), reason: 'invalid_utf8' },
    { value: Buffer.from(eventLine({ session_id: KEY, call_id: undefined })), reason: 'schema' },
    { value: Buffer.from(eventLine({ session_id: KEY, harness: 'not_a_harness' })), reason: 'unknown_harness' },
    { value: Buffer.from(eventLine({ session_id: KEY, call_id: 'too-big', output: 'x'.repeat(MAX_EVENT_BYTES + 10) })), reason: 'oversized' },
    { value: Buffer.from(eventLine({ session_id: KEY, call_id: 'too-deep' }, `${'['.repeat(300)}${']'.repeat(300)}`)), reason: 'too_deep' },
    { value: null, reason: 'invalid_json' },
  ];
}

describe.skipIf(brokers === null)('poison records in the middle of a partition', () => {
  const topic = uniqueName('tc-poison');
  const group = uniqueName('g-poison');
  const tmp = makeTempDir('poison');
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let sink: ClickHouseSink;
  let summary: WorkerSummary;
  let dlq: ReadRecord[];
  const good = generateEvents('poison', 1_200, 1);
  const bad = poison();
  /** Offset in the poison partition -> what was sent there. */
  const sent: Array<{ record: OutgoingRecord; reason: string | undefined }> = [];

  beforeAll(async () => {
    client = testClient(brokers ?? [], 'poison-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: 2 });
    // One key, so one partition: good records, then a poison record, then more good ones...
    let g = 0;
    const perGap = Math.floor(good.lines.length / (bad.length + 1));
    for (const p of bad) {
      for (let i = 0; i < perGap; i++) sent.push({ record: { key: KEY, value: Buffer.from(good.lines[g++] as string) }, reason: undefined });
      sent.push({ record: { key: KEY, value: p.value }, reason: p.reason });
    }
    while (g < good.lines.length) sent.push({ record: { key: KEY, value: Buffer.from(good.lines[g++] as string) }, reason: undefined });
    await sendAll(client, topic, sent.map((s) => s.record), 100);

    sink = await ClickHouseSink.open({ db: join(tmp.dir, 'db') });
    // Small batches, so that poison records fall into different flushes.
    const { worker } = await startInProcessWorker(brokers ?? [], topic, group, sink, ['--batch-max-rows', '150', '--max-event-bytes', String(MAX_EVENT_BYTES)]);
    await waitForAllCommitted(admin, group, topic);
    summary = await worker.stop('test done');
    dlq = await readTopic(client, `${topic}.dlq`, bad.length);
  }, 300_000);

  afterAll(() => releaseKafkaTest({ sink, admin, topic, tmp }));

  it('keeps all records in one partition, poison in the middle', async () => {
    const highs = await admin.highWatermarks(topic);
    expect([...highs.values()].sort()).toEqual([0n, BigInt(sent.length)]);
  });

  it('writes every good record, the ones after the poison included: events in = rows + dead letters', async () => {
    expect(summary.clean).toBe(true);
    expect(summary.stats.eventsConsumed).toBe(sent.length);
    expect(summary.counts.toolCallRows).toBe(good.lines.length);
    expect(summary.counts.deadLetters).toBe(bad.length);
    expect(summary.counts.rowsWritten + summary.counts.deadLetters).toBe(sent.length);
    const stored = await sink.queryRows<{ call_id: string }>('SELECT call_id FROM tool_calls FINAL');
    expect(stored.map((r) => r.call_id).sort()).toEqual([...good.callIds].sort());
  });

  it('stores each poison record in dead_letters with its reason, original bytes and origin', async () => {
    const partition = [...(await admin.highWatermarks(topic))].find(([, high]) => high > 0n)?.[0];
    const rows = await sink.queryRows<{ source: string; reason: string; raw_hex: string }>('SELECT source, reason, hex(raw) AS raw_hex FROM dead_letters FINAL');
    const expected = sent
      .map((s, offset) => ({ ...s, offset }))
      .filter((s) => s.reason !== undefined)
      .map((s) => ({ source: `${topic}/${partition}/${s.offset}`, reason: s.reason, raw_hex: Buffer.from(s.record.value ?? '').toString('hex').toUpperCase() }));
    const bySource = (a: { source: string }, b: { source: string }): number => a.source.localeCompare(b.source);
    expect(rows.sort(bySource)).toEqual(expected.sort(bySource));
    expect(await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL')).toBe(bad.length);
  });

  it('publishes each poison record to <topic>.dlq: original value, key, reason and origin headers', async () => {
    const partition = [...(await admin.highWatermarks(topic))].find(([, high]) => high > 0n)?.[0];
    expect(dlq).toHaveLength(bad.length);
    const got = dlq
      .map((r) => ({
        key: r.key?.toString(),
        value: (r.value ?? Buffer.alloc(0)).toString('hex'),
        reason: String(r.headers[H.reason]),
        topic: String(r.headers[H.originTopic]),
        partition: Number(String(r.headers[H.originPartition])),
        offset: Number(String(r.headers[H.originOffset])),
        hasDetail: String(r.headers[H.detail] ?? '').length > 0,
      }))
      .sort((a, b) => a.offset - b.offset);
    const expected = sent
      .map((s, offset) => ({ ...s, offset }))
      .filter((s) => s.reason !== undefined)
      .map((s) => ({ key: KEY, value: Buffer.from(s.record.value ?? '').toString('hex'), reason: s.reason, topic, partition, offset: s.offset, hasDetail: true }));
    expect(got).toEqual(expected);
  });
});
