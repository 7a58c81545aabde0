// Replay throughput: the shipped fixtures, multiplied into N distinct events, replayed into a
// fresh embedded ClickHouse, against baselines measured in the same run on the same file
// (read + split + JSON.parse only; and decode/project without the sink, with and without
// secret redaction).
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
  const cpu = await cpuSplit();
  const full = await time(compiled ? 'replay (compiled code)' : 'replay into embedded ClickHouse', () => replay([file], sink));
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
  const boundRate = N / boundSeconds(split, cores);
  console.log(`ratio of that bound to the parse-only baseline: ${(boundRate / (N / parseOnly.seconds)).toFixed(3)} (the replay's own ratio: ${(parseOnly.seconds / full.seconds).toFixed(3)})`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
