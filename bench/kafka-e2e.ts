// Benchmark: the stream worker end to end (Kafka -> decode/validate -> project -> account ->
// embedded ClickHouse, commit after ack) against a consume-only baseline (a consumer group whose
// batch handler only parses each record as JSON), both over the same topic in the same run.
//
//   npm run bench:kafka -- [--events N] [--partitions N] [--keep]
//
// The events are the project's valid fixtures (fixtures/*/ except bad/), copied with fresh
// session, call, request and event ids until N are produced, each fixture file in its own order
// and keyed by session: sizes and the mix of tool calls and usage events are the fixtures'.
// The topic is filled before either consumer starts, so ClickHouse is always slower than the
// topic and the worker's peak RSS shows whether its memory stays bounded (limit 512 MiB).
// Prints events/s and MB/s of both, their ratio and the worker's peak RSS. Never fails on time.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createKafkaClient, type KafkaAdmin, type KafkaClient, type OutgoingRecord } from '../src/kafka/client.ts';
import { decodeEvent } from '../src/decode/event.ts';
import { ensureKafka } from '../test/helpers/kafka.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RSS_LIMIT_BYTES = 512 * 1024 * 1024;
const SEND_MAX_BYTES = 900 * 1024;
const NEWLINE = Buffer.from('\n');

/** Run as a script (npm run bench:kafka), not imported by another benchmark (bench/fleet.ts reuses its parts). */
const IS_MAIN = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;

const { values } = parseArgs({
  // Imported, the defaults: the importing script parses its own flags.
  ...(IS_MAIN ? {} : { args: [] }),
  options: {
    events: { type: 'string', default: '1000000' },
    partitions: { type: 'string', default: '6' },
    keep: { type: 'boolean', default: false },
    /** Extra `toolcanon consume` flags, e.g. --worker-args="--batch-max-rows 10000". */
    'worker-args': { type: 'string', default: '' },
    /** Worker processes in the group (each with its own embedded ClickHouse). */
    workers: { type: 'string', default: '1' },
    /** Tuning: consume an existing topic (from --keep) instead of producing, and skip the baseline. */
    'reuse-topic': { type: 'string' },
    'skip-baseline': { type: 'boolean', default: false },
    /** Skip the third measurement: `toolcanon replay` of the same events from a file (no Kafka). */
    'skip-replay': { type: 'boolean', default: false },
  },
});
const N = Number(values.events);
const PARTITIONS = Number(values.partitions);

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Valid fixture events, file by file (the order within a file is a session's order). */
export function loadTemplates(): string[][] {
  const files: string[][] = [];
  for (const dir of readdirSync(join(ROOT, 'fixtures'), { withFileTypes: true })) {
    if (!dir.isDirectory() || dir.name === 'bad') continue;
    for (const f of readdirSync(join(ROOT, 'fixtures', dir.name)).filter((x) => x.endsWith('.jsonl')).sort()) {
      const lines = readFileSync(join(ROOT, 'fixtures', dir.name, f), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .filter((l) => decodeEvent(Buffer.from(l), 'bench', '1970-01-01 00:00:00.000').kind !== 'dead');
      if (lines.length) files.push(lines);
    }
  }
  if (files.length === 0) throw new Error('no valid fixture events under fixtures/');
  return files;
}

const ID_FIELDS = /"(session_id|call_id|request_id|event_id)":"((?:[^"\\]|\\.)*)"/g;

/** Yields N events: copy k of every fixture file, with every id made unique to the copy. */
function* generate(templates: string[][], n: number): Generator<{ key: string | null; value: Buffer }> {
  let produced = 0;
  for (let copy = 0; produced < n; copy++) {
    for (const file of templates) {
      for (const line of file) {
        if (produced >= n) return;
        let key: string | null = null;
        const value = line.replace(ID_FIELDS, (_m, field: string, id: string) => {
          const fresh = `${id}~${copy}`;
          if (field === 'session_id') key = fresh;
          return `"${field}":"${fresh}"`;
        });
        produced++;
        yield { key, value: Buffer.from(value) };
      }
    }
  }
}

export async function produce(client: KafkaClient, topic: string, templates: string[][], copyTo: WriteStream | undefined, n = N): Promise<{ bytes: number; ms: number }> {
  const producer = await client.producer();
  const started = performance.now();
  let valueBytes = 0;
  let batch: OutgoingRecord[] = [];
  let batchBytes = 0;
  let sent = 0;
  const send = async (): Promise<void> => {
    await producer.send(topic, batch);
    sent += batch.length;
    if (Math.floor(sent / 100_000) !== Math.floor((sent - batch.length) / 100_000)) log(`  produced ${sent} events (${(valueBytes / 1e6).toFixed(0)} MB)`);
    batch = [];
    batchBytes = 0;
  };
  try {
    for (const record of generate(templates, n)) {
      // A send stays under the topic's max.message.bytes (1 MiB by default): Kafka applies it to
      // each partition's record batch, and one send may put everything into one partition.
      const size = record.value.byteLength + 256;
      if (batch.length > 0 && batchBytes + size > SEND_MAX_BYTES) await send();
      batch.push(record);
      batchBytes += size;
      valueBytes += record.value.byteLength;
      if (copyTo !== undefined && !copyTo.write(Buffer.concat([record.value, NEWLINE]))) await new Promise<void>((r) => copyTo.once('drain', () => r()));
    }
    if (batch.length > 0) await send();
  } finally {
    await producer.disconnect();
    if (copyTo !== undefined) await new Promise<void>((resolve) => copyTo.end(() => resolve()));
  }
  return { bytes: valueBytes, ms: performance.now() - started };
}

/**
 * Consume-only baseline: kafkajs eachBatch (through the same client module as the worker) that
 * parses each record as JSON and commits after each batch. Timed from the group join to the
 * last record, like the worker.
 */
export async function baseline(client: KafkaClient, topic: string, total: number): Promise<{ ms: number; events: number; badJson: number }> {
  const consumer = await client.consumer({
    groupId: `bench-baseline-${Date.now()}`,
    topic,
    fromBeginning: true,
    sessionTimeoutMs: 30_000,
    heartbeatIntervalMs: 3_000,
    rebalanceTimeoutMs: 60_000,
    maxWaitTimeMs: 500,
    fetchMaxBytes: 16 * 1024 * 1024,
    fetchMaxBytesPerPartition: 4 * 1024 * 1024,
  });
  let events = 0;
  let badJson = 0;
  let joined = 0;
  let last = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  consumer.onAssigned(() => {
    joined ||= performance.now();
  });
  await consumer.run(async (ctx) => {
    for (const r of ctx.batch.records) {
      try {
        JSON.parse((r.value ?? Buffer.alloc(0)).toString('utf8'));
      } catch {
        badJson++;
      }
      events++;
      ctx.markFetched(r.offset);
    }
    const next = (BigInt(ctx.batch.records[ctx.batch.records.length - 1]?.offset ?? '-1') + 1n).toString();
    await ctx.commit([{ partition: ctx.batch.partition, offset: next }]);
    last = performance.now();
    if (events >= total) done();
  });
  await finished;
  await consumer.disconnect();
  return { ms: last - joined, events, badJson };
}

export interface WorkerRun {
  /** Summaries of the worker processes, metric -> value. */
  summaries: Array<Record<string, unknown>>;
  /** From the first group join to every record committed. */
  wallMs: number;
  /** Highest peak RSS among the workers. */
  peakRssBytes: number;
  /** Highest anonymous (private) RSS seen, sampled every 200 ms: RSS without mapped files such as the chdb library. */
  peakAnonBytes: number;
}

/**
 * The real worker(s), as separate processes, until the group committed everything: each with its
 * own embedded ClickHouse under dbRoot, or the sink flags `sinkFlags(i)` gives (bench/fleet.ts:
 * `--clickhouse URL`, one server database for all).
 */
export async function workers(brokers: readonly string[], admin: KafkaAdmin, topic: string, dbRoot: string, count: number, sinkFlags?: (i: number) => readonly string[], extraArgs?: readonly string[]): Promise<WorkerRun> {
  const group = `bench-worker-${Date.now()}`;
  const extra = extraArgs ?? (values['worker-args'] === '' ? [] : values['worker-args'].split(' '));
  let joinedAt = 0;
  const procs = Array.from({ length: count }, (_, i) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), 'consume', '--brokers', brokers.join(','), '--topic', topic, '--group', group, ...(sinkFlags?.(i) ?? ['--db', join(dbRoot, `db-${i}`)]), '--progress-interval-ms', '10000', '--format', 'json', ...extra], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const proc = { child, stderr: [] as string[], stdout: '', peakRss: 0, peakAnon: 0, exited: new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code))) };
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n').filter((l) => l !== '')) {
        proc.stderr.push(line);
        if (line.startsWith('Joined group') && joinedAt === 0) joinedAt = performance.now();
        if (/^(Progress|Retrying|Stopped|Joined)/.test(line)) log(`  worker ${i}: ${line}`);
      }
    });
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      proc.stdout += c;
    });
    return proc;
  });
  const rssTimer = setInterval(() => {
    for (const p of procs) {
      try {
        const status = readFileSync(`/proc/${p.child.pid}/status`, 'utf8');
        const hwm = /VmHWM:\s+([0-9]+) kB/.exec(status);
        if (hwm) p.peakRss = Math.max(p.peakRss, Number(hwm[1]) * 1024);
        const anon = /RssAnon:\s+([0-9]+) kB/.exec(status);
        if (anon) p.peakAnon = Math.max(p.peakAnon, Number(anon[1]) * 1024);
      } catch {
        // exited
      }
    }
  }, 200);
  const started = performance.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    const highs = await admin.highWatermarks(topic);
    const committed = await admin.committedOffsets(group, topic);
    if ([...highs].every(([p, h]) => (committed.get(p) ?? 0n) >= h)) break;
    const dead = procs.find((p) => p.child.exitCode !== null);
    if (dead) throw new Error(`worker exited early (${dead.child.exitCode}):\n${dead.stderr.slice(-20).join('\n')}`);
  }
  const wallMs = performance.now() - (joinedAt || started);
  for (const p of procs) p.child.kill('SIGTERM');
  await Promise.all(procs.map((p) => p.exited));
  clearInterval(rssTimer);
  const summaries = procs.map((p) => {
    const summary: Record<string, unknown> = {};
    for (const line of p.stdout.split('\n').filter((l) => l.startsWith('{'))) {
      const row = JSON.parse(line) as { metric: string; value: unknown };
      summary[row.metric] = row.value;
    }
    return summary;
  });
  const peakRssBytes = Math.max(...procs.map((p, i) => Math.max(p.peakRss, Number(summaries[i]?.['peak_rss_bytes'] ?? 0))));
  return { summaries, wallMs, peakRssBytes, peakAnonBytes: Math.max(...procs.map((p) => p.peakAnon)) };
}

/** The core pipeline alone on the same events: `toolcanon replay` of them from a file, in a child process. */
async function replay(file: string, db: string): Promise<{ summary: Record<string, unknown>; peakRssBytes: number }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), 'replay', file, '--db', db, '--format', 'json', '--no-progress'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  let peak = 0;
  const timer = setInterval(() => {
    try {
      const hwm = /VmHWM:\s+([0-9]+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (hwm) peak = Math.max(peak, Number(hwm[1]) * 1024);
    } catch {
      // exited
    }
  }, 200);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearInterval(timer);
  if (code !== 0) throw new Error(`replay failed (${code}): ${stderr.slice(-2000)}`);
  const summary: Record<string, unknown> = {};
  for (const line of stdout.split('\n').filter((l) => l.startsWith('{'))) {
    const row = JSON.parse(line) as { metric: string; value: unknown };
    summary[row.metric] = row.value;
  }
  return { summary, peakRssBytes: peak };
}

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main(): Promise<void> {
  const availability = await ensureKafka();
  if (!('brokers' in availability)) throw new Error(`no Kafka broker: ${availability.skip}`);
  const brokers = availability.brokers;
  const client = createKafkaClient({ brokers, clientId: 'toolcanon-bench', log });
  const admin = await client.admin();
  const reuse = values['reuse-topic'];
  const topic = reuse ?? `bench-e2e-${Date.now()}`;
  const workerCount = Number(values.workers);
  const dbRoot = mkdtempSync(join(tmpdir(), 'toolcanon-bench-'));
  try {
    let total = N;
    let bytes: number;
    if (reuse === undefined) {
      const templates = loadTemplates();
      const templateEvents = templates.reduce((n, f) => n + f.length, 0);
      log(`Producing ${fmt(N)} events to ${topic} (${PARTITIONS} partitions) from ${templateEvents} fixture events in ${templates.length} files...`);
      await admin.ensureTopic(topic, { partitions: PARTITIONS });
      const copy = values['skip-replay'] ? undefined : createWriteStream(join(dbRoot, 'events.jsonl'));
      const produced = await produce(client, topic, templates, copy);
      bytes = produced.bytes;
      log(`  produced ${fmt(N)} events, ${fmt(bytes / 1e6, 1)} MB in ${fmt(produced.ms / 1000, 1)} s${values.keep ? ` (kept: --reuse-topic ${topic})` : ''}`);
    } else {
      total = sumHighs(await admin.highWatermarks(topic));
      bytes = Number.NaN;
      log(`Reusing ${topic}: ${fmt(total)} events`);
    }

    let base: { ms: number; events: number; badJson: number } | undefined;
    if (!values['skip-baseline']) {
      log('Baseline: consume-only (eachBatch + JSON.parse, commit per batch)...');
      base = await baseline(client, topic, total);
      log(`  ${fmt(base.events)} events in ${fmt(base.ms / 1000, 2)} s`);
    }

    let core: { summary: Record<string, unknown>; peakRssBytes: number } | undefined;
    if (reuse === undefined && !values['skip-replay']) {
      log('Core pipeline alone: toolcanon replay of the same events from a file (no Kafka)...');
      core = await replay(join(dbRoot, 'events.jsonl'), join(dbRoot, 'replay-db'));
      log(`  ${fmt(Number(core.summary['events_read']))} events in ${fmt(Number(core.summary['elapsed_ms']) / 1000, 2)} s`);
    }

    log(`Worker: ${workerCount} x toolcanon consume (decode, project, account, ClickHouse, commit after ack)...`);
    const run = await workers(brokers, admin, topic, dbRoot, workerCount);
    const sum = (metric: string): number => run.summaries.reduce((n, s) => n + Number(s[metric] ?? 0), 0);
    const consumed = sum('events_consumed');
    const accounted = sum('rows_written') + sum('dead_letters');
    const rate = (total * 1000) / run.wallMs;
    const mb = bytes / 1e6;
    const mbps = (ms: number): string => (Number.isNaN(mb) ? '?' : fmt((mb * 1000) / ms, 1));
    const lines = [
      '',
      `kafka-e2e: ${fmt(total)} events${Number.isNaN(mb) ? '' : `, ${fmt(mb, 1)} MB (mean ${fmt(bytes / total)} B/event)`}, ${PARTITIONS} partitions, ${workerCount} worker process(es), embedded ClickHouse`,
      ...(base === undefined
        ? []
        : [`  baseline consume-only   ${fmt((base.events * 1000) / base.ms).padStart(10)} events/s  ${mbps(base.ms).padStart(7)} MB/s  (${fmt(base.ms / 1000, 2)} s, group join -> last record)`]),
      ...(core === undefined
        ? []
        : [
            `  core pipeline (replay)  ${fmt((Number(core.summary['events_read']) * 1000) / Number(core.summary['elapsed_ms'])).padStart(10)} events/s  ${mbps(Number(core.summary['elapsed_ms'])).padStart(7)} MB/s  (${fmt(Number(core.summary['elapsed_ms']) / 1000, 2)} s, same events from a file, no Kafka; peak RSS ${fmt(core.peakRssBytes / 2 ** 20, 1)} MiB)`,
          ]),
      `  worker end to end       ${fmt(rate).padStart(10)} events/s  ${mbps(run.wallMs).padStart(7)} MB/s  (${fmt(run.wallMs / 1000, 2)} s, group join -> all committed)`,
      ...(base === undefined ? [] : [`  ratio worker / baseline ${fmt(rate / ((base.events * 1000) / base.ms), 3)}  (target >= 0.5)`]),
      ...(core === undefined ? [] : [`  ratio worker / replay   ${fmt(rate / ((Number(core.summary['events_read']) * 1000) / Number(core.summary['elapsed_ms'])), 3)}  (what Kafka and the worker add to the core pipeline)`]),
      `  target 50,000 events/s: ${rate >= 50_000 ? 'met' : 'NOT met'}`,
      `  worker peak RSS         ${fmt(run.peakRssBytes / 2 ** 20, 1)} MiB (limit 512 MiB: ${run.peakRssBytes <= RSS_LIMIT_BYTES ? 'within' : 'EXCEEDED'}); anonymous (private) part ${fmt(run.peakAnonBytes / 2 ** 20, 1)} MiB, the rest is mapped files (the chdb library)`,
      `  accounted: consumed ${fmt(consumed)}, rows + dead letters ${fmt(accounted)}, committed ${fmt(sum('events_committed'))}, flushes ${fmt(sum('flushes'))}, clean exits ${run.summaries.filter((s) => s['clean_exit'] === true).length}/${workerCount}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    if (workerCount === 1 && (consumed !== total || accounted !== total)) process.stdout.write(`  WARNING: accounting mismatch (expected ${total})\n`);
  } finally {
    if (!values.keep && reuse === undefined) {
      for (const t of [topic, `${topic}.dlq`]) if ((await admin.partitionCount(t)) !== undefined) await admin.deleteTopics([t]).catch(() => undefined);
    }
    await admin.disconnect();
    rmSync(dbRoot, { recursive: true, force: true });
  }
}

export function sumHighs(highs: ReadonlyMap<number, bigint>): number {
  let n = 0n;
  for (const h of highs.values()) n += h;
  return Number(n);
}

if (IS_MAIN) await main();
