// Issue 34 item 3, the third machine: `toolcanon watch --to-kafka` follows a real Claude Code
// transcript while it is appended in torn chunks (and a second session folder appears), publishes
// every event with its machine (host, device id) to a topic, and stops on SIGTERM with one line and
// exit 0; a `toolcanon consume` worker writes the topic into a fresh database of the real
// ClickHouse server. The server's tables then equal a one-shot import of the finished files into
// an embedded database with the same machine flags, table for table and row for row (apart from
// where and when a row was ingested; token_usage's running context too: watch holds back the
// events at a file's end that its next lines may still change), plain count() equal to FINAL
// count() in every table, and every record of the topic is the origin of exactly one row, but
// for the copies of an event published again as its file was read again.
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { TABLE_NAMES } from '../../src/tables/index.ts';
import { createTestDatabase, dropTestDatabase } from '../helpers/clickhouse-server.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { makeTempDir } from '../helpers/db.ts';
import { engineServer } from '../helpers/engines.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import { Watch } from '../helpers/watch.ts';
import { dumpHere, dumpInChild, readTopic, type ReadRecord, runCli, testClient, uniqueName, waitForAllCommitted, workerArgs, WorkerProcess, type TableDump } from '../helpers/worker.ts';

const SUITE = 'test/fleet/watch-to-kafka.e2e.test.ts';
const brokers = requireKafkaOrSkip(await ensureKafka(), SUITE);
const server = await engineServer(SUITE);
const CORPUS = corpusOrSkip('claude-code/projects/spotter', SUITE);
const MACHINE = ['--host', 'laptop-c', '--device-id', 'dev-laptop-c'];

describe.skipIf(brokers === null || server === null || CORPUS === null)('a third machine: watch --to-kafka → a worker → the ClickHouse server', () => {
  const topic = uniqueName('tc-watch-fleet');
  const group = uniqueName('g-watch-fleet');
  const tmp = makeTempDir('watch-fleet');
  const logs = join(tmp.dir, 'logs');
  let url: string;
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let sink: ClickHouseSink;
  let watchExit: number | null;
  let watchStdout: string;
  let published: number;
  let fromServer: TableDump;
  let fromReference: TableDump;

  beforeAll(async () => {
    url = await createTestDatabase('watch-fleet');
    client = testClient(brokers ?? [], 'watch-fleet-test');
    admin = await client.admin();
    const main = readFileSync(join(CORPUS ?? '', '258c7280-ae70-4798-800f-63464d01a85d.jsonl'));
    mkdirSync(join(logs, 'proj'), { recursive: true });
    const file = join(logs, 'proj', '258c7280-ae70-4798-800f-63464d01a85d.jsonl');
    writeFileSync(file, main.subarray(0, 1000)); // a torn first line: nothing to publish yet
    const w = new Watch(['claude-code', logs, '--tail-settle-ms', '10000', '--to-kafka', '--brokers', (brokers ?? []).join(','), '--topic', topic, '--partitions', '3', '--state-dir', join(tmp.dir, 'state'), '--rescan-ms', '3000', ...MACHINE]);
    await w.waitFor(/caught up: following/);
    // The rest in pieces cut off line boundaries, each waited for (watch's cycle line).
    const cuts = [0.2, 0.45, 0.7, 1].map((f) => Math.floor(main.length * f) + (f < 1 ? 13 : 0));
    let at = 1000;
    for (const end of cuts) {
      const before = w.cycles();
      appendFileSync(file, main.subarray(at, Math.min(end, main.length)));
      at = Math.min(end, main.length);
      await w.waitFor(/ claude-code: \d+ file\(s\) read/, before + 1);
    }
    // A new session folder appears while it runs.
    const before = w.cycles();
    mkdirSync(join(logs, 'proj2'), { recursive: true });
    copyFileSync(join(CORPUS ?? '', 'tool_heavy.jsonl'), join(logs, 'proj2', 'tool_heavy.jsonl'));
    await w.waitFor(/ claude-code: \d+ file\(s\) read/, before + 1);
    // The files' last events, held until the files are still, are published.
    await w.settled();
    w.kill('SIGTERM');
    watchExit = await w.exited;
    watchStdout = w.stdout;

    // One worker writes the topic into the server database.
    const worker = new WorkerProcess('W', workerArgs(brokers ?? [], topic, group, ['--clickhouse', url]));
    await waitForAllCommitted(admin, group, topic, 240_000);
    worker.kill('SIGTERM');
    await worker.exited;
    published = [...(await admin.highWatermarks(topic)).values()].reduce((n, v) => n + Number(v), 0);

    // The reference: the finished files imported at once into an embedded database, the same machine.
    const referenceDb = join(tmp.dir, 'reference-db');
    const r = await runCli(['import', 'claude-code', logs, '--db', referenceDb, '--format', 'json', ...MACHINE]);
    expect(r.code, r.stderr).toBe(0);
    sink = await ClickHouseSink.open({ clickhouseUrl: url });
    fromServer = await dumpHere(sink);
    fromReference = await dumpInChild(referenceDb);
  }, 600_000);

  afterAll(async () => {
    await sink?.close();
    await admin?.deleteTopics([topic, `${topic}.dlq`]).catch(() => undefined);
    await admin?.disconnect();
    if (url !== undefined) await dropTestDatabase(url);
    tmp.cleanup();
  });

  it('watch stops on SIGTERM with one summary line and exit 0, having published every event', () => {
    expect(watchExit).toBe(0);
    expect(watchStdout.trim().split('\n')).toHaveLength(1);
    expect(watchStdout).toMatch(/^watch stopped \(SIGTERM\)/);
    expect(published).toBeGreaterThan(300);
  });

  it.each(TABLE_NAMES)('table %s on the server equals a one-shot import of the finished files', (table) => {
    const got = fromServer.get(table) ?? [];
    const want = fromReference.get(table) ?? [];
    expect(got.length).toBe(want.length);
    expect(got).toEqual(want);
    if (table === 'tool_calls' || table === 'token_usage') expect(got.length).toBeGreaterThan(0);
  });

  it('plain count() equals FINAL count() in every table, and every record of the topic is one row\'s origin', async () => {
    for (const t of TABLE_NAMES) {
      const [row] = await sink.queryRows<{ plain: string; final: string }>(`SELECT (SELECT count() FROM ${t}) AS plain, (SELECT count() FROM ${t} FINAL) AS final`);
      expect({ table: t, plain: Number(row?.plain) }).toEqual({ table: t, plain: Number(row?.final) });
    }
    const sources = await sink.queryRows<{ source: string }>(
      "SELECT source FROM tool_calls FINAL UNION ALL SELECT source FROM mcp_events FINAL UNION ALL SELECT source FROM dead_letters FINAL UNION ALL SELECT o AS source FROM (SELECT origin AS o FROM token_usage FINAL WHERE token_usage.source = 'observed')",
    );
    // A file read again from before events it held publishes the events after them again, as
    // they were (stored once): every record is one row's origin except those copies.
    const records = await readTopic(client, topic, published);
    const identity = (r: ReadRecord): string => {
      const e = JSON.parse(r.value?.toString('utf8') ?? '{}') as Record<string, string | undefined>;
      return [e['type'] ?? 'tool_call', e['session_id'], e['agent_id'] ?? '', e['call_id'] ?? e['request_id'] ?? e['event_id']].join('/');
    };
    const copies = new Map<string, number>();
    for (const r of records) copies.set(identity(r), (copies.get(identity(r)) ?? 0) + 1);
    const republished = [...copies.values()].reduce((n, c) => n + c - 1, 0);
    expect(records).toHaveLength(published);
    expect(new Set(sources.map((s) => s.source)).size).toBe(sources.length);
    expect(sources.length).toBe(published - republished);
    expect(sources.length).toBe(copies.size);
    // Copies published again are the same record (byte for byte but for the time it was published).
    const firsts = new Map<string, string>();
    const strip = (r: ReadRecord): string => (r.value?.toString('utf8') ?? '').replace(/"ingested_at":"[^"]*",?/, '');
    for (const r of records) {
      const seen = firsts.get(identity(r));
      if (seen === undefined) firsts.set(identity(r), strip(r));
      else expect(strip(r)).toBe(seen);
    }
    const hosts = await sink.queryRows<{ host: string; device_id: string }>('SELECT DISTINCT host, device_id FROM tool_calls');
    expect(hosts).toEqual([{ host: 'laptop-c', device_id: 'dev-laptop-c' }]);
  });
});
