// Replay throughput: the shipped fixtures, multiplied into N distinct events, replayed into a
// fresh embedded ClickHouse, against baselines measured in the same run on the same file
// (read + split + JSON.parse only; and decode/project without the sink, with and without
// secret redaction). Prints the CPU by thread and the time spent in the store's calls.
// Usage: npx tsx bench/replay.ts [N=200000] [--compiled]
// --compiled: the replay step runs the compiled code (dist/, `npm run build` first), as the bin
// does; TOOLCANON_DECODE_THREAD=1 decodes in a worker thread there (src/thread/decode.ts).
import { createReadStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeEvent, nowClickHouseTime, DEFAULT_LIMITS } from '../src/decode/event.ts';
import { replayPaths } from '../src/pipeline/batch-writer.ts';
import { ClickHouseSink } from '../src/sink/clickhouse.ts';
import { readLines } from '../src/source/file.ts';
import { fixtureLines, multipliedEvents } from './fixtures.ts';
import { boundSeconds, cpuSplit, describeSplit, type CpuSplit } from './threads.ts';

const args = process.argv.slice(2);
const compiled = args.includes('--compiled');
const N = Number(args.find((a) => !a.startsWith('--')) ?? 200_000);


/** The sink with the time each of its asynchronous calls took added up in `into`, by method. */
function timeCalls<S extends object>(sink: S, into: Map<string, { n: number; ms: number }>): S {
  return new Proxy(sink, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function' || typeof prop !== 'string') return v;
      return (...a: unknown[]): unknown => {
        const t = performance.now();
        const r: unknown = (v as (...x: unknown[]) => unknown).apply(target, a);
        if (!(r instanceof Promise)) return r;
        return r.then((x: unknown) => {
          const e = into.get(prop) ?? { n: 0, ms: 0 };
          e.n++;
          e.ms += performance.now() - t;
          into.set(prop, e);
          return x;
        });
      };
    },
  });
}

async function time<T>(label: string, run: () => Promise<T>): Promise<{ label: string; seconds: number; result: T }> {
  const t = performance.now();
  const result = await run();
  return { label, seconds: (performance.now() - t) / 1000, result };
}

const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-bench-'));
try {
  const base = fixtureLines();
  const lines = multipliedEvents(N);
  const file = join(tmp, 'events.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const mb = statSync(file).size / 1e6;

  const parse = () =>
    time('baseline: read + split + JSON.parse', async () => {
      let n = 0;
      for await (const line of readLines(createReadStream(file, { highWaterMark: 1 << 20 }), file)) {
        JSON.parse(Buffer.from(line.bytes).toString('utf8'));
        n++;
      }
      return n;
    });
  const decodeWith = (label: string, limits: typeof DEFAULT_LIMITS) =>
    time(label, async () => {
      let n = 0;
      const at = nowClickHouseTime();
      for await (const line of readLines(createReadStream(file, { highWaterMark: 1 << 20 }), file)) {
        if (decodeEvent(line.bytes, line.source, at, limits).kind !== 'dead') n++;
      }
      return n;
    });
  const verbatim = { ...DEFAULT_LIMITS, redact: false };
  // The baseline and each decode twice, alternating, the faster run of each kept: the first loop
  // also pays for the JIT (a baseline timed once, first, swung 167-280 k events/s between runs).
  const best = <T extends { seconds: number }>(a: T, b: T): T => (a.seconds <= b.seconds ? a : b);
  const runs = [];
  const decodeSplits: CpuSplit[] = [];
  for (let i = 0; i < 2; i++) {
    runs.push(await parse());
    const cpuDecode = await cpuSplit();
    runs.push(await decodeWith('decode + validate + project (no sink)', DEFAULT_LIMITS));
    decodeSplits.push(cpuDecode());
    runs.push(await decodeWith('decode, --no-redact (what redaction costs)', verbatim));
  }
  const parseOnly = best(runs[0]!, runs[3]!);
  const decodeOnly = best(runs[1]!, runs[4]!);
  const decodeSplit = decodeSplits[decodeOnly === runs[1] ? 0 : 1]!;
  const decodeVerbatim = best(runs[2]!, runs[5]!);
  // One engine per process: the compiled run opens its own sink instead of this one.
  const dist = compiled
    ? {
        pipeline: (await import(new URL('../dist/pipeline/batch-writer.js', import.meta.url).href)) as typeof import('../src/pipeline/batch-writer.ts'),
        sink: (await import(new URL('../dist/sink/clickhouse.js', import.meta.url).href)) as typeof import('../src/sink/clickhouse.ts'),
        thread: (await import(new URL('../dist/thread/decode.js', import.meta.url).href)) as typeof import('../src/thread/decode.ts'),
      }
    : undefined;
  const sink = await (dist?.sink.ClickHouseSink ?? ClickHouseSink).open({ db: join(tmp, 'db') });
  const replay = dist?.pipeline.replayPaths ?? replayPaths;
  const calls = new Map<string, { n: number; ms: number }>();
  const timedSink = timeCalls(sink, calls);
  const cpu = await cpuSplit();
  const full = await time(compiled ? 'replay (compiled code)' : 'replay into embedded ClickHouse', () => replay([file], timedSink));
  const split: CpuSplit = cpu();
  await sink.close();
  if (dist) console.log(`compiled replay: decode threads started ${dist.thread.decodeThreadsStarted()}`);

  if (parseOnly.result !== N || decodeOnly.result !== N || full.result.rowsWritten !== N) {
    throw new Error(`count mismatch: parse ${parseOnly.result}, decode ${decodeOnly.result}, replay ${full.result.rowsWritten} of ${N}`);
  }
  const rss = process.memoryUsage().rss / 1e6;
  console.log(`events: ${N} (${mb.toFixed(1)} MB, from ${base.length} fixture events)`);
  for (const r of [parseOnly, decodeOnly, decodeVerbatim, full]) {
    console.log(`${r.label.padEnd(40)} ${(N / r.seconds).toFixed(0).padStart(9)} events/s  ${(mb / r.seconds).toFixed(1).padStart(6)} MB/s  ${r.seconds.toFixed(2)} s`);
  }
  console.log(`ratio replay / parse-only baseline: ${(parseOnly.seconds / full.seconds).toFixed(3)}`);
  console.log(`ratio decode / parse-only baseline: ${(parseOnly.seconds / decodeOnly.seconds).toFixed(3)}`);
  console.log(`ratio decode with redaction / without: ${(decodeVerbatim.seconds / decodeOnly.seconds).toFixed(3)}`);
  console.log(`rss at end: ${rss.toFixed(0)} MB`);
  // Where the replay's CPU went, and the fastest the same work could run on this machine's cores.
  const cores = availableParallelism();
  console.log('decode (no sink) CPU by thread:');
  for (const line of describeSplit(decodeSplit, N, decodeOnly.seconds, cores).slice(0, 4)) console.log(line);
  console.log('replay CPU by thread:');
  for (const line of describeSplit(split, N, full.seconds, cores)) console.log(line);
  // The store's calls: a batch's run one after another (one batch written at a time), and the
  // embedded engine runs one query at a time, so their sum is how long the writing was busy.
  let callMs = 0;
  for (const c of calls.values()) callMs += c.ms;
  console.log(`the store's calls (awaited one at a time): ${(callMs / 1000).toFixed(2)} s of the replay's ${full.seconds.toFixed(2)} s; the longest:`);
  for (const [name, c] of [...calls].sort((a, b) => b[1].ms - a[1].ms).slice(0, 6)) console.log(`  ${name.padEnd(28)} ${String(c.n).padStart(4)} calls  ${(c.ms / 1000).toFixed(2)} s`);
  const boundRate = N / boundSeconds(split, cores);
  console.log(`ratio of that bound to the parse-only baseline: ${(boundRate / (N / parseOnly.seconds)).toFixed(3)} (the replay's own ratio: ${(parseOnly.seconds / full.seconds).toFixed(3)})`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
