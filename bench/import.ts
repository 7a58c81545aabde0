// Import throughput on the shared corpus (Claude Code + Codex), next to ccusage on the same
// files in the same run. toolcanon does strictly more (projection, estimation, accounting,
// ClickHouse writes); ccusage only reads and sums. Prints MB/s, events/s and the ratio of wall
// times. Usage: npx tsx bench/import.ts [repeats=3]. The corpus is ../shared/corpus beside the
// checkout, or $TOOLCANON_CORPUS (as for the tests); without it the benchmark says so and exits 2.
// toolcanon is timed twice: one process per harness (import claude-code, then import codex), and
// `import all` (both in one process).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ClickHouseSink } from '../src/sink/clickhouse.ts';

const REPEATS = Number(process.argv[2] ?? 3);
const CORPUS = resolve(process.env['TOOLCANON_CORPUS'] ?? new URL('../../shared/corpus/', import.meta.url).pathname);
const CLAUDE = join(CORPUS, 'claude-code/projects');
const CODEX = join(CORPUS, 'codex/sessions');
for (const dir of [CLAUDE, CODEX]) {
  if (!existsSync(dir)) {
    console.error(`bench/import.ts needs the shared corpus: ${dir} does not exist. Put the corpus at ../shared/corpus beside the checkout or point $TOOLCANON_CORPUS at a copy.`);
    process.exit(2);
  }
}

function bytesUnder(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? bytesUnder(p) : e.name.endsWith('.jsonl') ? statSync(p).size : 0;
  }
  return n;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-bench-import-'));
try {
  // ccusage reads $CLAUDE_CONFIG_DIR/projects and $CODEX_HOME/sessions.
  const claudeHome = join(tmp, 'claude');
  const codexHome = join(tmp, 'codex');
  mkdirSync(claudeHome);
  mkdirSync(codexHome);
  symlinkSync(CLAUDE, join(claudeHome, 'projects'));
  symlinkSync(CODEX, join(codexHome, 'sessions'));
  const env = { ...process.env, CLAUDE_CONFIG_DIR: claudeHome, CODEX_HOME: codexHome };
  // Install once through npm exec, then time the installed binaries directly (no npm overhead).
  const locate = (pkg: string, bin: string): string => {
    const r = spawnSync('npm', ['exec', '--yes', `--package=${pkg}`, '--', 'which', bin], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`cannot install ${pkg}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const bins = [locate('ccusage@18.0.11', 'ccusage'), locate('@ccusage/codex@18.0.11', 'ccusage-codex')];
  const timed = (cmd: string, args: string[], withEnv: NodeJS.ProcessEnv = env): number => {
    const t = performance.now();
    const r = spawnSync(cmd, args, { env: withEnv, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
    return (performance.now() - t) / 1000;
  };
  const ccusage = (): number => bins.reduce((sum, bin) => sum + timed(bin, ['session', '--json', '--offline']), 0);
  const toolcanonBin = new URL('../bin/toolcanon.mjs', import.meta.url).pathname;

  const mb = (bytesUnder(CLAUDE) + bytesUnder(CODEX)) / 1e6;
  const ours: number[] = [];
  const oursAll: number[] = [];
  const theirs: number[] = [];
  // import all finds the harnesses by their default folders: only the two above (HOME holds no other).
  const home = join(tmp, 'home');
  mkdirSync(home);
  const allEnv = { ...env, HOME: home };
  let events = 0;
  // The fixed cost of one process: Node's start, the modules, the engine's library and session,
  // a new database, the close; an import of an empty folder pays exactly that.
  const empty = join(tmp, 'empty');
  mkdirSync(empty);
  const fixed: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    // Both tools as a user runs them: one process per harness, start-up included.
    const db = join(tmp, `db-${i}`);
    ours.push(
      timed(process.execPath, [toolcanonBin, 'import', 'claude-code', CLAUDE, '--db', db, '--format', 'json']) +
        timed(process.execPath, [toolcanonBin, 'import', 'codex', CODEX, '--db', db, '--format', 'json']),
    );
    oursAll.push(timed(process.execPath, [toolcanonBin, 'import', 'all', '--db', join(tmp, `db-all-${i}`), '--format', 'json'], allEnv));
    fixed.push(timed(process.execPath, [toolcanonBin, 'import', 'codex', empty, '--db', join(tmp, `db-empty-${i}`), '--format', 'json', '--allow-dead-letters']));
    theirs.push(ccusage());
    if (i === 0) {
      const sink = await ClickHouseSink.open({ db });
      const [row] = await sink.queryRows<{ n: string }>("SELECT (SELECT count() FROM tool_calls FINAL) + (SELECT count() FROM token_usage FINAL WHERE source = 'observed') AS n");
      events = Number(row?.n ?? 0);
      await sink.close();
    }
  }
  const o = median(ours);
  const a = median(oursAll);
  const c = median(theirs);
  console.log(`corpus: ${mb.toFixed(1)} MB of Claude Code + Codex logs, ${events} events (tool calls + usage)`);
  console.log(`toolcanon import (both, into embedded ClickHouse): ${o.toFixed(2)} s  ${(mb / o).toFixed(1)} MB/s  ${(events / o).toFixed(0)} events/s  (median of ${REPEATS}, process start included)`);
  console.log(`toolcanon import all (both, one process):           ${a.toFixed(2)} s  ${(mb / a).toFixed(1)} MB/s  ${(events / a).toFixed(0)} events/s  (median of ${REPEATS})`);
  console.log(`ccusage session --json (both):                     ${c.toFixed(2)} s  ${(mb / c).toFixed(1)} MB/s  (median of ${REPEATS})`);
  console.log(`ratio of wall times ccusage / toolcanon: ${(c / o).toFixed(2)} one process per harness, ${(c / a).toFixed(2)} import all (> 1: toolcanon is faster)`);
  // What no import can go below here: the fixed cost of its process(es), against the time the
  // target (1.5 x ccusage's speed) leaves.
  const f = median(fixed);
  console.log(`fixed cost of one toolcanon process (start, engine open, new database, close; an empty folder imported): ${f.toFixed(2)} s (median of ${REPEATS})`);
  console.log(`  the target (ccusage / toolcanon >= 1.5) leaves ${(c / 1.5).toFixed(2)} s: the fixed cost is ${((100 * f) / (c / 1.5)).toFixed(0)} % of it for import all, ${((100 * 2 * f) / (c / 1.5)).toFixed(0)} % for one process per harness; import all spends ${(a - f).toFixed(2)} s past it reading, decoding and writing ${mb.toFixed(1)} MB`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
