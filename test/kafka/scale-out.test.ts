// Issue 3, test 4: two worker processes in one group over a 6-partition topic share the
// partitions; one is killed (SIGKILL) mid-stream; the survivor takes its partitions over, reads
// its uncommitted records again and finishes. The union of what the two wrote is the input,
// exactly. (Embedded ClickHouse: each worker has its own data directory, and the check unions
// them; with a ClickHouse server they would share one.)
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir } from '../helpers/db.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import {
  committedOffsets,
  generateEvents,
  keyedRecords,
  parseFields,
  releaseKafkaTest,
  runCli,
  sendAll,
  sumOffsets,
  testClient,
  uniqueName,
  waitFor,
  waitForAllCommitted,
  workerArgs,
  WorkerProcess,
} from '../helpers/worker.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/kafka/scale-out.test.ts');

const EVENTS = 48_000;
const PARTITIONS = 6;

function joinedPartitions(w: WorkerProcess): number[] | undefined {
  const line = [...w.lines].reverse().find((l) => l.startsWith('Joined group'));
  const m = line === undefined ? null : /partitions ([0-9,]+|none) of/.exec(line);
  if (!m || m[1] === 'none') return undefined;
  return (m[1] as string).split(',').map(Number);
}

describe.skipIf(brokers === null)('two workers in one group, one killed', () => {
  const topic = uniqueName('tc-scale');
  const group = uniqueName('g-scale');
  const tmp = makeTempDir('scale');
  const dbA = join(tmp.dir, 'db-a');
  const dbB = join(tmp.dir, 'db-b');
  const events = generateEvents('scale', EVENTS, 60);
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let a: WorkerProcess;
  let b: WorkerProcess;
  let split: { a: number[]; b: number[] };
  let atKill: number;
  /** B's partitions with records left uncommitted when it died. */
  let bUnfinished: number[];
  let takeover: number[] | undefined;
  let aExit: { code: number | null; signal: NodeJS.Signals | null };
  let bExit: { code: number | null; signal: NodeJS.Signals | null };
  let idsA: string[];
  let idsB: string[];
  let sinkA: ClickHouseSink | undefined;

  beforeAll(async () => {
    client = testClient(brokers ?? [], 'scale-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: PARTITIONS });

    a = new WorkerProcess('A', workerArgs(brokers ?? [], topic, group, dbA));
    b = new WorkerProcess('B', workerArgs(brokers ?? [], topic, group, dbB));
    // Both members hold partitions, then B has written and committed some of its share.
    split = await waitFor('the partitions to be split between A and B', () => {
      const pa = joinedPartitions(a);
      const pb = joinedPartitions(b);
      return pa && pb && pa.length + pb.length === PARTITIONS ? { a: pa, b: pb } : undefined;
    }, 120_000);
    // The events go in once both members hold partitions: a worker alone from the start would
    // take the whole topic (it is faster than the test's polling) before the other one joins.
    await sendAll(client, topic, keyedRecords(events.lines));
    await waitFor('B to commit some of its partitions', () => {
      const p = b.progress();
      return p && Number(p['committed']) >= 2_000 && Number(p['buffered']) > 0 ? true : undefined;
    }, 120_000, 50);
    b.kill('SIGKILL');
    bExit = await b.exited;
    const committedAtKill = await committedOffsets(admin, group, topic);
    atKill = sumOffsets(committedAtKill);
    const highs = await admin.highWatermarks(topic);
    bUnfinished = split.b.filter((p) => (committedAtKill.get(p) ?? 0n) < (highs.get(p) ?? 0n));

    // A takes B's partitions once the group coordinator has expired B's session.
    takeover = await waitFor('A to be assigned all partitions', () => {
      const pa = joinedPartitions(a);
      return pa && pa.length === PARTITIONS ? pa : undefined;
    }, 120_000);
    await waitForAllCommitted(admin, group, topic, 180_000);
    a.kill('SIGTERM');
    aExit = await a.exited;

    // B's directory is read by another process (this one opens A's).
    const dumpB = await runCli(['query', '--db', dbB, '--format', 'json', 'SELECT call_id FROM tool_calls FINAL']);
    expect(dumpB.code, dumpB.stderr).toBe(0);
    idsB = dumpB.stdout.split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { call_id: string }).call_id);
    sinkA = await ClickHouseSink.open({ db: dbA });
    idsA = (await sinkA.queryRows<{ call_id: string }>('SELECT call_id FROM tool_calls FINAL')).map((r) => r.call_id);
  }, 400_000);

  afterAll(async () => {
    a?.kill('SIGKILL');
    b?.kill('SIGKILL');
    await releaseKafkaTest({ sink: sinkA, admin, topic, tmp });
  });

  it('splits the six partitions between the two workers', () => {
    expect([...split.a, ...split.b].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(split.a.length).toBeGreaterThan(0);
    expect(split.b.length).toBeGreaterThan(0);
  });

  it('kills B mid-stream; A takes over all partitions and finishes cleanly', () => {
    expect(bExit.signal).toBe('SIGKILL');
    expect(atKill).toBeLessThan(EVENTS);
    expect(bUnfinished.length).toBeGreaterThan(0);
    expect(takeover).toEqual([0, 1, 2, 3, 4, 5]);
    expect(aExit.code).toBe(0);
    expect(a.summary()['clean_exit']).toBe(true);
    const last = parseFields([...a.lines].reverse().find((l) => l.startsWith('Stopped:')) ?? '');
    expect(last['buffered']).toBe('0');
  });

  it('B wrote part of the input before it died', () => {
    expect(idsB.length).toBeGreaterThan(0);
    expect(idsB.length).toBeLessThan(EVENTS);
  });

  it('the union of what A and B wrote is the input exactly', async () => {
    const union = new Set([...idsA, ...idsB]);
    expect(union.size).toBe(EVENTS);
    expect([...union].sort()).toEqual([...events.callIds].sort());
    // Within one data directory nothing is counted twice.
    expect(new Set(idsA).size).toBe(idsA.length);
    expect(new Set(idsB).size).toBe(idsB.length);
    // A's rows include records of B's former partitions: the take-over happened in the data too.
    const taken = await countOf(sinkA as ClickHouseSink, `SELECT count() AS n FROM tool_calls FINAL WHERE toUInt32(splitByChar('/', source)[2]) IN (${split.b.join(',')})`);
    expect(taken).toBeGreaterThan(0);
    expect(await countOf(sinkA as ClickHouseSink, 'SELECT count() AS n FROM dead_letters FINAL')).toBe(0);
  });
});
