// Issue 3, test 4: two worker processes in one group over a 6-partition topic share the
// partitions; one is killed (SIGKILL) mid-stream; the survivor takes its partitions over, reads
// its uncommitted records again and finishes. The union of what the two wrote is the input,
// exactly. On both engines with the same assertions (test/helpers/engines.ts): embedded
// ClickHouse, each worker with its own data directory (the check unions them), then one database
// of a ClickHouse server that both workers write (where plain count() must also hold each event
// once: the survivor does not write again what the killed worker had stored).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir } from '../helpers/db.ts';
import { type EngineDatabase, forEachEngine } from '../helpers/engines.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import {
  committedOffsets,
  generateEvents,
  keyedRecords,
  offsetOf,
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

/** One database's tool calls: call_id and Kafka origin of every row, plain (no FINAL). */
interface Stored {
  readonly rows: Array<{ call_id: string; source: string }>;
  readonly final: number;
}

const STORED_SQL = 'SELECT call_id, source FROM tool_calls';
const FINAL_SQL = 'SELECT count() AS n FROM tool_calls FINAL';

await forEachEngine('test/kafka/scale-out.test.ts', (engine) => describe.skipIf(brokers === null)('two workers in one group, one killed', () => {
  const topic = uniqueName('tc-scale');
  const group = uniqueName('g-scale');
  const tmp = makeTempDir('scale');
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
  let committedAtKill: Map<number, bigint>;
  /** What each database holds: embedded, A's and B's data directories; server, the one database both wrote. */
  let stored: Stored[];
  let sinkA: ClickHouseSink | undefined;

  beforeAll(async () => {
    client = testClient(brokers ?? [], 'scale-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: PARTITIONS });
    const dbA: EngineDatabase = await engine.database('scale-a');
    const dbB: EngineDatabase = engine.name === 'server' ? dbA : await engine.database('scale-b');

    a = new WorkerProcess('A', workerArgs(brokers ?? [], topic, group, dbA.flags));
    b = new WorkerProcess('B', workerArgs(brokers ?? [], topic, group, dbB.flags));
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
    committedAtKill = await committedOffsets(admin, group, topic);
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

    sinkA = await engine.open(dbA);
    stored = [{ rows: await sinkA.queryRows<{ call_id: string; source: string }>(STORED_SQL), final: await countOf(sinkA, FINAL_SQL) }];
    if (dbB !== dbA) {
      // B's directory is read by another process (this one has A's open).
      const query = async (sql: string): Promise<Record<string, string>[]> => {
        const r = await runCli(['query', ...dbB.flags, '--format', 'json', sql]);
        expect(r.code, r.stderr).toBe(0);
        return r.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, string>);
      };
      stored.push({ rows: (await query(STORED_SQL)) as Array<{ call_id: string; source: string }>, final: Number((await query(FINAL_SQL))[0]?.['n']) });
    }
  }, 400_000);

  afterAll(async () => {
    a?.kill('SIGKILL');
    b?.kill('SIGKILL');
    // The sink is the engine's to close (forEachEngine's afterAll).
    await releaseKafkaTest({ sink: undefined, admin, topic, tmp });
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

  it('what B committed before it died is stored, and A re-read the rest of B\'s partitions', () => {
    const rows = stored.flatMap((d) => d.rows).map((r) => ({ ...offsetOf(r.source), call_id: r.call_id }));
    const committedByB = split.b.reduce((n, p) => n + Number(committedAtKill.get(p) ?? 0n), 0);
    expect(committedByB).toBeGreaterThan(0);
    expect(rows.filter((r) => split.b.includes(r.partition) && r.offset < (committedAtKill.get(r.partition) ?? 0n)).length).toBe(committedByB);
    // A's summary counts the records of B's partitions it read again: more than its own share.
    const own = split.a.reduce((n, p) => n + rows.filter((r) => r.partition === p).length, 0);
    expect(Number(a.summary()['events_consumed'])).toBeGreaterThan(own);
    expect(rows.filter((r) => split.b.includes(r.partition) && r.offset >= (committedAtKill.get(r.partition) ?? 0n)).length).toBeGreaterThan(0);
  });

  it('the union of what A and B wrote is the input exactly; within a database each event once, plain count() included', async () => {
    const ids = stored.flatMap((d) => d.rows.map((r) => r.call_id));
    const union = new Set(ids);
    expect(union.size).toBe(EVENTS);
    expect([...union].sort()).toEqual([...events.callIds].sort());
    // Within one database nothing is stored twice: plain count() = FINAL count() = distinct ids.
    for (const d of stored) {
      expect(new Set(d.rows.map((r) => r.call_id)).size).toBe(d.rows.length);
      expect(d.final).toBe(d.rows.length);
    }
    expect(await countOf(sinkA as ClickHouseSink, 'SELECT count() AS n FROM dead_letters FINAL')).toBe(0);
  });
}));
