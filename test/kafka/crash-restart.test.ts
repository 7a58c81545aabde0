// Issue 3, test 3: a worker process killed with SIGKILL mid-stream (events buffered, some
// committed, some not) and started again: no event is missing and none is counted twice. On both
// engines with the same assertions (test/helpers/engines.ts): the workers write an embedded data
// directory, then a database of a ClickHouse server; the reference is one replay into an embedded
// data directory.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir } from '../helpers/db.ts';
import { forEachEngine } from '../helpers/engines.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import { writeFileSync } from 'node:fs';
import {
  committedOffsets,
  dumpHere,
  dumpInChild,
  runCli,
  type TableDump,
  generateEvents,
  keyedRecords,
  releaseKafkaTest,
  sendAll,
  sumOffsets,
  testClient,
  uniqueName,
  waitForAllCommitted,
  workerArgs,
  WorkerProcess,
} from '../helpers/worker.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/kafka/crash-restart.test.ts');

const EVENTS = 20_000;
const events = generateEvents('crash', EVENTS);

/** The same events replayed uninterrupted into an embedded data directory, for the accounting to compare with (once per file). */
let reference: Promise<TableDump> | undefined;
const referenceTmp = makeTempDir('crash-reference');
afterAll(() => referenceTmp.cleanup());
function replayReference(): Promise<TableDump> {
  reference ??= (async () => {
    const file = join(referenceTmp.dir, 'events.jsonl');
    writeFileSync(file, `${events.lines.join('\n')}\n`);
    const replayDb = join(referenceTmp.dir, 'replay-db');
    const replay = await runCli(['replay', file, '--db', replayDb, '--format', 'json']);
    if (replay.code !== 0) throw new Error(`replay failed (${replay.code}): ${replay.stderr}`);
    return dumpInChild(replayDb);
  })();
  return reference;
}

await forEachEngine('test/kafka/crash-restart.test.ts', (engine) => describe.skipIf(brokers === null)('SIGKILL mid-stream, then restart', () => {
  const topic = uniqueName('tc-crash');
  const group = uniqueName('g-crash');
  const tmp = makeTempDir('crash');
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let first: WorkerProcess;
  let second: WorkerProcess;
  let atKill: { committed: number; progress: Record<string, string> };
  let firstExit: { code: number | null; signal: NodeJS.Signals | null };
  let secondExit: { code: number | null; signal: NodeJS.Signals | null };
  let sink: ClickHouseSink | undefined;
  let fromReplay: TableDump;

  beforeAll(async () => {
    client = testClient(brokers ?? [], 'crash-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: 3 });
    await sendAll(client, topic, keyedRecords(events.lines));
    const database = await engine.database('crash');
    const db = database.flags;

    first = new WorkerProcess('first', workerArgs(brokers ?? [], topic, group, db));
    // Mid-stream: some batches committed, and events consumed since the last commit.
    const line = await first.waitForLine(/^Progress: .*committed=([1-9][0-9]{3,}) buffered=[1-9]/, 120_000);
    first.kill('SIGKILL');
    firstExit = await first.exited;
    atKill = { committed: sumOffsets(await committedOffsets(admin, group, topic)), progress: first.progress() ?? {} };
    void line;

    second = new WorkerProcess('second', workerArgs(brokers ?? [], topic, group, db));
    await waitForAllCommitted(admin, group, topic, 180_000);
    second.kill('SIGTERM');
    secondExit = await second.exited;
    fromReplay = await replayReference();
    sink = await engine.open(database);
  }, 300_000);

  // The sink is the engine's to close (forEachEngine's afterAll).
  afterAll(() => releaseKafkaTest({ sink: undefined, admin, topic, tmp }));

  it('kills the first worker mid-stream', () => {
    expect(firstExit.signal).toBe('SIGKILL');
    expect(atKill.committed).toBeGreaterThan(0);
    expect(atKill.committed).toBeLessThan(EVENTS);
    // It had consumed events past its last commit: they are lost to it and must be redelivered.
    expect(Number(atKill.progress['consumed'])).toBeGreaterThan(Number(atKill.progress['committed']));
  });

  it('restarts from the committed offsets and finishes', () => {
    expect(secondExit.code).toBe(0);
    const s = second.summary();
    expect(s['clean_exit']).toBe(true);
    // It re-read everything after the commit point, and nothing before it.
    expect(s['events_consumed']).toBe(EVENTS - atKill.committed);
  });

  it('has every event exactly once', async () => {
    const db = sink as ClickHouseSink;
    expect(await countOf(db, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(EVENTS);
    expect(await countOf(db, 'SELECT uniqExact(event_id) AS n FROM tool_calls')).toBe(EVENTS);
    const ids = await db.queryRows<{ call_id: string }>('SELECT call_id FROM tool_calls FINAL');
    expect(ids.map((r) => r.call_id).sort()).toEqual([...events.callIds].sort());
    // One row per Kafka record: no record stored under two offsets, none missing.
    expect(await countOf(db, 'SELECT uniqExact(source) AS n FROM tool_calls FINAL')).toBe(EVENTS);
    expect(await countOf(db, 'SELECT count() AS n FROM dead_letters FINAL')).toBe(0);
    // Plain SQL (no FINAL) counts each redelivered event once too: what the killed worker had
    // stored is not written again by the restarted one (issue 29 item 1).
    expect(await countOf(db, 'SELECT count() AS n FROM tool_calls')).toBe(EVENTS);
    for (const t of ['tool_calls', 'dead_letters', 'token_usage', 'threshold_breaches']) {
      const plain = await countOf(db, `SELECT count() AS n FROM ${t}`);
      expect({ table: t, plain }).toEqual({ table: t, plain: await countOf(db, `SELECT count() AS n FROM ${t} FINAL`) });
    }
  });

  it('applies each redelivered event to the accounting once: token_usage equals an uninterrupted run', async () => {
    const fromKafka = await dumpHere(sink as ClickHouseSink);
    // Whatever the killed worker had written but not committed was received again by the
    // restarted one and skipped as already applied (duplicates_skipped in its summary).
    for (const table of ['token_usage', 'threshold_breaches']) {
      expect(fromKafka.get(table)?.length, table).toBe(fromReplay.get(table)?.length);
      expect(fromKafka.get(table), table).toEqual(fromReplay.get(table));
    }
    expect(fromKafka.get('token_usage')?.length).toBe(EVENTS);
  });
}));
