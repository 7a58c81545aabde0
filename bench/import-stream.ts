// Peak memory of `import claude-code` or `import codex` against the size of the file: generated
// transcripts or rollouts of each size (MB, default 50 100 200), each imported in a fresh process
// into a fresh embedded ClickHouse, streamed (the runner as shipped) and, as the same-run
// baseline, read whole: the same importer made to read its file at once, as every importer was
// before issue 14 (Codex's whole-file parser of then, measured in docs/performance.md, is gone
// with the test oracles that kept it, issue 31). Prints peak anonymous RSS
// (V8 heap, buffers and the engine's allocations, sampled every 20 ms), peak total RSS (VmHWM:
// adds the engine's mapped code), peak JavaScript memory (V8 heap used plus external buffers,
// the importer's side of the anonymous RSS), events/s, and the ratios whole / streamed of
// anonymous RSS and streamed / whole of events/s. With --repeat N the two modes run N times
// alternately: memory is the median run's, events/s the fastest run's (the least disturbed by
// other work on the machine).
// Usage: npx tsx bench/import-stream.ts [claude-code|codex] [--repeat N] [MB…]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeCodeImporter } from '../src/importers/claude-code/index.ts';
import { codexImporter } from '../src/importers/codex/index.ts';
import { runImport } from '../src/pipeline/import.ts';
import type { Importer } from '../src/importers/types.ts';
import { ClickHouseSink } from '../src/sink/clickhouse.ts';
import { writeClaudeTranscript } from '../test/importers/generate-claude-code.ts';
import { GENERATED_CODEX_FILE, writeCodexRollout } from '../test/importers/generate-codex.ts';

type Mode = 'streamed' | 'whole';
type Benched = 'claude-code' | 'codex';

/** The importer as shipped (streamed), or made to read its file at once as before issue 14 (whole). */
function importerFor(which: Benched, mode: Mode): Importer {
  const importer = which === 'claude-code' ? claudeCodeImporter : codexImporter;
  return mode === 'streamed' ? importer : { ...importer, readingOf: () => ({ kind: 'document' }) };
}

/** Writes a generated file of about `bytes` of the importer's format. */
function generate(which: Benched, dir: string, mb: number): { file: string; bytes: number; events: number } {
  if (which === 'claude-code') {
    const file = join(dir, `session-${mb}.jsonl`);
    return { file, ...writeClaudeTranscript(file, mb * 1e6) };
  }
  const file = join(dir, `${mb}-${GENERATED_CODEX_FILE}`);
  return { file, ...writeCodexRollout(file, mb * 1e6) };
}

interface ChildResult {
  readonly peakAnonMB: number;
  readonly hwmMB: number;
  readonly peakJsMB: number;
  readonly seconds: number;
  readonly events: number;
  readonly rows: number;
}

function statusMB(field: 'RssAnon' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function child(which: Benched, mode: Mode, file: string, db: string): Promise<void> {
  const importer = importerFor(which, mode);
  let peakAnonMB = 0;
  let peakJsMB = 0;
  const sample = (): void => {
    peakAnonMB = Math.max(peakAnonMB, statusMB('RssAnon'));
    const m = process.memoryUsage();
    peakJsMB = Math.max(peakJsMB, (m.heapUsed + m.external) / 2 ** 20);
  };
  const timer = setInterval(sample, 20);
  const sink = await ClickHouseSink.open({ db });
  const t = performance.now();
  const summary = await runImport(importer, [file], sink);
  const seconds = (performance.now() - t) / 1000;
  sample();
  clearInterval(timer);
  await sink.close();
  const result: ChildResult = { peakAnonMB, hwmMB: statusMB('VmHWM'), peakJsMB, seconds, events: summary.eventsEmitted, rows: summary.counts.rowsWritten };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function runChild(which: Benched, mode: Mode, file: string, db: string): ChildResult {
  const r = spawnSync(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, '--child', which, mode, file, db], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`child ${mode} ${file} failed: ${r.stderr}`);
  const last = r.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as ChildResult;
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') {
    await child(process.argv[3] as Benched, process.argv[4] as Mode, process.argv[5] ?? '', process.argv[6] ?? '');
    return;
  }
  const args = process.argv.slice(2);
  const which: Benched = args[0] === 'codex' || args[0] === 'claude-code' ? (args.shift() as Benched) : 'claude-code';
  let repeat = 1;
  const at = args.indexOf('--repeat');
  if (at >= 0) {
    repeat = Math.max(1, Number(args[at + 1]));
    args.splice(at, 2);
  }
  const sizes = args.map(Number);
  const sizesMB = sizes.length > 0 ? sizes : [50, 100, 200];
  const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-bench-import-stream-'));
  try {
    console.log(`import ${which}, ${repeat} run(s) of each mode per size`);
    console.log('| file | events | streamed: peak anon RSS | streamed: peak RSS | streamed: peak JS | streamed events/s | whole: peak anon RSS | whole: peak RSS | whole: peak JS | whole events/s | anon RSS whole / streamed | events/s streamed / whole |');
    console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const mb of sizesMB) {
      const generated = generate(which, tmp, mb);
      const runs: Record<Mode, ChildResult[]> = { streamed: [], whole: [] };
      for (let i = 0; i < repeat; i++) {
        for (const mode of ['streamed', 'whole'] as const) {
          const db = join(tmp, `db-${mb}-${mode}-${i}`);
          const r = runChild(which, mode, generated.file, db);
          rmSync(db, { recursive: true, force: true });
          if (r.rows !== generated.events) throw new Error(`expected ${generated.events} rows, got ${r.rows}`);
          runs[mode].push(r);
        }
      }
      const median = (list: ChildResult[], key: 'peakAnonMB' | 'hwmMB' | 'peakJsMB'): number => {
        const sorted = list.map((r) => r[key]).sort((a, b) => a - b);
        return sorted[(sorted.length - 1) >> 1] ?? Number.NaN;
      };
      const rate = (list: ChildResult[]): number => Math.max(...list.map((r) => r.events / r.seconds));
      const f = (x: number): string => `${x.toFixed(0)} MB`;
      const s = runs.streamed;
      const w = runs.whole;
      console.log(
        `| ${(generated.bytes / 1e6).toFixed(0)} MB | ${generated.events} | ${f(median(s, 'peakAnonMB'))} | ${f(median(s, 'hwmMB'))} | ${f(median(s, 'peakJsMB'))} | ${rate(s).toFixed(0)} | ${f(median(w, 'peakAnonMB'))} | ${f(median(w, 'hwmMB'))} | ${f(median(w, 'peakJsMB'))} | ${rate(w).toFixed(0)} | ${(median(w, 'peakAnonMB') / median(s, 'peakAnonMB')).toFixed(2)} | ${(rate(s) / rate(w)).toFixed(2)} |`,
      );
      rmSync(generated.file, { force: true });
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
