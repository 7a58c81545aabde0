// Issue 34 item 3: the fleet end to end, on the real parts. Two machines (two HOME folders, each
// with its harnesses' logs where the harnesses keep them, test/fleet/homes.ts; laptop-a names
// itself with --host/--device-id, desk-b through $TOOLCANON_HOST/$TOOLCANON_DEVICE_ID) publish
// their logs with `toolcanon import <harness> --to-kafka` into one topic; two `toolcanon consume`
// processes in one consumer group write into one database of a real ClickHouse server
// ($TOOLCANON_TEST_CLICKHOUSE_URL, a fresh database). One worker is SIGKILLed mid-run with records
// of its partitions uncommitted; the other takes its partitions over and finishes.
//
// At the end the server's tables equal an import of both homes into one embedded database, table
// for table and row for row (apart from where and when a row was ingested), with plain count()
// (no FINAL) equal to FINAL count() in every table: nothing written twice by the take-over.
// Dead letters included: the decoder's (an input nested deeper than --max-depth) are rows on
// both sides; the raw record an importer could not read is a dead_letters row of the local
// import and, from --to-kafka, a record of <topic>.dlq with the same bytes. Nothing lost: every
// record of the topic is exactly one row's or dead letter's origin on the server.
//
// The third machine, publishing through `toolcanon watch --to-kafka` while its log is appended:
// test/fleet/watch-to-kafka.e2e.test.ts.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { ANALYTICS_TABLE_NAMES, ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { createTestDatabase, dropTestDatabase } from '../helpers/clickhouse-server.ts';
import { makeTempDir } from '../helpers/db.ts';
import { engineServer } from '../helpers/engines.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import {
  BIN,
  committedOffsets,
  DLQ_TOPIC_HEADERS,
  dumpHere,
  dumpInChild,
  parseFields,
  readTopic,
  type ReadRecord,
  ROOT,
  type TableDump,
  testClient,
  uniqueName,
  waitFor,
  waitForAllCommitted,
  workerArgs,
  WorkerProcess,
} from '../helpers/worker.ts';
import { machineEnv, TORN_LINE, writeHomes, type Machine } from './homes.ts';

const SUITE = 'test/fleet/fleet.e2e.test.ts';
const brokers = requireKafkaOrSkip(await ensureKafka(), SUITE);
const server = await engineServer(SUITE);

const PARTITIONS = 6;
/** Generated sessions per machine, and their size: ~15 000 events in all. */
const SESSIONS = 6;
const BYTES_PER_SESSION = 1_000_000;

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly metrics: Record<string, number>;
}

function toolcanon(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env, timeout: 180_000, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      const metrics: Record<string, number> = {};
      for (const l of stdout.split('\n')) if (l.startsWith('{')) {
        const row = JSON.parse(l) as { metric: string; value: number };
        metrics[row.metric] = row.value;
      }
      resolve({ code, stdout, stderr, metrics });
    });
  });
}

/** A dumped dead letter with the machine `import --to-kafka` splices in front of its raw bytes taken out. */
function withoutSplicedMachine(row: string): Record<string, unknown> {
  const r = JSON.parse(row) as Record<string, unknown>;
  const raw = Buffer.from(String(r['raw_hex']), 'hex').toString('utf8').replace(/^\{"host":"(?:[^"\\]|\\.)*","device_id":"(?:[^"\\]|\\.)*",/, '{');
  return { ...r, raw_hex: Buffer.from(raw, 'utf8').toString('hex').toUpperCase(), raw_bytes: String(Buffer.byteLength(raw)) };
}

function joinedPartitions(w: WorkerProcess): number[] | undefined {
  const line = [...w.lines].reverse().find((l) => l.startsWith('Joined group'));
  const m = line === undefined ? null : /partitions ([0-9,]+|none) of/.exec(line);
  if (!m || m[1] === 'none') return undefined;
  return (m[1] as string).split(',').map(Number);
}

describe.skipIf(brokers === null || server === null)('the fleet: two machines → import --to-kafka → two workers (one killed) → one ClickHouse server', () => {
  const topic = uniqueName('tc-fleet');
  const group = uniqueName('g-fleet');
  const tmp = makeTempDir('fleet');
  const homes = writeHomes(tmp.dir, { sessions: SESSIONS, bytesPerSession: BYTES_PER_SESSION });
  const referenceDb = join(tmp.dir, 'reference-db');
  let url: string;
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let sink: ClickHouseSink;
  let a: WorkerProcess;
  let b: WorkerProcess;
  let split: { a: number[]; b: number[] };
  let bUnfinished: number[];
  let committedAtKill: number;
  let takeover: number[] | undefined;
  let bExit: { code: number | null; signal: NodeJS.Signals | null };
  let aExit: { code: number | null; signal: NodeJS.Signals | null };
  const published: Array<{ machine: Machine; importer: string; result: CliResult }> = [];
  const imported: Array<{ machine: Machine; importer: string; result: CliResult }> = [];
  let onTopic: number;
  let dlq: ReadRecord[];
  let fromServer: TableDump;
  let fromReference: TableDump;

  beforeAll(async () => {
    url = await createTestDatabase('fleet');
    client = testClient(brokers ?? [], 'fleet-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: PARTITIONS });

    // Two workers in one group, both holding partitions before any record arrives (a worker
    // alone from the start would take the whole topic before the other joined).
    const sinkFlags = ['--clickhouse', url];
    a = new WorkerProcess('A', workerArgs(brokers ?? [], topic, group, sinkFlags, ['--batch-max-rows', '500']));
    b = new WorkerProcess('B', workerArgs(brokers ?? [], topic, group, sinkFlags, ['--batch-max-rows', '500']));
    split = await waitFor('the partitions to be split between A and B', () => {
      const pa = joinedPartitions(a);
      const pb = joinedPartitions(b);
      return pa && pb && pa.length + pb.length === PARTITIONS ? { a: pa, b: pb } : undefined;
    }, 120_000);

    // Each machine publishes its logs, harness by harness, as it would from cron. B is killed
    // once it has committed part of its share with more of it still to come.
    const kill = (async () => {
      await waitFor('B to commit part of its partitions', () => {
        const p = b.progress();
        return p && Number(p['committed']) >= 1_000 && Number(p['buffered']) > 0 ? true : undefined;
      }, 180_000, 20);
      b.kill('SIGKILL');
      bExit = await b.exited;
      const committed = await committedOffsets(admin, group, topic);
      committedAtKill = [...committed.values()].reduce((n, v) => n + Number(v), 0);
      const highs = await admin.highWatermarks(topic);
      bUnfinished = split.b.filter((p) => (committed.get(p) ?? 0n) < (highs.get(p) ?? 0n));
    })();
    for (const machine of homes.machines) {
      for (const importer of machine.importers) {
        const result = await toolcanon(['import', importer, '--to-kafka', '--brokers', (brokers ?? []).join(','), '--topic', topic, ...machine.flags, '--format', 'json'], machineEnv(machine));
        published.push({ machine, importer, result });
      }
    }
    await kill;

    // The survivor takes B's partitions over once the coordinator expired B's session.
    takeover = await waitFor('A to be assigned all partitions', () => {
      const pa = joinedPartitions(a);
      return pa && pa.length === PARTITIONS ? pa : undefined;
    }, 120_000);
    await waitForAllCommitted(admin, group, topic, 180_000);
    a.kill('SIGTERM');
    aExit = await a.exited;

    // The reference: both homes imported into one embedded database, the same flags.
    for (const machine of homes.machines) {
      for (const importer of machine.importers) {
        const result = await toolcanon(['import', importer, '--db', referenceDb, '--allow-dead-letters', ...machine.flags, '--format', 'json'], machineEnv(machine));
        imported.push({ machine, importer, result });
      }
    }
    onTopic = [...(await admin.highWatermarks(topic)).values()].reduce((n, v) => n + Number(v), 0);
    dlq = await readTopic(client, `${topic}.dlq`, homes.malformed + 1);
    sink = await ClickHouseSink.open({ clickhouseUrl: url });
    fromServer = await dumpHere(sink);
    fromReference = await dumpInChild(referenceDb);
  }, 600_000);

  afterAll(async () => {
    a?.kill('SIGKILL');
    b?.kill('SIGKILL');
    await sink?.close();
    await admin?.deleteTopics([topic, `${topic}.dlq`]).catch(() => undefined);
    await admin?.disconnect();
    if (url !== undefined) await dropTestDatabase(url);
    tmp.cleanup();
  });

  it('publishes each machine\'s logs: every event read is on the topic, the unreadable record on the dead-letter topic', () => {
    for (const { machine, importer, result } of published) {
      expect({ machine: machine.host, importer, code: result.code, stderr: result.stderr.split('\n').filter((l) => l.startsWith('toolcanon:')) }).toEqual({ machine: machine.host, importer, code: 0, stderr: [] });
      expect(result.metrics['events_emitted'], `${machine.host} ${importer}`).toBeGreaterThan(0);
      expect(result.metrics['records_published'], `${machine.host} ${importer}`).toBe(result.metrics['events_emitted']);
    }
    const sum = (metric: string): number => published.reduce((n, p) => n + (p.result.metrics[metric] ?? 0), 0);
    expect(sum('records_published')).toBe(onTopic);
    expect(sum('malformed_records')).toBe(homes.malformed);
    expect(sum('dead_lettered.import_malformed')).toBe(homes.malformed);
    expect(onTopic).toBeGreaterThan(10_000);
  });

  it('splits the partitions between the two workers; B is killed with records of its partitions uncommitted; A takes them over and exits cleanly', () => {
    expect([...split.a, ...split.b].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(split.a.length).toBeGreaterThan(0);
    expect(split.b.length).toBeGreaterThan(0);
    expect(bExit.signal).toBe('SIGKILL');
    expect(committedAtKill).toBeGreaterThan(0);
    expect(committedAtKill).toBeLessThan(onTopic);
    expect(bUnfinished.length).toBeGreaterThan(0);
    expect(takeover).toEqual([0, 1, 2, 3, 4, 5]);
    expect(aExit.code).toBe(0);
    expect(a.summary()['clean_exit']).toBe(true);
    const last = parseFields([...a.lines].reverse().find((l) => l.startsWith('Stopped:')) ?? '');
    expect(last['buffered']).toBe('0');
  });

  it('the reference import reads the same events', () => {
    for (const { machine, importer, result } of imported) expect({ machine: machine.host, importer, code: result.code }).toEqual({ machine: machine.host, importer, code: 0 });
    const emitted = (list: typeof published): number => list.reduce((n, p) => n + (p.result.metrics['events_emitted'] ?? 0), 0);
    expect(emitted(imported)).toBe(emitted(published));
    expect(imported.reduce((n, p) => n + (p.result.metrics['dead_letters.import_malformed'] ?? 0), 0)).toBe(homes.malformed);
  });

  it.each(ANALYTICS_TABLE_NAMES.filter((t) => t !== 'dead_letters'))('table %s on the server equals the import of both homes into one embedded database', (table) => {
    const got = fromServer.get(table) ?? [];
    const want = fromReference.get(table) ?? [];
    expect(got.length).toBe(want.length);
    expect(got).toEqual(want);
    if (['tool_calls', 'token_usage', 'discovery_events'].includes(table)) expect(got.length).toBeGreaterThan(0);
  });

  it('dead letters: the decoder\'s are rows on both sides; the record no importer could read is the local import\'s row and, from --to-kafka, a record of the dead-letter topic with the same bytes', () => {
    const reason = (row: string): string => (JSON.parse(row) as { reason: string }).reason;
    const reference = fromReference.get('dead_letters') ?? [];
    const got = fromServer.get('dead_letters') ?? [];
    expect(got.map(reason)).toEqual(['too_deep']);
    // Published events carry the machine spliced in front (the rest byte for byte): the dead
    // letter's raw bytes are the imported line's with that prefix, and its machine is read from it.
    expect(got.map(withoutSplicedMachine)).toEqual(reference.filter((r) => reason(r) !== 'import_malformed').map(withoutSplicedMachine));
    expect(got.map((r) => Buffer.from((JSON.parse(r) as { raw_hex: string }).raw_hex, 'hex').toString('utf8').startsWith('{"host":"desk-b","device_id":"dev-desk-b","schema":'))).toEqual([true]);
    expect(got.map((r) => (JSON.parse(r) as { host: string }).host)).toEqual(['desk-b']);
    const malformed = reference.filter((r) => reason(r) === 'import_malformed').map((r) => JSON.parse(r) as { raw_hex: string; host: string; device_id: string });
    expect(malformed).toHaveLength(homes.malformed);
    // The worker published its dead letter to the DLQ topic as well (at least once: a worker
    // killed between the publish and the commit leaves it to the next, which publishes it again),
    // one input each: the import's by file:line, the worker's by its topic position.
    const byReason = new Map<string, ReadRecord[]>();
    for (const r of dlq) byReason.set(String(r.headers[DLQ_TOPIC_HEADERS.reason]), [...(byReason.get(String(r.headers[DLQ_TOPIC_HEADERS.reason])) ?? []), r]);
    expect([...byReason.keys()].sort()).toEqual(['import_malformed', 'too_deep']);
    expect(byReason.get('import_malformed')).toHaveLength(homes.malformed);
    const deep = byReason.get('too_deep') ?? [];
    expect(new Set(deep.map((r) => `${String(r.headers[DLQ_TOPIC_HEADERS.originPartition])}/${String(r.headers[DLQ_TOPIC_HEADERS.originOffset])}`)).size).toBe(1);
    expect(String(deep[0]?.headers[DLQ_TOPIC_HEADERS.originTopic])).toBe(topic);
    const torn = byReason.get('import_malformed')?.[0];
    expect(torn?.value?.toString('utf8')).toBe(TORN_LINE);
    expect(torn?.value?.toString('hex').toUpperCase()).toBe(malformed[0]?.raw_hex);
    expect(String(torn?.headers['toolcanon.origin.host'])).toBe(malformed[0]?.host);
    expect(String(torn?.headers['toolcanon.origin.device_id'])).toBe(malformed[0]?.device_id);
  });

  it('plain count() equals FINAL count() and the reference in every table: the take-over wrote nothing twice', async () => {
    const reference = await toolcanon(['query', '--db', referenceDb, '--format', 'json', ANALYTICS_TABLE_NAMES.map((t) => `SELECT '${t}' AS t, count() AS n FROM ${t} FINAL`).join(' UNION ALL ')], { PATH: process.env['PATH'], HOME: tmp.dir });
    expect(reference.code, reference.stderr).toBe(0);
    const want = Object.fromEntries(reference.stdout.trim().split('\n').map((l) => JSON.parse(l) as { t: string; n: string }).map((r) => [r.t, Number(r.n)]));
    const malformedRows = homes.malformed;
    for (const t of ANALYTICS_TABLE_NAMES) {
      const [row] = await sink.queryRows<{ plain: string; final: string }>(`SELECT (SELECT count() FROM ${t}) AS plain, (SELECT count() FROM ${t} FINAL) AS final`);
      const expected = (want[t] ?? NaN) - (t === 'dead_letters' ? malformedRows : 0);
      expect({ table: t, plain: Number(row?.plain), final: Number(row?.final) }).toEqual({ table: t, plain: expected, final: expected });
    }
  });

  it('nothing lost: every record of the topic is the origin of exactly one row or dead letter on the server; both machines are there', async () => {
    const sources = await sink.queryRows<{ source: string }>(
      "SELECT source FROM tool_calls FINAL UNION ALL SELECT source FROM mcp_events FINAL UNION ALL SELECT source FROM dead_letters FINAL UNION ALL SELECT o AS source FROM (SELECT origin AS o FROM token_usage FINAL WHERE token_usage.source = 'observed')",
    );
    const highs = await admin.highWatermarks(topic);
    const expected = [...highs].flatMap(([p, high]) => Array.from({ length: Number(high) }, (_, o) => `${topic}/${p}/${o}`)).sort();
    expect(sources.length).toBe(onTopic);
    expect(sources.map((s) => s.source).sort()).toEqual(expected);
    const hosts = await sink.queryRows<{ host: string; device_id: string; harnesses: string[] }>('SELECT host, device_id, arraySort(groupUniqArray(harness)) AS harnesses FROM tool_calls GROUP BY host, device_id ORDER BY host');
    expect(hosts).toEqual([
      { host: 'desk-b', device_id: 'dev-desk-b', harnesses: ['codex', 'copilot_cli', 'qwen_code'] },
      { host: 'laptop-a', device_id: 'dev-laptop-a', harnesses: ['claude_code', 'gemini_cli'] },
    ]);
    // The survivor read records of the killed worker's partitions: more than its own share.
    const own = split.a.reduce((n, p) => n + Number(highs.get(p) ?? 0n), 0);
    expect(Number(a.summary()['events_consumed'])).toBeGreaterThan(own);
  });
});
