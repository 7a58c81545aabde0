// Issue 3, test 5: ClickHouse fails for a while and recovers. The failure is real: the worker
// runs in this process and its embedded engine loses the tool_calls table (DETACH TABLE) while
// events arrive, then gets it back (ATTACH TABLE). While it fails the worker retries with
// backoff, pauses fetching (its buffer stays within one batch) and commits nothing; afterwards
// everything is written exactly once and committed. On both engines with the same assertions
// (test/helpers/engines.ts): the embedded engine, and a ClickHouse server whose table goes away
// the same way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import type { StreamWorker, WorkerSummary } from '../../src/worker/worker.ts';
import { countOf, makeTempDir } from '../helpers/db.ts';
import { forEachEngine } from '../helpers/engines.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import {
  committedOffsets,
  generateEvents,
  keyedRecords,
  releaseKafkaTest,
  sendAll,
  startInProcessWorker,
  sumOffsets,
  testClient,
  uniqueName,
  waitFor,
  waitForAllCommitted,
} from '../helpers/worker.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/kafka/sink-outage.test.ts');

const BATCH_ROWS = 500;
const BEFORE = 1_000;
const DURING = 4_000;
const OUTAGE_MS = 4_000;

await forEachEngine('test/kafka/sink-outage.test.ts', (engine) => describe.skipIf(brokers === null)('ClickHouse fails for a while, then recovers', () => {
  const topic = uniqueName('tc-outage');
  const group = uniqueName('g-outage');
  const tmp = makeTempDir('outage');
  const events = generateEvents('outage', BEFORE + DURING);
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let sink: ClickHouseSink;
  let worker: StreamWorker;
  let logs: string[];
  let summary: WorkerSummary;
  const during = {
    committedBefore: 0,
    committedSamples: [] as number[],
    consumedSamples: [] as number[],
    bufferedMax: 0,
    pausedSeen: false,
    rowsDuring: 0,
    failedFlushes: 0,
  };

  beforeAll(async () => {
    client = testClient(brokers ?? [], 'outage-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: 2 });
    sink = await engine.openSink('outage');
    ({ worker, logs } = await startInProcessWorker(brokers ?? [], topic, group, sink, ['--batch-max-rows', String(BATCH_ROWS), '--retry-initial-ms', '200', '--retry-max-ms', '800']));
    const records = keyedRecords(events.lines);

    // Healthy: the first events are written and committed.
    await sendAll(client, topic, records.slice(0, BEFORE));
    await waitForAllCommitted(admin, group, topic);
    during.committedBefore = sumOffsets(await committedOffsets(admin, group, topic));

    // The table goes away under the running worker; more events arrive.
    await sink.client.command({ query: 'DETACH TABLE tool_calls' });
    await sendAll(client, topic, records.slice(BEFORE));
    await waitFor('the worker to notice the failure and pause', () => (worker.status().failing !== undefined && worker.status().paused ? true : undefined), 30_000, 50);
    const outageEnds = Date.now() + OUTAGE_MS;
    while (Date.now() < outageEnds) {
      const s = worker.status();
      during.pausedSeen ||= s.paused;
      during.bufferedMax = Math.max(during.bufferedMax, s.bufferedEvents);
      during.consumedSamples.push(s.stats.eventsConsumed);
      during.committedSamples.push(sumOffsets(await committedOffsets(admin, group, topic)));
      await new Promise((r) => setTimeout(r, 250));
    }
    during.failedFlushes = worker.status().stats.flushFailures;
    during.rowsDuring = worker.status().counts.toolCallRows;

    // Back: everything is written and committed.
    await sink.client.command({ query: 'ATTACH TABLE tool_calls' });
    await waitForAllCommitted(admin, group, topic, 60_000);
    summary = await worker.stop('test done');
  }, 300_000);

  afterAll(() => releaseKafkaTest({ sink, admin, topic, tmp }));

  it('commits nothing while ClickHouse fails', () => {
    expect(during.committedBefore).toBe(BEFORE);
    expect(during.committedSamples.length).toBeGreaterThan(5);
    for (const c of during.committedSamples) expect(c).toBe(BEFORE);
    expect(during.rowsDuring).toBe(BEFORE);
  });

  it('retries with backoff and pauses fetching, holding at most two batches (one being written, one filled)', () => {
    expect(during.pausedSeen).toBe(true);
    // Backoff 200-800 ms over a 4 s outage: several attempts, far fewer than a busy loop would make.
    expect(during.failedFlushes).toBeGreaterThanOrEqual(4);
    expect(during.failedFlushes).toBeLessThan(40);
    expect(during.bufferedMax).toBeGreaterThan(0);
    expect(during.bufferedMax).toBeLessThanOrEqual(2 * BATCH_ROWS);
    // Paused: consumption does not run ahead of the failing sink. The batch being filled when the
    // pause was first seen may still take the records already fetched (a run under load saw
    // 1,500 then 2,000), so: it stops (the second half of the outage takes nothing) and what it
    // took past the committed offsets fits the two batches it may hold.
    const consumed = during.consumedSamples;
    const settled = consumed.slice(Math.floor(consumed.length / 2));
    expect(new Set(settled).size).toBe(1);
    expect((consumed[consumed.length - 1] ?? 0) - during.committedBefore).toBeLessThanOrEqual(2 * BATCH_ROWS);
    expect(logs.some((l) => l.startsWith('warning: Retrying ClickHouse insert'))).toBe(true);
    expect(logs.some((l) => /recovered after \d+ failed attempt/.test(l))).toBe(true);
  });

  it('loses nothing and counts nothing twice once ClickHouse is back', async () => {
    expect(summary.clean).toBe(true);
    expect(worker.status().paused).toBe(false);
    expect(worker.status().failing).toBeUndefined();
    expect(await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(BEFORE + DURING);
    expect(await countOf(sink, 'SELECT uniqExact(call_id) AS n FROM tool_calls')).toBe(BEFORE + DURING);
    const ids = await sink.queryRows<{ call_id: string }>('SELECT call_id FROM tool_calls FINAL');
    expect(ids.map((r) => r.call_id).sort()).toEqual([...events.callIds].sort());
    expect(sumOffsets(await committedOffsets(admin, group, topic))).toBe(BEFORE + DURING);
    expect(summary.counts.deadLetters).toBe(0);
  });
}));
