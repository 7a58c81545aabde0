// Issue 10, faults: the sink's embedded engine is closed while a batch is being written, in
// `replay` and in `consume`. Real CLI processes (close-engine-cli.mjs: the CLI with the sink's own
// close() called between a batch's dead-letter insert and its tool-call insert), a real engine, a
// real broker. Each run stops with one line naming the directory and exit 1, counts nothing of
// the unfinished batch, and a rerun stores exactly what one clean run stores: counts in = rows
// out + dead letters.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { makeTempDir } from '../helpers/db.ts';
import { cli, dumpAs, metrics, startCli, writeReplayInput, type CliRun } from '../helpers/faults.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import {
  BIN,
  committedOffsets,
  dumpInChild,
  generateEvents,
  keyedRecords,
  releaseKafkaTest,
  sendAll,
  sumOffsets,
  testClient,
  type TableDump,
  uniqueName,
  waitForAllCommitted,
  workerArgs,
  WorkerProcess,
} from '../helpers/worker.ts';

const CLOSING_CLI = [process.execPath, new URL('./close-engine-cli.mjs', import.meta.url).pathname];
const asIs = [process.execPath, BIN];
const tmp = makeTempDir('engine-closed');

function closedLine(db: string): string {
  return `the embedded engine of the data directory ${db} was closed while toolcanon was using it: nothing more was written, and what the unfinished batch wrote is not counted; run the command again (what a rerun writes twice is stored once)`;
}

/** Lines that are neither a stack trace nor the engine's own dump. */
function expectNoDump(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toMatch(/Code: \d+\. DB::/);
}

describe('replay: the engine is closed while a batch is written', () => {
  it('exit 1 with one line naming the directory; the rerun stores what a clean run stores', async () => {
    // 30,419 events: batch 1 (20,000) is stored; batch 2 holds the poison lines of c-poison.jsonl,
    // whose dead letters are inserted before the engine closes under its tool calls.
    const input = writeReplayInput(join(tmp.dir, 'in'), 30_000);
    const poison = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? `{"broken": ${i}` : `{"schema":"toolcanon.event/v1","type":"tool_call","n":${i}}`));
    writeFileSync(join(input, 'c-poison.jsonl'), `${poison.join('\n')}\n`);
    const clean = await cli(['replay', input, '--db', join(tmp.dir, 'replay-clean'), '--format', 'json', '--no-progress']);
    expect(clean.code, clean.stderr).toBe(0);
    const reference = await dumpAs(join(tmp.dir, 'replay-clean'), asIs, process.env);
    const total = metrics(clean.stdout)['events_read'] as number;

    const db = join(tmp.dir, 'replay-db');
    const env = { ...process.env, TOOLCANON_TEST_CLOSE_ENGINE_AT: '2' };
    const faulty = await cli(['replay', input, '--db', db, '--format', 'json', '--no-progress'], env, CLOSING_CLI);
    expect(faulty.code, faulty.stderr).toBe(1);
    const lines = faulty.stderr.trim().split('\n').filter((l) => !l.startsWith('Replaying '));
    expect(lines).toEqual([`toolcanon: ${closedLine(db)}`]);
    expectNoDump(faulty.stderr);
    expect(faulty.stdout).toBe(''); // no summary: nothing reported as written

    const again = await cli(['replay', input, '--db', db, '--format', 'json', '--no-progress']);
    expect(again.code, again.stderr).toBe(0);
    const m = metrics(again.stdout);
    expect(m['events_read']).toBe(total);
    expect((m['rows_written'] as number) + (m['dead_letters'] as number)).toBe(total);
    // The first batch was stored whole before the close, the second at most in part.
    const stored = m['events_already_stored'] as number;
    console.info(`[engine-closed] replay: ${stored} of ${total} event(s) were stored before the engine closed`);
    expect(stored).toBeGreaterThanOrEqual(20_000);
    expect(stored).toBeLessThan(total);
    expect(await dumpAs(db, asIs, process.env)).toEqual(reference);
  });
});

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/faults/engine-closed.test.ts');

describe.skipIf(brokers === null)('consume: the engine is closed while a batch is written', () => {
  const topic = uniqueName('tc-closed');
  const group = uniqueName('g-closed');
  const db = join(tmp.dir, 'consume-db');
  const generated = generateEvents('closed', 6_000);
  // A poison record every 150 events, so that every batch has dead letters to insert first.
  const lines = generated.lines.flatMap((l, i) => (i % 150 === 75 ? [l, `{"poison": ${i}`] : [l]));
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let faulty: CliRun;
  let faultyExit: { code: number | null; signal: NodeJS.Signals | null };
  let committedAtExit: Map<number, bigint>;
  let rerun: WorkerProcess;
  let reference: TableDump;

  beforeAll(async () => {
    client = testClient(brokers ?? [], 'engine-closed-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: 2 });
    await sendAll(client, topic, keyedRecords(lines));
    // What one clean run stores: the same lines replayed from a file.
    const file = join(tmp.dir, 'consume-lines.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const replay = await cli(['replay', file, '--db', join(tmp.dir, 'consume-clean'), '--format', 'json', '--no-progress']);
    expect(replay.code, replay.stderr).toBe(0);
    reference = await dumpInChild(join(tmp.dir, 'consume-clean'));

    // Batches of 1,000: two are written and committed, the engine closes under the third.
    const args = ['consume', ...workerArgs(brokers ?? [], topic, group, db, ['--batch-max-rows', '1000', '--batch-max-wait-ms', '5000'])];
    faulty = startCli(args, { ...process.env, TOOLCANON_TEST_CLOSE_ENGINE_AT: '3' }, CLOSING_CLI);
    faultyExit = await Promise.race([
      faulty.exited,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the worker did not stop within 90 s; stderr:\n${faulty.stderr.slice(-3000)}`)), 90_000)),
    ]);
    committedAtExit = await committedOffsets(admin, group, topic);

    rerun = new WorkerProcess('rerun', workerArgs(brokers ?? [], topic, group, db));
    await waitForAllCommitted(admin, group, topic, 180_000);
    rerun.kill('SIGTERM');
    await rerun.exited;
  }, 420_000);

  afterAll(async () => {
    faulty?.child.kill('SIGKILL');
    rerun?.kill('SIGKILL');
    await releaseKafkaTest({ sink: undefined, admin, topic, tmp });
  });

  it('stops with exit 1 and one line naming the directory, instead of retrying', () => {
    expect(faultyExit.code, faulty.stderr.slice(-3000)).toBe(1);
    const errors = faulty.stderr.split('\n').filter((l) => l.startsWith('toolcanon: '));
    expect(errors).toEqual([`toolcanon: the worker stopped: ${closedLine(db)}`]);
    expect(faulty.stderr).not.toContain('Retrying ClickHouse insert');
    expectNoDump(faulty.stderr);
  });

  it('counts nothing of the unfinished batch and commits only what it counted', () => {
    const m = metrics(faulty.stdout);
    expect(m['clean_exit']).toBe(0); // false
    const committed = sumOffsets(committedAtExit);
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThan(lines.length);
    expect(m['events_committed']).toBe(committed);
    expect((m['rows_written'] as number) + (m['dead_letters'] as number)).toBe(committed);
    expect(m['dlq_published']).toBe(m['dead_letters']);
  });

  it('the rerun consumes the rest and the tables equal one clean run: counts in = rows + dead letters', async () => {
    const s = rerun.summary();
    const rest = lines.length - sumOffsets(committedAtExit);
    expect(s['clean_exit']).toBe(true);
    expect(s['events_consumed']).toBe(rest);
    expect(Number(s['rows_written']) + Number(s['dead_letters'])).toBe(rest);
    const after = await dumpInChild(db);
    expect(after.get('tool_calls')).toHaveLength(generated.lines.length);
    expect(after.get('dead_letters')).toHaveLength(lines.length - generated.lines.length);
    expect(after).toEqual(reference);
  });
});

afterAll(() => tmp.cleanup());
