// One warehouse for many machines (issue 16): two "machines" (two import state directories, two
// host values, different Claude Code logs) run `toolcanon import claude-code --to-kafka` into one
// topic; one consume worker writes one database. It holds both machines' rows, every record read
// is a row or a dead letter, re-running both imports publishes nothing and adds no row, and a log
// deleted after its import keeps its rows while the next import of what remains still works.
// Expected figures are counted from the raw transcripts by an independent reading below.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { stateFilePath } from '../../src/pipeline/import-state-file.ts';
import type { StreamWorker } from '../../src/worker/worker.ts';
import { makeTempDir } from '../helpers/db.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import { writeClaudeTranscript } from '../importers/generate-claude-code.ts';
import { BIN, DLQ_TOPIC_HEADERS, readTopic, releaseKafkaTest, ROOT, startInProcessWorker, testClient, uniqueName, waitFor, waitForAllCommitted } from '../helpers/worker.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/kafka/two-machines.test.ts');

const LOG_A = join(ROOT, 'test/importers/fixtures-claude-code/tool-search.jsonl');
const LOG_B = join(ROOT, 'test/importers/fixtures-otlp-join/transcript/7c2e9d4a-1b3f-4e5a-8c6d-9f0a1b2c3d4e.jsonl');
const SECRET = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';

/**
 * The events a Claude Code transcript holds, read independently of the importer: one tool call
 * per distinct tool_use id, one usage per distinct (message.id, requestId) of a response.
 */
function expectedEvents(file: string): { calls: number; usage: number; sessions: Set<string> } {
  const calls = new Set<string>();
  const usage = new Set<string>();
  const sessions = new Set<string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    let r: { type?: string; sessionId?: string; requestId?: string; message?: { id?: string; usage?: unknown; content?: unknown } };
    try {
      r = JSON.parse(line) as typeof r;
    } catch {
      continue;
    }
    if (r.type !== 'assistant') continue;
    if (r.sessionId) sessions.add(r.sessionId);
    const content = Array.isArray(r.message?.content) ? (r.message.content as { type?: string; id?: string }[]) : [];
    for (const c of content) if (c.type === 'tool_use' && c.id) calls.add(c.id);
    if (r.message?.usage) usage.add(`${r.message.id}\u0000${r.requestId}`);
  }
  return { calls: calls.size, usage: usage.size, sessions };
}

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly metrics: Record<string, number>;
}

function toolcanon(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, timeout: 120_000, encoding: 'utf8', env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      const metrics: Record<string, number> = {};
      for (const l of stdout.trim().split('\n')) {
        try {
          const row = JSON.parse(l) as { metric: string; value: number };
          metrics[row.metric] = row.value;
        } catch {
          // not a summary line
        }
      }
      resolve({ code, stdout, stderr, metrics });
    });
  });
}

describe.skipIf(brokers === null)('two machines, one topic, one warehouse', () => {
  const topic = uniqueName('tc-machines');
  const group = uniqueName('g-machines');
  const tmp = makeTempDir('two-machines');
  const logsA = join(tmp.dir, 'a', 'projects', 'release-notes');
  const logsB = join(tmp.dir, 'b', 'projects', 'app');
  const stateA = join(tmp.dir, 'a', 'state');
  const stateB = join(tmp.dir, 'b', 'state');
  const fileA = join(logsA, 'tool-search.jsonl');
  const fileB = join(logsB, '7c2e9d4a-1b3f-4e5a-8c6d-9f0a1b2c3d4e.jsonl');
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let sink: ClickHouseSink;
  let worker: StreamWorker;
  const expectA = expectedEvents(LOG_A);
  const expectB = expectedEvents(LOG_B);
  const eventsA = expectA.calls + expectA.usage;
  const eventsB = expectB.calls + expectB.usage;
  let first: { a: CliResult; b: CliResult };

  const importA = (): Promise<CliResult> =>
    toolcanon(['import', 'claude-code', join(tmp.dir, 'a', 'projects'), '--to-kafka', '--brokers', (brokers ?? []).join(','), '--topic', topic, '--partitions', '3', '--host', 'machine-a', '--device-id', 'dev-a', '--state-dir', stateA, '--format', 'json']);
  // Machine B names itself through the environment and derives its device id.
  const importB = (): Promise<CliResult> =>
    toolcanon(['import', 'claude-code', join(tmp.dir, 'b', 'projects'), '--to-kafka', '--brokers', (brokers ?? []).join(','), '--topic', topic, '--partitions', '3', '--state-dir', stateB, '--format', 'json'], { TOOLCANON_HOST: 'machine-b' });
  const highWatermarkSum = async (t: string): Promise<number> => [...(await admin.highWatermarks(t)).values()].reduce((n, v) => n + Number(v), 0);
  const rows = async (sql: string): Promise<Record<string, unknown>[]> => sink.queryRows<Record<string, unknown>>(sql);

  beforeAll(async () => {
    mkdirSync(logsA, { recursive: true });
    mkdirSync(logsB, { recursive: true });
    copyFileSync(LOG_A, fileA);
    // Machine B's log: the transcript with a secret in a command, and one line that is not JSON.
    const b = readFileSync(LOG_B, 'utf8').replace('npm test -- --grep flaky', `GH_TOKEN=${SECRET} npm test -- --grep flaky`);
    expect(b).toContain(SECRET);
    writeFileSync(fileB, `${b.trimEnd()}\n{"type":"assistant","message":\n`);
    client = testClient(brokers ?? [], 'two-machines-test');
    admin = await client.admin();
    sink = await ClickHouseSink.open({ db: join(tmp.dir, 'warehouse') });
    first = { a: await importA(), b: await importB() };
    ({ worker } = await startInProcessWorker(brokers ?? [], topic, group, sink, ['--batch-max-rows', '4']));
    await waitForAllCommitted(admin, group, topic);
  }, 300_000);

  afterAll(async () => {
    await worker?.stop('test done').catch(() => undefined);
    await releaseKafkaTest({ sink, admin, topic, tmp });
  });

  it('publishes every event of each machine, and the malformed record to the dead-letter topic', () => {
    expect(first.a.code, first.a.stderr).toBe(0);
    expect(first.b.code, first.b.stderr).toBe(0);
    expect(first.a.metrics['records_published']).toBe(eventsA);
    expect(first.b.metrics['records_published']).toBe(eventsB);
    expect(first.b.metrics['malformed_records']).toBe(1);
    expect(first.b.metrics['dead_lettered.import_malformed']).toBe(1);
    expect(first.b.metrics['secrets_redacted']).toBeGreaterThanOrEqual(1);
  });

  // One scenario in steps, each on what the one before left (a topic and a warehouse are shared
  // state: as separate tests they depended on running in file order).
  it('step by step: records keyed by session with the machine, redacted; both machines in one database (records in = rows + dead letters); a re-run publishes nothing; a deleted log keeps its rows', async () => {
    // Step 1: keys each record by its session and carries the machine in it, redacted before it left.
    const records = await readTopic(client, topic, eventsA + eventsB);
    expect(records).toHaveLength(eventsA + eventsB);
    const hosts: Record<string, number> = {};
    for (const r of records) {
      const text = r.value?.toString('utf8') ?? '';
      expect(text).not.toContain(SECRET);
      const event = JSON.parse(text) as { session_id: string; host: string; device_id: string };
      expect(r.key?.toString('utf8')).toBe(event.session_id);
      hosts[`${event.host}/${event.device_id === 'dev-a' ? 'dev-a' : 'derived'}`] = (hosts[`${event.host}/${event.device_id === 'dev-a' ? 'dev-a' : 'derived'}`] ?? 0) + 1;
    }
    expect(hosts).toEqual({ 'machine-a/dev-a': eventsA, 'machine-b/derived': eventsB });
    const dlq = await readTopic(client, `${topic}.dlq`, 1);
    expect(dlq).toHaveLength(1);
    expect(String(dlq[0]?.headers[DLQ_TOPIC_HEADERS.reason])).toBe('import_malformed');
    expect(String(dlq[0]?.headers[DLQ_TOPIC_HEADERS.originSource])).toBe(`${fileB}:8`);
    expect(String(dlq[0]?.headers['toolcanon.origin.host'])).toBe('machine-b');
    expect(dlq[0]?.value?.toString('utf8')).toBe('{"type":"assistant","message":');

    // Step 2: writes both machines into one database: records in = rows + dead letters.
    const byHost = await rows("SELECT host, uniqExact(device_id) AS devices, count() AS calls FROM tool_calls FINAL GROUP BY host ORDER BY host");
    expect(byHost).toEqual([
      { host: 'machine-a', devices: '1', calls: String(expectA.calls) },
      { host: 'machine-b', devices: '1', calls: String(expectB.calls) },
    ]);
    const usage = await rows("SELECT host, count() AS n FROM token_usage FINAL WHERE source = 'observed' GROUP BY host ORDER BY host");
    expect(usage).toEqual([
      { host: 'machine-a', n: String(expectA.usage) },
      { host: 'machine-b', n: String(expectB.usage) },
    ]);
    const [devB] = await rows("SELECT any(device_id) AS d FROM tool_calls FINAL WHERE host = 'machine-b'");
    expect(String(devB?.['d'])).toMatch(/^[0-9a-f]{32}$|^[0-9a-f-]{36}$/);
    // Every record on the topic is a row or a dead letter of the warehouse; the importers' one
    // malformed record is in the dead-letter topic: read = published + dead-lettered.
    const onTopic = await highWatermarkSum(topic);
    expect(onTopic).toBe(eventsA + eventsB);
    const [stored] = await rows('SELECT (SELECT count() FROM tool_calls FINAL) + (SELECT count() FROM token_usage FINAL WHERE source = \'observed\') AS r, (SELECT count() FROM dead_letters FINAL) AS d');
    expect(Number(stored?.['r']) + Number(stored?.['d'])).toBe(onTopic);
    expect(Number(stored?.['d'])).toBe(0);
    expect(first.a.metrics['events_emitted']! + first.b.metrics['events_emitted']! + first.b.metrics['malformed_records']!).toBe(onTopic + 1);
    const sessions = await rows('SELECT DISTINCT session_id FROM tool_calls FINAL ORDER BY session_id');
    expect(sessions.map((s) => s['session_id'])).toEqual([...expectA.sessions, ...expectB.sessions].sort());
    expect((await rows(`SELECT count() AS n FROM tool_calls FINAL WHERE position(raw_input, '${SECRET}') > 0`))[0]?.['n']).toBe('0');

    // Step 3: re-running both imports publishes nothing and adds no row.
    const before = await highWatermarkSum(topic);
    const a = await importA();
    const b = await importB();
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(a.metrics['records_published']).toBe(0);
    expect(b.metrics['records_published']).toBe(0);
    expect(a.metrics['files_unchanged']).toBe(1);
    expect(b.metrics['files_unchanged']).toBe(1);
    expect(await highWatermarkSum(topic)).toBe(before);
    expect(await highWatermarkSum(`${topic}.dlq`)).toBe(1);
    expect((await rows('SELECT count() AS n FROM tool_calls FINAL'))[0]?.['n']).toBe(String(expectA.calls + expectB.calls));

    // Step 4: keeps the rows of a log deleted after its import; the next import reads only the new log.
    rmSync(fileA);
    const generated = writeClaudeTranscript(join(logsA, 'generated.jsonl'), 20_000, 500);
    const afterDelete = await importA();
    expect(afterDelete.code, afterDelete.stderr).toBe(0);
    expect(afterDelete.metrics['files_seen']).toBe(1);
    expect(afterDelete.metrics['records_published']).toBe(generated.events);
    await waitForAllCommitted(admin, group, topic);
    await waitFor('the generated events in the warehouse', async () => {
      const [n] = await rows("SELECT (SELECT count() FROM tool_calls FINAL WHERE host = 'machine-a') + (SELECT count() FROM token_usage FINAL WHERE host = 'machine-a' AND source = 'observed') AS n");
      return Number(n?.['n']) === eventsA + generated.events ? true : undefined;
    });
    // The deleted log's sessions are still there, and the state still records the deleted file.
    for (const s of expectA.sessions) expect((await rows(`SELECT count() AS n FROM tool_calls FINAL WHERE session_id = '${s}'`))[0]?.['n']).toBe(String(expectA.calls));
    const state = JSON.parse(readFileSync(stateFilePath(stateA, 'claude-code'), 'utf8')) as { files: Record<string, unknown> };
    expect(Object.keys(state.files).sort()).toEqual([fileA, join(logsA, 'generated.jsonl')].sort());
    expect(existsSync(fileA)).toBe(false);
    // And once more: nothing new.
    const again = await importA();
    expect(again.metrics['records_published']).toBe(0);
  }, 300_000);
});
