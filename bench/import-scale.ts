// `import codex` at scale against @ccusage/codex on the same files, cold, in the same run (issue
// 31's two import targets). The shared Codex corpus (../shared/corpus/codex/sessions, or
// $TOOLCANON_CORPUS) is copied COPIES times (default 40, ~0.5 GB), each copy with its own
// session ids (the rollout's UUID rewritten in its name and its text), into one CODEX_HOME.
// Then, alternately REPEATS times (default 2):
//   - `toolcanon import codex DIR --db NEW` (the built bin, a fresh database each time);
//   - `ccusage-codex daily --offline --json` (18.0.11, reading $CODEX_HOME/sessions);
//   - the daily loop: `toolcanon import codex DIR` again (nothing new) + `report usage --by day`
//     on that database, against ccusage reading everything again; the report twice: the first
//     after the import starts the engine, the second finds the tables unchanged and reuses the
//     rows the first kept (src/report/cache.ts), as a loop run again with nothing new does;
//   - then a day with new logs: one more copy imported into the last database, and the report
//     (which that import made again before closing), twice.
// Prints wall seconds and peak RSS (/usr/bin/time's maximum resident set) of each, the fastest
// run of each kept, and the ratios ccusage / toolcanon (> 1: toolcanon is faster).
// The compiled code is timed (npm run build first, as the bin runs dist/ only when it is current).
// Usage: npx tsx bench/import-scale.ts [copies=40] [repeats=2]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

const COPIES = Number(process.argv[2] ?? 40);
const REPEATS = Number(process.argv[3] ?? 2);
const CORPUS = resolve(process.env['TOOLCANON_CORPUS'] ?? new URL('../../shared/corpus/', import.meta.url).pathname);
const CODEX = join(CORPUS, 'codex/sessions');
if (!existsSync(CODEX)) {
  console.error(`bench/import-scale.ts needs the shared corpus: ${CODEX} does not exist (put it at ../shared/corpus or set $TOOLCANON_CORPUS).`);
  process.exit(2);
}
const BIN = new URL('../bin/toolcanon.mjs', import.meta.url).pathname;
// The bin runs dist/ only when it is newer than every source: built first, so the compiled code is timed.
const build = spawnSync('npm', ['run', 'build'], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8' });
if (build.status !== 0) throw new Error(`npm run build failed: ${build.stderr}`);

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p));
    else if (e.name.endsWith('.jsonl')) out.push(p);
  }
  return out;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

interface Run {
  readonly seconds: number;
  readonly peakMB: number;
}

/** Runs a command under /usr/bin/time: wall seconds and the peak resident set. */
function timed(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv): Run {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'PEAK_KB=%M', cmd, ...args], { env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const seconds = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const kb = /PEAK_KB=([0-9]+)/.exec(r.stderr);
  return { seconds, peakMB: kb ? Number(kb[1]) / 1024 : Number.NaN };
}

const fastest = (runs: readonly Run[]): Run => runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
const fmt = (r: Run): string => `${r.seconds.toFixed(2)} s, peak RSS ${r.peakMB.toFixed(0)} MB`;

const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-bench-scale-'));
try {
  const home = join(tmp, 'codex-home');
  const sessions = join(home, 'sessions');
  let bytes = 0;
  const sources = files(CODEX);
  /** Copy `c` of the corpus into the sessions folder: every UUID of a rollout gets the copy's first 8 digits. */
  const copyCorpus = (c: number): void => {
    const prefix = c.toString(16).padStart(8, '0');
    for (const f of sources) {
      const text = readFileSync(f, 'utf8').replace(UUID, (u) => prefix + u.slice(8));
      const rel = relative(CODEX, f).replace(UUID, (u) => prefix + u.slice(8));
      const out = join(sessions, rel);
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, text);
      bytes += statSync(out).size;
    }
  };
  for (let c = 0; c < COPIES; c++) copyCorpus(c);
  console.log(`corpus: ${COPIES} copies of ${sources.length} Codex rollouts, ${(bytes / 1e6).toFixed(1)} MB`);

  const located = spawnSync('npm', ['exec', '--yes', '--package=@ccusage/codex@18.0.11', '--', 'which', 'ccusage-codex'], { encoding: 'utf8' });
  if (located.status !== 0) throw new Error(`cannot install @ccusage/codex@18.0.11: ${located.stderr}`);
  const ccusageBin = located.stdout.trim();
  const env = { ...process.env, CODEX_HOME: home };

  const ours: Run[] = [];
  const theirs: Run[] = [];
  const loopImport: Run[] = [];
  const loopReport: Run[] = [];
  const loopReportKept: Run[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const db = join(tmp, `db-${i}`);
    ours.push(timed(process.execPath, [BIN, 'import', 'codex', sessions, '--db', db, '--format', 'json'], env));
    theirs.push(timed(ccusageBin, ['daily', '--offline', '--json'], env));
    // The daily loop: the import again (nothing new), then the report.
    loopImport.push(timed(process.execPath, [BIN, 'import', 'codex', sessions, '--db', db, '--format', 'json'], env));
    loopReport.push(timed(process.execPath, [BIN, 'report', 'usage', '--by', 'day', '--db', db, '--format', 'json'], env));
    loopReportKept.push(timed(process.execPath, [BIN, 'report', 'usage', '--by', 'day', '--db', db, '--format', 'json'], env));
    if (i < REPEATS - 1) rmSync(db, { recursive: true, force: true });
  }
  // A day with new logs, on the last database: one more copy of the corpus (its own session ids),
  // imported, then the report (made again by that import: src/report/cache.ts), twice.
  const dayImport: Run[] = [];
  const dayReport: Run[] = [];
  const lastDb = join(tmp, `db-${REPEATS - 1}`);
  for (let d = 0; d < 2; d++) {
    copyCorpus(COPIES + d);
    dayImport.push(timed(process.execPath, [BIN, 'import', 'codex', sessions, '--db', lastDb, '--format', 'json'], env));
    dayReport.push(timed(process.execPath, [BIN, 'report', 'usage', '--by', 'day', '--db', lastDb, '--format', 'json'], env));
  }
  const o = fastest(ours);
  const c = fastest(theirs);
  const li = fastest(loopImport);
  const lr = fastest(loopReport);
  const lk = fastest(loopReportKept);
  console.log(`toolcanon import codex (cold, new database): ${fmt(o)}  (fastest of ${REPEATS}; all: ${ours.map((r) => r.seconds.toFixed(2)).join(', ')} s)`);
  console.log(`ccusage-codex daily --offline --json:        ${fmt(c)}  (fastest of ${REPEATS}; all: ${theirs.map((r) => r.seconds.toFixed(2)).join(', ')} s)`);
  console.log(`ratio ccusage / toolcanon, cold import: ${(c.seconds / o.seconds).toFixed(2)} (target >= 3); toolcanon's peak RSS ${o.peakMB.toFixed(0)} MB (target <= 400)`);
  const loop = li.seconds + lr.seconds;
  console.log(`daily loop: import again (nothing new) ${fmt(li)} + report usage --by day ${fmt(lr)} = ${loop.toFixed(2)} s`);
  console.log(`ratio ccusage / daily loop: ${(c.seconds / loop).toFixed(1)} (target >= 40)`);
  const kept = li.seconds + lk.seconds;
  console.log(`daily loop again (tables unchanged, the report's rows reused): ${fmt(li)} + ${fmt(lk)} = ${kept.toFixed(2)} s; ratio ccusage / that: ${(c.seconds / kept).toFixed(1)}`);
  const di = fastest(dayImport);
  const dr = fastest(dayReport);
  const day = di.seconds + dr.seconds;
  console.log(`a day with new logs (one more copy, ${sources.length} rollouts): import ${fmt(di)} + report ${fmt(dr)} = ${day.toFixed(2)} s; ratio ccusage (on ${COPIES} copies) / that: ${(c.seconds / day).toFixed(1)}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
