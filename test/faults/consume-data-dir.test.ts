// Issue 10, faults: the embedded data directory of a running `toolcanon consume` is removed. A
// real worker process, a real broker, a real engine. The worker used to retry the failing insert
// forever, holding its partitions and committing nothing; now it stops: exit 1, one line naming
// the directory, and no offset of an event it could not write committed, so a restart on the
// same --db consumes them again and stores each once.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir, removeWhileInUse } from '../helpers/db.ts';
import { committedParts, removedDataDirLines } from '../helpers/faults.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import {
  committedOffsets,
  generateEvents,
  keyedRecords,
  offsetOf,
  releaseKafkaTest,
  sendAll,
  sumOffsets,
  testClient,
  uniqueName,
  waitFor,
  waitForAllCommitted,
  workerArgs,
  WorkerProcess,
} from '../helpers/worker.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/faults/consume-data-dir.test.ts');

const FIRST = 6_000;
const SECOND = 4_000;

describe.skipIf(brokers === null)('the data directory of a running consume worker is removed', () => {
  const topic = uniqueName('tc-rmdb');
  const group = uniqueName('g-rmdb');
  const tmp = makeTempDir('consume-rmdb');
  const db = join(tmp.dir, 'db');
  const events = generateEvents('rmdb', FIRST + SECOND);
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let sink: ClickHouseSink | undefined;
  let first: WorkerProcess;
  let firstExit: { code: number | null; signal: NodeJS.Signals | null };
  let highAfterFirstWave: Map<number, bigint>;
  let committedAtExit: Map<number, bigint>;
  let second: WorkerProcess;
  let secondExit: { code: number | null; signal: NodeJS.Signals | null };

  beforeAll(async () => {
    client = testClient(brokers ?? [], 'rmdb-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: 3 });
    const records = keyedRecords(events.lines);
    await sendAll(client, topic, records.slice(0, FIRST));
    highAfterFirstWave = await admin.highWatermarks(topic);

    first = new WorkerProcess('first', workerArgs(brokers ?? [], topic, group, db));
    // Working: batches written and committed.
    await waitFor('a first commit', async () => (sumOffsets(await committedOffsets(admin, group, topic)) > 0 ? true : undefined), 120_000);
    expect(committedParts(db, 'tool_calls').length).toBeGreaterThan(0);
    removeWhileInUse(db);
    // More events arrive: the worker must write them, and cannot.
    await sendAll(client, topic, records.slice(FIRST));
    // Before the fix it retried forever: this wait timed out.
    firstExit = await Promise.race([
      first.exited,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the worker did not stop within 90 s; stderr:\n${first.lines.slice(-20).join('\n')}`)), 90_000)),
    ]);
    committedAtExit = await committedOffsets(admin, group, topic);

    // A restart on the same --db reads everything after the last commit again.
    second = new WorkerProcess('second', workerArgs(brokers ?? [], topic, group, db));
    await waitForAllCommitted(admin, group, topic, 180_000);
    second.kill('SIGTERM');
    secondExit = await second.exited;
    sink = await ClickHouseSink.open({ db });
  }, 420_000);

  afterAll(async () => {
    first?.kill('SIGKILL');
    second?.kill('SIGKILL');
    await releaseKafkaTest({ sink, admin, topic, tmp });
  });

  it('stops with exit 1 and one line naming the directory, instead of retrying forever', () => {
    expect(firstExit.code, first.lines.slice(-20).join('\n')).toBe(1);
    const errors = first.lines.filter((l) => l.startsWith('toolcanon: '));
    expect(errors).toHaveLength(1);
    expect(removedDataDirLines(db, 'toolcanon: the worker stopped: ')).toContain(errors[0]);
    expect(first.lines.some((l) => /^error: Stopping: ClickHouse insert failed and retrying cannot help .*those events are consumed again at the next start\.$/.test(l))).toBe(true);
    expect(first.lines.filter((l) => l.startsWith('warning: Retrying ClickHouse insert'))).toEqual([]);
    expect(first.lines.join('\n')).not.toMatch(/^\s+at /m);
    expect(first.summary()['clean_exit']).toBe(false);
  });

  it('commits no offset of an event it could not write', () => {
    // The second wave came after the removal: none of it was written, none of it is committed.
    for (const [p, committed] of committedAtExit) expect(committed, `partition ${p}`).toBeLessThanOrEqual(highAfterFirstWave.get(p) ?? 0n);
    expect(sumOffsets(committedAtExit)).toBeGreaterThan(0);
    expect(sumOffsets(committedAtExit)).toBeLessThanOrEqual(FIRST);
  });

  it('a restart consumes the uncommitted events again and stores each once: counts in = rows + dead letters', async () => {
    expect(secondExit.code, second.lines.slice(-10).join('\n')).toBe(0);
    const s = second.summary();
    const redelivered = FIRST + SECOND - sumOffsets(committedAtExit);
    expect(s['events_consumed']).toBe(redelivered);
    expect(Number(s['rows_written.tool_calls']) + Number(s['dead_letters'])).toBe(redelivered);
    expect(s['clean_exit']).toBe(true);
    const db = sink as ClickHouseSink;
    // Every record after the commit point is in the table, once.
    const sources = await db.queryRows<{ source: string; call_id: string }>('SELECT source, call_id FROM tool_calls FINAL');
    const after = sources.filter((r) => {
      const { partition, offset } = offsetOf(r.source);
      return offset >= (committedAtExit.get(partition) ?? 0n);
    });
    expect(after).toHaveLength(redelivered);
    expect(await countOf(db, 'SELECT count() - uniqExact(event_id) AS n FROM tool_calls FINAL')).toBe(0);
    const callIds = new Set(sources.map((r) => r.call_id));
    for (const id of events.callIds.slice(FIRST)) expect(callIds.has(id), id).toBe(true);
  });
});
