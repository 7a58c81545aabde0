// Issue 3, test 6: SIGTERM while a batch is being filled. The worker stops fetching, flushes,
// commits, leaves the group and exits 0 within a bounded time; the batch is committed together
// with its rows (or, had the flush failed, not at all): the rows stored are exactly the records
// before the committed offsets, with no gap and nothing after them.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { makeTempDir } from '../helpers/db.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import {
  committedOffsets,
  generateEvents,
  keyedRecords,
  offsetOf,
  parseFields,
  releaseKafkaTest,
  sendAll,
  sumOffsets,
  testClient,
  uniqueName,
  workerArgs,
  WorkerProcess,
} from '../helpers/worker.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/kafka/sigterm.test.ts');

const EVENTS = 40_000;
const BATCH_ROWS = 4_000;
const SHUTDOWN_TIMEOUT_MS = 20_000;

describe.skipIf(brokers === null)('SIGTERM during a batch', () => {
  const topic = uniqueName('tc-sigterm');
  const group = uniqueName('g-sigterm');
  const tmp = makeTempDir('sigterm');
  const db = join(tmp.dir, 'db');
  const events = generateEvents('sigterm', EVENTS);
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let worker: WorkerProcess;
  let atSignal: Record<string, string>;
  let exit: { code: number | null; signal: NodeJS.Signals | null };
  let shutdownMs: number;
  let committed: Map<number, bigint>;
  let sink: ClickHouseSink | undefined;

  beforeAll(async () => {
    client = testClient(brokers ?? [], 'sigterm-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: 3 });
    await sendAll(client, topic, keyedRecords(events.lines));

    // Batches flush by size only (the time trigger is out of reach), so a batch is always filling.
    worker = new WorkerProcess('worker', workerArgs(brokers ?? [], topic, group, db, [
      '--batch-max-rows', String(BATCH_ROWS),
      '--batch-max-wait-ms', '600000',
      '--shutdown-timeout-ms', String(SHUTDOWN_TIMEOUT_MS),
    ]));
    const line = await worker.waitForLine(new RegExp(`^Progress: .*committed=([1-9][0-9]{3,}) buffered=[1-9]`), 120_000);
    atSignal = parseFields(line);
    const sent = Date.now();
    worker.kill('SIGTERM');
    exit = await worker.exited;
    shutdownMs = Date.now() - sent;
    committed = await committedOffsets(admin, group, topic);
    sink = await ClickHouseSink.open({ db });
  }, 300_000);

  afterAll(() => releaseKafkaTest({ sink, admin, topic, tmp }));

  it('is signalled mid-stream with a batch being filled', () => {
    expect(Number(atSignal['buffered'])).toBeGreaterThan(0);
    expect(sumOffsets(committed)).toBeLessThan(EVENTS);
  });

  it('exits 0 within the shutdown bound after flushing and committing', () => {
    expect(exit.code).toBe(0);
    expect(shutdownMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    expect(worker.lines.some((l) => l.startsWith('Stopping (SIGTERM)'))).toBe(true);
    const stopped = parseFields(worker.lines.find((l) => l.startsWith('Stopped:')) ?? '');
    expect(stopped['buffered']).toBe('0');
    expect(stopped['committed']).toBe(stopped['consumed']);
    const summary = worker.summary();
    expect(summary['clean_exit']).toBe(true);
    expect(summary['events_committed']).toBe(summaryNumber(summary, 'events_consumed'));
  });

  it('stores exactly the records before the committed offsets: the last batch is committed with its rows', async () => {
    const rows = await (sink as ClickHouseSink).queryRows<{ source: string }>('SELECT source FROM tool_calls FINAL');
    const stored = new Map<number, bigint[]>();
    for (const r of rows) {
      const { partition, offset } = offsetOf(r.source);
      stored.set(partition, [...(stored.get(partition) ?? []), offset]);
    }
    for (const [partition, next] of committed) {
      const offsets = (stored.get(partition) ?? []).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
      expect(offsets.length, `partition ${partition}`).toBe(Number(next));
      expect(offsets.every((o, i) => o === BigInt(i)), `partition ${partition}: offsets 0..${next - 1n}`).toBe(true);
    }
    expect(rows.length).toBe(sumOffsets(committed));
  });
});

function summaryNumber(summary: Record<string, unknown>, metric: string): number {
  return Number(summary[metric]);
}
