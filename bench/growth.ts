// Growth: replay of N events over N/10 sessions into a fresh embedded ClickHouse, for each N
// given (default 100k and 1M), each in a process of its own that samples its memory while it
// works. Time should grow linearly (events/s within ±15 % across sizes) and memory stay flat.
// RSS is split as Linux counts it: anonymous memory (what the pipeline and the engine allocate)
// and file-backed pages (the ~560 MB engine library as far as it was touched: shared, clean,
// reclaimable). The baseline, measured in the same run on the same file, is read + split +
// JSON.parse. Usage: npx tsx bench/growth.ts [N…]   (e.g. 100000 1000000 10000000, as disk allows)
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { replayPaths } from '../src/pipeline/batch-writer.ts';
import { ClickHouseSink } from '../src/sink/clickhouse.ts';
import { readLines } from '../src/source/file.ts';
import { fixtureLines } from './fixtures.ts';


interface Memory {
  readonly rssMb: number;
  readonly anonMb: number;
  readonly fileMb: number;
  /** V8's heap in use and the memory of buffers outside it: the JavaScript side of anon. */
  readonly heapMb: number;
  readonly externalMb: number;
}

function memoryNow(): Memory {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) / 1024;
  const m = process.memoryUsage();
  return { rssMb: kb('VmRSS'), anonMb: kb('RssAnon'), fileMb: kb('RssFile'), heapMb: m.heapUsed / 1e6, externalMb: m.external / 1e6 };
}


/** Writes N distinct events over N/10 sessions (streamed: the file is never held in memory). */
async function writeEvents(file: string, n: number): Promise<void> {
  const base = fixtureLines().map((l) => JSON.parse(l) as Record<string, unknown>);
  const out = createWriteStream(file);
  const sessions = Math.max(1, Math.floor(n / 10));
  for (let i = 0; i < n; i++) {
    const event = { ...(base[i % base.length] as Record<string, unknown>) };
    event['session_id'] = `${String(event['session_id'])}-${i % sessions}`;
    event['call_id'] = `${String(event['call_id'] ?? event['request_id'] ?? 'e')}-${i}`;
    if (event['type'] === 'usage') event['request_id'] = `${String(event['request_id'])}-${i}`;
    delete event['event_id'];
    if (!out.write(`${JSON.stringify(event)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** The child: replays the file, sampling its own memory every 250 ms; prints one JSON line. */
async function child(file: string, db: string): Promise<void> {
  let peak: Memory = memoryNow();
  const samples: Array<{ events: number; memory: Memory; engineMb: number }> = [];
  const sample = (): void => {
    const m = memoryNow();
    if (m.rssMb > peak.rssMb) peak = m;
  };
  const timer = setInterval(sample, 250);
  const parseStart = performance.now();
  let parsed = 0;
  for await (const line of readLines(createReadStream(file, { highWaterMark: 1 << 20 }), file)) {
    JSON.parse(Buffer.from(line.bytes).toString('utf8'));
    parsed++;
  }
  const parseSeconds = (performance.now() - parseStart) / 1000;
  const afterParse = memoryNow();
  const sink = await ClickHouseSink.open({ db });
  const afterOpen = memoryNow();
  // What the engine itself says it holds (its memory tracker: inserts, merges, caches; not the
  // allocator's retained pages), asked between the replay's own queries; its highest value and
  // the last one read at each tenth of the input.
  let engineMb = 0;
  let enginePeakMb = 0;
  let asking = false;
  const askEngine = async (): Promise<void> => {
    if (asking) return;
    asking = true;
    try {
      const rows = await sink.queryDisplayRows("SELECT value FROM system.metrics WHERE metric = 'MemoryTracking'");
      engineMb = Number(rows[0]?.['value'] ?? 0) / 1e6;
      if (engineMb > enginePeakMb) enginePeakMb = engineMb;
    } catch {
      // a sample missed (the engine busy closing): the next one is asked in 250 ms
    } finally {
      asking = false;
    }
  };
  const engineTimer = setInterval(() => void askEngine(), 250);
  const start = performance.now();
  let lastBytes = 0;
  const total = statSync(file).size;
  const counts = await replayPaths([file], sink, {
    onProgress: (bytes) => {
      // A memory sample at each tenth of the input, to show whether it grows with the events seen.
      if (bytes - lastBytes >= total / 10) {
        lastBytes = bytes;
        samples.push({ events: Math.round((parsed * bytes) / total), memory: memoryNow(), engineMb });
        sample();
      }
    },
  });
  const seconds = (performance.now() - start) / 1000;
  sample();
  clearInterval(timer);
  clearInterval(engineTimer);
  while (asking) await new Promise((r) => setTimeout(r, 10));
  await sink.close();
  console.log(JSON.stringify({ parsed, parseSeconds, seconds, rowsWritten: counts.rowsWritten, deadLetters: counts.deadLetters, eventsRead: counts.eventsRead, afterParse, afterOpen, peak, samples, enginePeakMb }));
}

async function main(): Promise<void> {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  const runs: Array<{ n: number; r: { parsed: number; parseSeconds: number; seconds: number; rowsWritten: number; eventsRead: number; deadLetters: number; afterOpen: Memory; peak: Memory; samples: Array<{ events: number; memory: Memory; engineMb: number }>; enginePeakMb: number }; mb: number }> = [];
  for (const n of sizes.length > 0 ? sizes : [100_000, 1_000_000]) {
    const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-growth-'));
    try {
      const file = join(tmp, 'events.jsonl');
      await writeEvents(file, n);
      const mb = statSync(file).size / 1e6;
      const c = spawnSync(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, '--child', file, join(tmp, 'db')], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      if (c.status !== 0) throw new Error(`child for ${n} events failed: ${c.stderr}`);
      const r = JSON.parse(c.stdout.trim().split('\n').at(-1) as string) as (typeof runs)[number]['r'];
      if (r.eventsRead !== n || r.rowsWritten + r.deadLetters !== n) throw new Error(`count mismatch at ${n}: read ${r.eventsRead}, rows ${r.rowsWritten}, dead ${r.deadLetters}`);
      runs.push({ n, r, mb });
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  for (const { n, r } of runs) {
    console.log(`${n}: samples (events: anon / JS heap / external / the engine's tracker MB) ${r.samples.map((x) => `${x.events}: ${x.memory.anonMb.toFixed(0)}/${x.memory.heapMb.toFixed(0)}/${x.memory.externalMb.toFixed(0)}/${x.engineMb.toFixed(0)}`).join(', ')}`);
    console.log(`${n}: the engine's tracked memory at most ${r.enginePeakMb.toFixed(0)} MB (sampled every 250 ms); peak anonymous ${r.peak.anonMb.toFixed(0)} MB with JS heap ${r.peak.heapMb.toFixed(0)} + external ${r.peak.externalMb.toFixed(0)} MB at that moment`);
  }
  console.log('events     sessions  MB      parse-only ev/s  replay ev/s  ratio  peak RSS MB (anon + file)  RSS after engine open  anon at 10% / 50% / 100% of the input');
  for (const { n, r, mb } of runs) {
    const at = (f: number): string => (r.samples[Math.min(r.samples.length - 1, Math.max(0, Math.round(f * r.samples.length) - 1))]?.memory.anonMb ?? 0).toFixed(0);
    console.log(
      `${String(n).padEnd(10)} ${String(Math.floor(n / 10)).padEnd(9)} ${mb.toFixed(0).padEnd(7)} ${(r.parsed / r.parseSeconds).toFixed(0).padStart(15)}  ${(n / r.seconds).toFixed(0).padStart(11)}  ${(r.parseSeconds / r.seconds).toFixed(3)}  ${r.peak.rssMb.toFixed(0).padStart(6)} (${r.peak.anonMb.toFixed(0)} + ${r.peak.fileMb.toFixed(0)})${' '.repeat(12)}${r.afterOpen.rssMb.toFixed(0).padStart(6)}               ${at(0.1)} / ${at(0.5)} / ${at(1)}`,
    );
  }
  if (runs.length > 1) {
    const first = runs[0] as (typeof runs)[number];
    for (const run of runs.slice(1)) {
      const rate = (x: (typeof runs)[number]): number => x.n / x.r.seconds;
      console.log(`growth ${first.n} -> ${run.n}: events/s ratio ${(rate(run) / rate(first)).toFixed(3)} (linear time = 1.000), peak anonymous RSS ratio ${(run.r.peak.anonMb / first.r.peak.anonMb).toFixed(3)} (flat = 1.000)`);
    }
  }
}

if (process.argv[2] === '--child') await child(process.argv[3] as string, process.argv[4] as string);
else await main();
