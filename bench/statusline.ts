// `toolcanon statusline` as Claude Code runs it (a process per prompt, the built dist through
// bin/toolcanon.mjs): wall time warm (the transcript's cache written by a first run), median and
// p95 over RUNS, beside `node -e 0` in the same run (the floor any Node command pays), and a
// check that the run loads no engine (chdb) and no ClickHouse client.
// Usage: npx tsx bench/statusline.ts [runs=30] [transcript=the corpus's largest Claude Code transcript]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const RUNS = Number(process.argv[2] ?? 30);
const ROOT = new URL('..', import.meta.url).pathname;
const CORPUS = resolve(process.env['TOOLCANON_CORPUS'] ?? join(ROOT, '../shared/corpus'));
const transcript = process.argv[3] ?? join(CORPUS, 'claude-code/projects/spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl');
if (!existsSync(transcript)) {
  console.error(`bench/statusline.ts needs a transcript: ${transcript} does not exist (the shared corpus, or give one)`);
  process.exit(2);
}
// The built dist, as an installed toolcanon runs (bin/toolcanon.mjs falls back to tsx when it is stale).
const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
if (build.status !== 0) {
  console.error(`npm run build failed:\n${build.stdout}${build.stderr}`);
  process.exit(1);
}
const cache = mkdtempSync(join(tmpdir(), 'toolcanon-bench-statusline-'));
const input = JSON.stringify({ session_id: 'bench', transcript_path: transcript, model: { id: 'claude-opus-4-6', display_name: 'Opus 4.6' }, workspace: { current_dir: ROOT } });
const env = { ...process.env, TOOLCANON_STATUSLINE_DIR: cache };

function time(args: readonly string[], stdin = ''): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { input: stdin, encoding: 'utf8', env, cwd: tmpdir() });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] as number;

try {
  const cold = time([join(ROOT, 'bin/toolcanon.mjs'), 'statusline'], input);
  const runs: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    runs.push(time([join(ROOT, 'bin/toolcanon.mjs'), 'statusline'], input));
    floor.push(time(['-e', '0']));
  }
  // What the run loads: no chdb, no @clickhouse/client.
  const loaded = spawnSync(process.execPath, ['--import', 'data:text/javascript,import{registerHooks}from"node:module";', join(ROOT, 'bin/toolcanon.mjs'), 'statusline'], { input, encoding: 'utf8', env: { ...env, NODE_DEBUG: 'module' }, cwd: tmpdir() });
  const engine = /chdb|@clickhouse\/client/.test(loaded.stderr);
  const line = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), 'statusline'], { input, encoding: 'utf8', env }).stdout.trim();
  console.log(`transcript ${transcript} (${(statSync(transcript).size / 1e6).toFixed(1)} MB); first run (cache written) ${cold.toFixed(0)} ms`);
  console.log(`statusline warm, ${RUNS} runs: median ${pct(runs, 50).toFixed(0)} ms, p95 ${pct(runs, 95).toFixed(0)} ms (target median <= 150 ms); node -e 0 in the same run: median ${pct(floor, 50).toFixed(0)} ms (ratio ${(pct(runs, 50) / pct(floor, 50)).toFixed(2)})`);
  console.log(`engine or client loaded: ${engine ? 'YES' : 'no'}; line: ${line}`);
} finally {
  rmSync(cache, { recursive: true, force: true });
}
