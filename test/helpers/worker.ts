// Helpers for the stream worker tests: unique topics, records, waiting for commits, worker child
// processes (real signals), and dumps of an analytics data directory from another process
// (embedded ClickHouse binds one data directory per process).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createKafkaClient, type KafkaAdmin, type KafkaClient, type OutgoingRecord } from '../../src/kafka/client.ts';
import { parseConsumeArgs } from '../../src/cli/kafka-commands.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { TABLES } from '../../src/tables/index.ts';
import { StreamWorker } from '../../src/worker/worker.ts';
import { eventLine } from './events.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = `${ROOT}bin/toolcanon.mjs`;

export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** A Kafka client for test code; client warnings go to stderr with a prefix. */
export function testClient(brokers: readonly string[], clientId: string): KafkaClient {
  return createKafkaClient({ brokers, clientId, log: (line) => process.stderr.write(`[${clientId}] ${line}\n`) });
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Committed offsets of the group, with 0 for partitions it never committed. */
export async function committedOffsets(admin: KafkaAdmin, group: string, topic: string): Promise<Map<number, bigint>> {
  const highs = await admin.highWatermarks(topic);
  const committed = await admin.committedOffsets(group, topic);
  return new Map([...highs.keys()].map((p) => [p, committed.get(p) ?? 0n]));
}

/** Waits until the group has committed every record of the topic. */
export async function waitForAllCommitted(admin: KafkaAdmin, group: string, topic: string, timeoutMs = 120_000): Promise<Map<number, bigint>> {
  return waitFor(`group ${group} to commit all of ${topic}`, async () => {
    const highs = await admin.highWatermarks(topic);
    const committed = await admin.committedOffsets(group, topic);
    for (const [p, high] of highs) if ((committed.get(p) ?? 0n) < high) return undefined;
    return committed;
  }, timeoutMs, 300);
}

export function sumOffsets(offsets: ReadonlyMap<number, bigint>): number {
  let n = 0n;
  for (const v of offsets.values()) n += v;
  return Number(n);
}

export interface GeneratedEvents {
  readonly lines: string[];
  /** call_id of every event, in order. */
  readonly callIds: string[];
}

/** `n` valid tool-call events over `sessions` sessions, outputs of realistic size. */
export function generateEvents(tag: string, n: number, sessions = 40): GeneratedEvents {
  const tools: Array<[string, Record<string, unknown>]> = [
    ['Read', { file_path: 'src/components/Widget.tsx', offset: 10, limit: 200 }],
    ['Bash', { command: 'npm test -- --run test/unit/parser.test.ts', description: 'Run the parser tests' }],
    ['Grep', { pattern: 'function\\s+handle', path: 'src', glob: '*.ts' }],
    ['Edit', { file_path: 'src/lib/util.ts', old_string: 'const a = 1;', new_string: 'const a = 2;' }],
    ['mcp__serena__find_symbol', { name_path: 'Parser/parse', relative_path: 'src/parser.ts' }],
  ];
  const lines: string[] = [];
  const callIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const [tool, input] = tools[i % tools.length] as [string, Record<string, unknown>];
    const callId = `${tag}-c-${i}`;
    callIds.push(callId);
    lines.push(
      eventLine({
        session_id: `${tag}-s-${i % sessions}`,
        turn_id: `t-${Math.floor(i / sessions)}`,
        call_id: callId,
        ts: new Date(Date.UTC(2026, 11, 2, 10, 0, 0) + i * 1000).toISOString(),
        tool,
        input,
        output: `line ${i}: ${'lorem ipsum dolor sit amet '.repeat(4 + (i % 17))}`,
        duration_ms: 5 + (i % 400),
      }),
    );
  }
  return { lines, callIds };
}

/** Records keyed by session_id, as `toolcanon produce` keys them. */
export function keyedRecords(lines: readonly string[]): OutgoingRecord[] {
  return lines.map((line) => {
    const m = /"session_id":"([^"]*)"/.exec(line);
    return { key: m ? (m[1] as string) : null, value: Buffer.from(line) };
  });
}

export async function sendAll(client: KafkaClient, topic: string, records: readonly OutgoingRecord[], chunk = 2_000): Promise<void> {
  const producer = await client.producer();
  try {
    for (let i = 0; i < records.length; i += chunk) await producer.send(topic, records.slice(i, i + chunk));
  } finally {
    await producer.disconnect();
  }
}

/** A `toolcanon consume` child process, its stderr kept line by line. */
export class WorkerProcess {
  readonly lines: string[] = [];
  stdout = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private readonly waiters: Array<{ re: RegExp; resolve: (line: string) => void }> = [];

  constructor(readonly name: string, args: readonly string[]) {
    this.child = spawn(process.execPath, [BIN, 'consume', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env } });
    let partial = '';
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      partial += chunk;
      let nl = partial.indexOf('\n');
      while (nl >= 0) {
        const line = partial.slice(0, nl);
        partial = partial.slice(nl + 1);
        this.lines.push(line);
        if (process.env['TOOLCANON_TEST_VERBOSE'] === '1') process.stderr.write(`[${name}] ${line}\n`);
        for (const w of [...this.waiters]) {
          if (w.re.test(line)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
        nl = partial.indexOf('\n');
      }
    });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Resolves with the first stderr line (already seen or to come) matching `re`. */
  waitForLine(re: RegExp, timeoutMs = 60_000): Promise<string> {
    const seen = this.lines.find((l) => re.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no line matching ${re} within ${timeoutMs} ms; stderr:\n${this.lines.slice(-30).join('\n')}`)), timeoutMs);
      this.waiters.push({ re, resolve: (line) => (clearTimeout(timer), resolve(line)) });
      void this.exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited before a line matching ${re}; stderr:\n${this.lines.slice(-30).join('\n')}`));
      });
    });
  }

  /** The fields of the latest progress line (`Progress: a=1 b=2 …`). */
  progress(): Record<string, string> | undefined {
    const line = [...this.lines].reverse().find((l) => l.startsWith('Progress: '));
    return line === undefined ? undefined : parseFields(line);
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Summary rows printed at exit (`--format json`), by metric. */
  summary(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const line of this.stdout.split('\n')) {
      if (!line.startsWith('{')) continue;
      const row = JSON.parse(line) as { metric: string; value: unknown };
      out[row.metric] = row.value;
    }
    return out;
  }
}

export function parseFields(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of line.matchAll(/([a-z_]+)=(\S+)/g)) out[m[1] as string] = m[2] as string;
  return out;
}

/**
 * Worker flags that keep tests quick: small batches, short timers, fast group takeover. `db` is
 * an embedded data directory, or the sink flags themselves (an EngineDatabase's `flags`:
 * `['--clickhouse', URL]`).
 */
export function workerArgs(brokers: readonly string[], topic: string, group: string, db: string | readonly string[], extra: readonly string[] = []): string[] {
  return [
    '--brokers', brokers.join(','),
    '--topic', topic,
    '--group', group,
    ...(typeof db === 'string' ? ['--db', db] : db),
    '--batch-max-rows', '2000',
    '--batch-max-wait-ms', '200',
    '--progress-interval-ms', '300',
    '--session-timeout-ms', '10000',
    '--retry-initial-ms', '200',
    '--retry-max-ms', '2000',
    '--format', 'json',
    ...extra,
  ];
}

export function runCli(args: readonly string[], timeoutMs = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, timeout: timeoutMs, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Every analytics table, minus the columns that say where and when a row was ingested (they
 * differ between a replay of files and a Kafka consumer by design), one JSON text per row.
 */
const DUMP_TABLES = TABLES.map((t) => ({ table: t.name, select: t.dumpSelect }));

export const DUMP_SQL = DUMP_TABLES.map(
  (t) => `SELECT '${t.table}' AS t, formatRowNoNewline('JSONEachRow', *) AS r FROM (SELECT ${t.select} FROM ${t.table} FINAL)`,
).join(' UNION ALL ');

export type TableDump = Map<string, string[]>;

function toDump(rows: ReadonlyArray<{ t: string; r: string }>): TableDump {
  const out: TableDump = new Map(DUMP_TABLES.map((t) => [t.table, [] as string[]]));
  for (const { t, r } of rows) out.get(t)?.push(r);
  for (const list of out.values()) list.sort();
  return out;
}

export async function dumpHere(sink: ClickHouseSink): Promise<TableDump> {
  return toDump(await sink.queryRows<{ t: string; r: string }>(DUMP_SQL));
}

/** Dumps a data directory from a child process (this process may have another one open). */
export async function dumpInChild(db: string): Promise<TableDump> {
  const result = await runCli(['query', '--db', db, '--format', 'json', DUMP_SQL]);
  if (result.code !== 0) throw new Error(`toolcanon query failed (${result.code}): ${result.stderr}`);
  return toDump(result.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { t: string; r: string }));
}

/** The Kafka position of a row from its source `topic/partition/offset`. */
export function offsetOf(source: string): { partition: number; offset: bigint } {
  const m = /\/([0-9]+)\/([0-9]+)$/.exec(source);
  if (!m) throw new Error(`not a Kafka source: ${source}`);
  return { partition: Number(m[1]), offset: BigInt(m[2] as string) };
}

export interface InProcessWorker {
  readonly worker: StreamWorker;
  readonly logs: string[];
}

/** A worker in this process (its sink is this process's embedded ClickHouse), configured from CLI flags. */
export async function startInProcessWorker(brokers: readonly string[], topic: string, group: string, sink: ClickHouseSink, extra: readonly string[] = []): Promise<InProcessWorker> {
  // The data directory flag is not used: the sink is given.
  const { config } = parseConsumeArgs(workerArgs(brokers, topic, group, '(unused)', extra));
  const logs: string[] = [];
  const worker = new StreamWorker({
    config,
    sink,
    log: (line) => {
      logs.push(line);
      if (process.env['TOOLCANON_TEST_VERBOSE'] === '1') process.stderr.write(`[worker] ${line}\n`);
    },
  });
  await worker.start();
  return { worker, logs };
}

export interface ReadRecord {
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, Buffer | string | undefined>>;
}

/** Reads a topic from the beginning with a throwaway group until `expected` records arrived (and a moment more, to catch extras). */
export async function readTopic(client: KafkaClient, topic: string, expected: number, timeoutMs = 60_000): Promise<ReadRecord[]> {
  const consumer = await client.consumer({
    groupId: uniqueName('reader'),
    topic,
    fromBeginning: true,
    sessionTimeoutMs: 10_000,
    heartbeatIntervalMs: 1_000,
    rebalanceTimeoutMs: 20_000,
    maxWaitTimeMs: 200,
    fetchMaxBytes: 32 * 1024 * 1024,
    fetchMaxBytesPerPartition: 16 * 1024 * 1024,
  });
  const records: ReadRecord[] = [];
  try {
    await consumer.run(async (ctx) => {
      for (const r of ctx.batch.records) {
        records.push({ partition: ctx.batch.partition, offset: r.offset, key: r.key, value: r.value, headers: r.headers });
        ctx.markFetched(r.offset);
      }
    });
    await waitFor(`${expected} record(s) in ${topic}`, () => (records.length >= expected ? true : undefined), timeoutMs);
    await new Promise((r) => setTimeout(r, 1_000));
    return records;
  } finally {
    await consumer.disconnect();
  }
}

export { DLQ_HEADERS as DLQ_TOPIC_HEADERS } from '../../src/kafka/dlq.ts';

/** The teardown every Kafka test file shares: close the sink, drop its topics, remove its files. */
export async function releaseKafkaTest(parts: {
  readonly sink: ClickHouseSink | undefined;
  readonly admin: KafkaAdmin | undefined;
  readonly topic: string;
  readonly tmp: { cleanup: () => void };
}): Promise<void> {
  await parts.sink?.close();
  await parts.admin?.deleteTopics([parts.topic, `${parts.topic}.dlq`]).catch(() => undefined);
  await parts.admin?.disconnect();
  parts.tmp.cleanup();
}
