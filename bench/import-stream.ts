// Peak memory of `import claude-code` against the size of the file: generated transcripts of
// each size (MB, default 50 100 200), each imported in a fresh process into a fresh embedded
// ClickHouse, streamed (the runner as shipped) and, as the same-run baseline, read whole (the
// same importer made to read its file at once, as every importer did before issue 14). Prints
// peak anonymous RSS (V8 heap, buffers and the engine's allocations, sampled every 20 ms), peak
// total RSS (VmHWM: adds the engine's mapped code), events/s, and the ratio whole / streamed.
// Usage: npx tsx bench/import-stream.ts [MB…]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeCodeImporter } from '../src/importers/claude-code/index.ts';
import { runImport } from '../src/importers/run.ts';
import type { Importer } from '../src/importers/types.ts';
import { ClickHouseSink } from '../src/sink/clickhouse.ts';
import { writeClaudeTranscript } from '../test/importers/generate-claude-code.ts';

type Mode = 'streamed' | 'whole';

interface ChildResult {
  readonly peakAnonMB: number;
  readonly hwmMB: number;
  readonly seconds: number;
  readonly events: number;
  readonly rows: number;
}

function statusMB(field: 'RssAnon' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function child(mode: Mode, file: string, db: string): Promise<void> {
  const importer: Importer = mode === 'streamed' ? claudeCodeImporter : { ...claudeCodeImporter, readingOf: () => ({ kind: 'document' }) };
  let peakAnonMB = 0;
  const sample = (): void => {
    peakAnonMB = Math.max(peakAnonMB, statusMB('RssAnon'));
  };
  const timer = setInterval(sample, 20);
  const sink = await ClickHouseSink.open({ db });
  const t = performance.now();
  const summary = await runImport(importer, [file], sink);
  const seconds = (performance.now() - t) / 1000;
  sample();
  clearInterval(timer);
  await sink.close();
  const result: ChildResult = { peakAnonMB, hwmMB: statusMB('VmHWM'), seconds, events: summary.eventsEmitted, rows: summary.counts.rowsWritten };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function runChild(mode: Mode, file: string, db: string): ChildResult {
  const r = spawnSync(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, '--child', mode, file, db], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`child ${mode} ${file} failed: ${r.stderr}`);
  const last = r.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as ChildResult;
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') {
    await child(process.argv[3] as Mode, process.argv[4] ?? '', process.argv[5] ?? '');
    return;
  }
  const sizes = process.argv.slice(2).map(Number);
  const sizesMB = sizes.length > 0 ? sizes : [50, 100, 200];
  const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-bench-import-stream-'));
  try {
    console.log('| file | events | streamed: peak anon RSS | streamed: peak RSS | streamed events/s | whole: peak anon RSS | whole: peak RSS | whole events/s | anon RSS whole / streamed |');
    console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const mb of sizesMB) {
      const file = join(tmp, `session-${mb}.jsonl`);
      const generated = writeClaudeTranscript(file, mb * 1e6);
      const streamed = runChild('streamed', file, join(tmp, `db-${mb}-s`));
      const whole = runChild('whole', file, join(tmp, `db-${mb}-w`));
      for (const r of [streamed, whole]) if (r.rows !== generated.events) throw new Error(`expected ${generated.events} rows, got ${r.rows}`);
      const f = (x: number): string => `${x.toFixed(0)} MB`;
      console.log(
        `| ${(generated.bytes / 1e6).toFixed(0)} MB | ${generated.events} | ${f(streamed.peakAnonMB)} | ${f(streamed.hwmMB)} | ${(streamed.events / streamed.seconds).toFixed(0)} | ${f(whole.peakAnonMB)} | ${f(whole.hwmMB)} | ${(whole.events / whole.seconds).toFixed(0)} | ${(whole.peakAnonMB / streamed.peakAnonMB).toFixed(2)} |`,
      );
      rmSync(file, { force: true });
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
