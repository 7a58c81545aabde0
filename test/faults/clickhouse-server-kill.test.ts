// Issue 34 item 2, faults on a real ClickHouse server: the engine process of a server of this
// test's own (scripts/clickhouse.sh with CLICKHOUSE_STATE_DIR and a free port: killing the shared
// test server would break the test files running beside this one) is killed with SIGKILL while
// `toolcanon replay --clickhouse` is writing into it, after the server has stored part of the
// input. The replay fails with one line and no stack; the server, started again on the same data,
// holds only whole rows of what was sent (nothing written twice: plain count() = FINAL count());
// a rerun says what was already there, and its tables equal a clean run's, table for table.
// Then the server is stopped cleanly and started again between two commands: the data is back
// and a report reads it as before. Last, a Kafka consume worker writing into the server while
// its engine is killed and started again: it commits nothing while the server is gone, then
// writes every event once (plain count() = FINAL count()) and commits them all.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { ANALYTICS_TABLE_NAMES, ClickHouseSink } from '../../src/sink/clickhouse.ts';
import type { StreamWorker } from '../../src/worker/worker.ts';
import { serverQuery } from '../helpers/clickhouse-server.ts';
import { makeTempDir } from '../helpers/db.ts';
import { cliEnv } from '../helpers/engines.ts';
import { cli, metrics, startCli, writeReplayInput } from '../helpers/faults.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import {
  committedOffsets,
  DUMP_SQL,
  generateEvents,
  keyedRecords,
  ROOT,
  sendAll,
  startInProcessWorker,
  sumOffsets,
  testClient,
  uniqueName,
  waitFor,
  waitForAllCommitted,
} from '../helpers/worker.ts';

const SUITE = 'test/faults/clickhouse-server-kill.test.ts';
const GENERATED = 32_000;
const tmp = makeTempDir('server-kill');
const stateDir = mkdtempSync(join(tmpdir(), 'toolcanon-server-kill-state-'));
const ENV = cliEnv();

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

interface Script {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

const PORT = String(await freePort());
function script(command: 'start' | 'stop'): Promise<Script> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    execFile('bash', [join(ROOT, 'scripts/clickhouse.sh'), command], { cwd: ROOT, timeout: 120_000, encoding: 'utf8', env: { ...process.env, CLICKHOUSE_STATE_DIR: stateDir, CLICKHOUSE_HTTP_PORT: PORT } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}
const field = (out: string, name: string): string | undefined =>
  out
    .split('\n')
    .find((l) => l.startsWith(`${name}=`))
    ?.slice(name.length + 1)
    .trim();

/** This test's own server: its URL and engine pid, or why it could not start (a skip; an error under CI=true). */
async function startOwnServer(): Promise<{ url: string; enginePid: number } | { skip: string }> {
  const r = await script('start');
  const url = field(r.stdout, 'CLICKHOUSE_URL');
  const pid = Number(field(r.stdout, 'CLICKHOUSE_ENGINE_PID'));
  if (r.code !== 0 || url === undefined || !Number.isInteger(pid)) return { skip: `CLICKHOUSE_STATE_DIR=${stateDir} CLICKHOUSE_HTTP_PORT=${PORT} bash scripts/clickhouse.sh start failed (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-5).join(' | ')}` };
  return { url, enginePid: pid };
}

const first = await startOwnServer();
if ('skip' in first) {
  if (process.env['CI'] === 'true') throw new Error(`${SUITE} cannot run under CI=true: ${first.skip}`);
  const bar = '!'.repeat(78);
  console.warn(`\n${bar}\n!! SKIPPING ${SUITE}: ${first.skip}\n${bar}\n`);
}

afterAll(async () => {
  await script('stop');
  rmSync(stateDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  tmp.cleanup();
});

function jsonLines<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

/** Every analytics table of a database on the server, as the other sink tests compare them. */
async function dump(url: string): Promise<Map<string, string[]>> {
  const r = await cli(['query', '--clickhouse', url, '--format', 'json', DUMP_SQL], ENV);
  expect(r.code, r.stderr).toBe(0);
  const out = new Map<string, string[]>(ANALYTICS_TABLE_NAMES.map((t) => [t, []]));
  for (const { t, r: row } of jsonLines<{ t: string; r: string }>(r.stdout)) out.get(t)?.push(row);
  for (const rows of out.values()) rows.sort();
  return out;
}

/** Input events a dump holds: tool calls, observed usage, MCP events, dead letters. */
function storedEvents(d: Map<string, string[]>): number {
  const observed = (d.get('token_usage') ?? []).filter((r) => (JSON.parse(r) as { source: string }).source === 'observed').length;
  return (d.get('tool_calls') ?? []).length + observed + (d.get('mcp_events') ?? []).length + (d.get('dead_letters') ?? []).length;
}

/** Per table: plain count() and FINAL count() on the server. */
async function plainAndFinal(url: string): Promise<Array<{ table: string; plain: number; final: number }>> {
  const sql = ANALYTICS_TABLE_NAMES.map((t) => `SELECT '${t}' AS table, (SELECT count() FROM ${t}) AS plain, count() AS final FROM ${t} FINAL`).join(' UNION ALL ');
  return jsonLines<{ table: string; plain: string; final: string }>(await serverQuery(url, `${sql} FORMAT JSONEachRow`))
    .map((r) => ({ table: r.table, plain: Number(r.plain), final: Number(r.final) }))
    .sort((a, b) => a.table.localeCompare(b.table));
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf('skip' in first)('a ClickHouse server killed (SIGKILL) under a replay, then started again', () => {
  const own = first as { url: string; enginePid: number };
  const input = writeReplayInput(join(tmp.dir, 'in'), GENERATED);
  const cleanUrl = `${own.url}/tc_clean`;
  const killedUrl = `${own.url}/tc_killed`;
  const args = (url: string): string[] => ['replay', input, '--clickhouse', url, '--format', 'json', '--no-progress'];
  let clean: Record<string, number>;
  let reference: Map<string, string[]>;

  beforeAll(async () => {
    const r = await cli(args(cleanUrl), ENV);
    expect(r.code, r.stderr).toBe(0);
    clean = metrics(r.stdout);
    expect(clean['events_read']).toBeGreaterThan(GENERATED);
    reference = await dump(cleanUrl);
  });

  it('the replay fails with one line; after a restart the server holds part of the input, each row once; a rerun completes it to the clean run\'s tables', async () => {
    const killed = startCli(args(killedUrl), ENV);
    // token_usage is a batch's last insert: once the server has rows in it, a batch is stored.
    await waitFor('the first stored batch on the server', async () => {
      const n = Number((await serverQuery(killedUrl, 'SELECT count() FROM token_usage')).trim());
      return n > 0 ? n : undefined;
    }, 60_000, 20);
    const killedAt = Date.now();
    process.kill(own.enginePid, 'SIGKILL');
    const exit = await killed.exited;
    const failedAfterMs = Date.now() - killedAt;
    console.log(`[${SUITE}] engine killed; replay exited ${String(exit.code)} after ${failedAfterMs} ms:\n${killed.stderr.trim()}`);
    expect(exit.code, killed.stdout).toBe(1);
    // Its own lines (the database it created, what it replays), then the failure: one line.
    const lines = killed.stderr.trim().split('\n').filter((l) => !/^toolcanon: created the database |^Replaying /.test(l));
    expect(lines, killed.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^toolcanon: .*ClickHouse server at 127\.0\.0\.1:\d+/);
    expect(killed.stderr).not.toMatch(/\n\s+at /);
    expect(failedAfterMs).toBeLessThan(30_000);
    await waitFor('the engine process to be gone', () => (processAlive(own.enginePid) ? undefined : true), 10_000, 50);

    const restarted = await script('start');
    expect(restarted.code, restarted.stderr).toBe(0);
    own.enginePid = Number(field(restarted.stdout, 'CLICKHOUSE_ENGINE_PID'));
    console.log(`[${SUITE}] server started again on the same data in ${restarted.ms} ms`);

    // What the server kept: only whole rows, each once, of part of the input.
    const left = await dump(killedUrl);
    const storedBefore = storedEvents(left);
    const total = clean['events_read'] as number;
    console.log(`[${SUITE}] after the restart the server held ${storedBefore} of the ${total} events`);
    expect(storedBefore).toBeGreaterThan(0);
    expect(storedBefore, 'the kill came after the whole input was stored: make the input bigger').toBeLessThan(total);
    for (const [table, rows] of left) for (const row of rows) expect(reference.get(table), `${table}: a row the clean run does not have`).toContain(row);
    for (const c of await plainAndFinal(killedUrl)) expect({ table: c.table, plain: c.plain }).toEqual({ table: c.table, plain: c.final });

    const again = await cli(args(killedUrl), ENV);
    expect(again.code, again.stderr).toBe(0);
    const m = metrics(again.stdout);
    expect(m['events_read']).toBe(total);
    expect((m['rows_written'] as number) + (m['dead_letters'] as number)).toBe(total);
    expect(m['events_already_stored']).toBe(storedBefore);

    const after = await dump(killedUrl);
    for (const [table, rows] of reference) expect({ table, rows: after.get(table) }).toEqual({ table, rows });
    expect(reference.get('tool_calls')!.length).toBeGreaterThan(GENERATED);
    expect(reference.get('threshold_breaches')!.length).toBeGreaterThan(0);
    // Nothing written twice by the killed run and its rerun together.
    expect(await plainAndFinal(killedUrl)).toEqual(await plainAndFinal(cleanUrl));
  });

  it('stopped cleanly and started again between two commands: the tables are back and a report reads them as before', async () => {
    own.enginePid = Number(field((await script('start')).stdout, 'CLICKHOUSE_ENGINE_PID')); // running, whatever the test before did
    const before = await cli(['report', 'tools', '--clickhouse', cleanUrl, '--format', 'json'], ENV);
    expect(before.code, before.stderr).toBe(0);
    const stopped = await script('stop');
    expect(stopped.code, stopped.stderr).toBe(0);
    const down = await cli(['report', 'tools', '--clickhouse', cleanUrl], ENV);
    expect(down.code).toBe(1);
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
    expect(down.stderr).toMatch(/cannot reach the ClickHouse server at 127\.0\.0\.1:\d+ \(connection refused/);
    const started = await script('start');
    expect(started.code, started.stderr).toBe(0);
    own.enginePid = Number(field(started.stdout, 'CLICKHOUSE_ENGINE_PID'));
    console.log(`[${SUITE}] clean stop in ${stopped.ms} ms, start in ${started.ms} ms`);
    const afterRestart = await cli(['report', 'tools', '--clickhouse', cleanUrl, '--format', 'json'], ENV);
    expect(afterRestart.code, afterRestart.stderr).toBe(0);
    expect(afterRestart.stdout).toBe(before.stdout);
    expect(await dump(cleanUrl)).toEqual(reference);
  });
});

const brokers = 'skip' in first ? null : requireKafkaOrSkip(await ensureKafka(), `${SUITE} (Kafka worker)`);

describe.skipIf('skip' in first || brokers === null)('a Kafka consume worker writing into a ClickHouse server that is killed and started again', () => {
  const own = first as { url: string; enginePid: number };
  const BEFORE = 1_000;
  const DURING = 3_000;
  const events = generateEvents('server-kill', BEFORE + DURING);
  const topic = uniqueName('tc-server-kill');
  const group = uniqueName('g-server-kill');
  const url = `${own.url}/tc_worker`;
  let client: KafkaClient | undefined;
  let admin: KafkaAdmin | undefined;
  let sink: ClickHouseSink | undefined;
  let worker: StreamWorker | undefined;

  afterAll(async () => {
    await worker?.stop('test done').catch(() => undefined);
    await sink?.close().catch(() => undefined);
    await admin?.deleteTopics([topic, `${topic}.dlq`]).catch(() => undefined);
    await admin?.disconnect();
  });

  it('commits nothing while the server is gone; after its restart every event is stored once and committed', async () => {
    own.enginePid = Number(field((await script('start')).stdout, 'CLICKHOUSE_ENGINE_PID'));
    client = testClient(brokers ?? [], 'server-kill-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: 2 });
    sink = await ClickHouseSink.open({ clickhouseUrl: url });
    const started = await startInProcessWorker(brokers ?? [], topic, group, sink, ['--batch-max-rows', '500', '--retry-initial-ms', '200', '--retry-max-ms', '1000']);
    worker = started.worker;
    const records = keyedRecords(events.lines);
    await sendAll(client, topic, records.slice(0, BEFORE));
    await waitForAllCommitted(admin, group, topic);
    expect(sumOffsets(await committedOffsets(admin, group, topic))).toBe(BEFORE);

    process.kill(own.enginePid, 'SIGKILL');
    await waitFor('the engine process to be gone', () => (processAlive(own.enginePid) ? undefined : true), 10_000, 50);
    await sendAll(client, topic, records.slice(BEFORE));
    const w = worker;
    await waitFor('the worker to fail a flush', () => (w.status().failing !== undefined ? true : undefined), 30_000, 50);
    const committedWhileDown: number[] = [];
    for (let i = 0; i < 8; i++) {
      committedWhileDown.push(sumOffsets(await committedOffsets(admin, group, topic)));
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(new Set(committedWhileDown)).toEqual(new Set([BEFORE]));

    const restarted = await script('start');
    expect(restarted.code, restarted.stderr).toBe(0);
    own.enginePid = Number(field(restarted.stdout, 'CLICKHOUSE_ENGINE_PID'));
    const t0 = Date.now();
    await waitForAllCommitted(admin, group, topic, 90_000);
    console.log(`[${SUITE}] worker: ${w.status().stats.flushFailures} failed flush(es) while the server was down; all committed ${Date.now() - t0} ms after the restart`);
    const summary = await w.stop('test done');
    worker = undefined;
    expect(summary.clean).toBe(true);
    expect(started.logs.some((l) => /recovered after \d+ failed attempt/.test(l))).toBe(true);
    const count = async (sql: string): Promise<number> => Number((await serverQuery(url, sql)).trim());
    expect(await count('SELECT count() FROM tool_calls FINAL')).toBe(BEFORE + DURING);
    expect(await count('SELECT count() FROM tool_calls')).toBe(BEFORE + DURING);
    const ids = (await serverQuery(url, 'SELECT call_id FROM tool_calls FINAL ORDER BY call_id')).trim().split('\n');
    expect(ids).toEqual([...events.callIds].sort());
    expect(sumOffsets(await committedOffsets(admin, group, topic))).toBe(BEFORE + DURING);
  });
});
