// CPU profiles of the hot paths, summarised as the shares in docs/profiles/: self time and
// inclusive time per function. The events are bench/replay.ts's (the fixtures multiplied into N
// distinct sessions). The compiled code is profiled (`npm run build` first), as the bin runs it,
// and only the measured part (not making the events): the profile is written to OUT.
//   npx tsx bench/profile.ts replay 100000 /tmp/replay.cpuprofile
//   npx tsx bench/profile.ts decode 100000 /tmp/decode.cpuprofile
//   npx tsx bench/profile.ts summary /tmp/replay.cpuprofile [top=40]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { multipliedEvents, ROOT } from './fixtures.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Shares of all samples by function: self time, and inclusive time (each function once per sample). */
export function summarise(profile: { nodes: ProfileNode[]; samples: number[] }, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const key = (n: ProfileNode): string => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
  const counts = new Map<number, number>();
  for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, c] of counts) {
    const k = key(byId.get(id) as ProfileNode);
    self.set(k, (self.get(k) ?? 0) + c);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const kk = key(byId.get(at) as ProfileNode);
      if (seen.has(kk)) continue;
      seen.add(kk);
      inclusive.set(kk, (inclusive.get(kk) ?? 0) + c);
    }
  }
  const total = profile.samples.length;
  const list = (m: Map<string, number>, title: string): string[] => [
    `== ${title}`,
    ...[...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`),
  ];
  return [...list(self, 'self'), ...list(inclusive, 'inclusive')].join('\n');
}

/** Runs `work` under the V8 profiler and writes the profile to `out`. */
async function profiled(out: string | undefined, work: () => Promise<void>): Promise<void> {
  if (out === undefined) throw new Error('bench/profile.ts replay|decode N OUT.cpuprofile: OUT missing');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  await work();
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(out, JSON.stringify(profile));
  session.disconnect();
}

const [mode, arg, topArg] = process.argv.slice(2);
if (mode === 'summary' && arg !== undefined) {
  console.log(summarise(JSON.parse(readFileSync(arg, 'utf8')) as { nodes: ProfileNode[]; samples: number[] }, Number(topArg ?? 40)));
} else if (mode === 'replay' || mode === 'decode') {
  const n = Number(arg ?? 100_000);
  const dist = (m: string): string => join(ROOT, 'dist', m);
  const lines = multipliedEvents(n);
  if (mode === 'decode') {
    const { decodeEvent, nowClickHouseTime, DEFAULT_LIMITS } = (await import(dist('decode/event.js'))) as typeof import('../src/decode/event.ts');
    const buffers = lines.map((l) => Buffer.from(l));
    const at = nowClickHouseTime();
    await profiled(topArg, async () => {
      for (let round = 0; round < 4; round++) {
        let t = performance.now();
        for (const b of buffers) JSON.parse(b.toString('utf8'));
        const parse = performance.now() - t;
        t = performance.now();
        for (let i = 0; i < buffers.length; i++) decodeEvent(buffers[i] as Buffer, `events.jsonl:${i + 1}`, at, DEFAULT_LIMITS);
        const decode = performance.now() - t;
        console.log(`round ${round + 1}: JSON.parse ${((1000 * parse) / n).toFixed(2)} µs/event, decodeEvent ${((1000 * decode) / n).toFixed(2)} µs/event`);
      }
    });
  } else {
    const { replayPaths } = (await import(dist('pipeline/batch-writer.js'))) as typeof import('../src/pipeline/batch-writer.ts');
    const { ClickHouseSink } = (await import(dist('sink/clickhouse.js'))) as typeof import('../src/sink/clickhouse.ts');
    const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-profile-'));
    try {
      const file = join(tmp, 'events.jsonl');
      writeFileSync(file, `${lines.join('\n')}\n`);
      await profiled(topArg, async () => {
        const sink = await ClickHouseSink.open({ db: join(tmp, 'db') });
        const t = performance.now();
        const counts = await replayPaths([file], sink);
        const s = (performance.now() - t) / 1000;
        await sink.close();
        console.log(`replay (engine open included in the profile): ${counts.rowsWritten} rows of ${n} events in ${s.toFixed(2)} s (${(n / s).toFixed(0)} events/s)`);
      });
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
} else {
  console.error('usage: bench/profile.ts replay|decode [N] | summary FILE [top]');
  process.exit(2);
}
