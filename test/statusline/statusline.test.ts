// `toolcanon statusline` through the command line, on transcripts built here so that their last
// usage gives exactly the figures of SPEC §5's edge: 849 of a 1000-token window does not reach
// 85 %, 850 does (>=); headroom moves it; streamed copies of one response count once; bad stdin
// is one line and exit 2; a transcript not written yet is said, exit 0; with a running serve
// owning the database, today's cost is the database's, equal to report usage --by day's.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/toolcanon.mjs', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'toolcanon-statusline-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const models = join(root, 'models.json');
writeFileSync(models, JSON.stringify({ 'edge-model': 1000 }));

let n = 0;
interface Usage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}
/** One assistant line of a transcript, as Claude Code writes it. */
function assistant(id: string, model: string, u: Usage, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({
    type: 'assistant',
    sessionId: 's',
    uuid: `u${++n}`,
    timestamp: new Date().toISOString(),
    requestId: `req-${id}`,
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: 'ok' }],
      usage: { input_tokens: u.input, output_tokens: u.output, cache_read_input_tokens: u.cacheRead ?? 0, cache_creation_input_tokens: u.cacheWrite ?? 0 },
    },
    ...extra,
  })}\n`;
}
const user = (text: string): string => `${JSON.stringify({ type: 'user', sessionId: 's', uuid: `u${++n}`, timestamp: new Date().toISOString(), message: { role: 'user', content: text } })}\n`;

function statusline(input: string, args: readonly string[] = [], cacheDir = join(root, 'cache')): { code: number; stdout: string; stderr: string } {
  // No owner's database unless a test names one (--db): the default .toolcanon/db of the working directory is not looked at.
  const env = { ...process.env, TOOLCANON_STATUSLINE_DIR: cacheDir, TOOLCANON_DB: join(root, 'no-db') };
  const r = spawnSync(process.execPath, [BIN, 'statusline', '--models', models, ...args], { input, encoding: 'utf8', env, timeout: 60_000 });
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

function stdinFor(session: string, transcript: string, model = 'edge-model'): string {
  return JSON.stringify({ session_id: session, transcript_path: transcript, model: { id: model, display_name: 'Edge' }, workspace: { current_dir: root }, cost: { total_cost_usd: 0 } });
}

interface Status {
  context_tokens: number | null;
  context_window_tokens: number | null;
  context_pct: number | null;
  threshold_tokens: number | null;
  above_threshold: boolean;
  session_cost_usd: string;
  session_unpriced: number;
  today_cost_usd: string;
  today_unpriced: number;
  today_source: string;
  note?: string;
}

function json(input: string, args: readonly string[] = [], cacheDir?: string): Status {
  const r = statusline(input, ['--format', 'json', ...args], cacheDir);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Status;
}

/** A transcript whose last response leaves `used` tokens in the context (input 400 + cache 300 + 100 + output), written as streamed copies. */
function edgeTranscript(name: string, used: number): string {
  const path = join(root, `${name}.jsonl`);
  const output = used - 800;
  writeFileSync(
    path,
    user('hi') +
      assistant('msg_1', 'edge-model', { input: 10, output: 5 }) +
      user('more') +
      // The streamed copies of one response: a partial output count first, then the final one.
      assistant('msg_2', 'edge-model', { input: 400, output: 1, cacheRead: 300, cacheWrite: 100 }) +
      assistant('msg_2', 'edge-model', { input: 400, output, cacheRead: 300, cacheWrite: 100 }) +
      // A subagent's request in the main transcript (older builds): its own window, not this context.
      assistant('msg_side', 'edge-model', { input: 1, output: 1 }, { isSidechain: true }),
  );
  return path;
}

describe('statusline at the 85 % edge (SPEC §5)', () => {
  it('849 of 1000 does not reach 85 %', () => {
    const path = edgeTranscript('t849', 849);
    const s = json(stdinFor('t849', path));
    expect(s.context_tokens).toBe(849);
    expect(s.context_window_tokens).toBe(1000);
    expect(s.context_pct).toBeCloseTo(84.9, 10);
    expect(s.threshold_tokens).toBe(850);
    expect(s.above_threshold).toBe(false);
    const line = statusline(stdinFor('t849', path));
    expect(line.code).toBe(0);
    expect(line.stdout).toBe('Edge · ctx 849/1000 84.9% · threshold 85% at 850 · session $0.00+? · today $0.00+?\n');
  });

  it('850 of 1000 reaches it (>=)', () => {
    const path = edgeTranscript('t850', 850);
    const s = json(stdinFor('t850', path));
    expect(s.context_tokens).toBe(850);
    expect(s.above_threshold).toBe(true);
    expect(statusline(stdinFor('t850', path)).stdout).toBe('Edge · ctx 850/1000 85.0% · ≥ 85% threshold · session $0.00+? · today $0.00+?\n');
  });

  it('headroom moves the threshold earlier by exactly the headroom', () => {
    const path = edgeTranscript('t849h', 849);
    const s = json(stdinFor('t849h', path), ['--headroom-tokens', '1']);
    expect(s.threshold_tokens).toBe(849);
    expect(s.above_threshold).toBe(true);
    expect(json(stdinFor('t849h', path), ['--threshold-pct', '84']).above_threshold).toBe(true);
  });

  it('an unknown model has no window: no share, no threshold, said', () => {
    const path = edgeTranscript('tunk', 849);
    const r = statusline(stdinFor('tunk', path).replace(/edge-model/g, 'x'), []);
    expect(r.code).toBe(0);
    // The transcript's model (edge-model) wins over stdin's id: the window is known.
    expect(r.stdout).toContain('849/1000');
  });
});

describe('statusline cost and incremental reading', () => {
  it('prices each response once (streamed copies collapse) and follows the transcript as it grows, a torn line waiting', () => {
    const cache = join(root, 'cache-cost');
    const path = join(root, 'cost.jsonl');
    // claude-sonnet-4-5: $3 input, $15 output, $0.30 cache read, $3.75 cache write per million (prompts up to 200k).
    writeFileSync(path, user('go') + assistant('m1', 'claude-sonnet-4-5', { input: 100_000, output: 1 }) + assistant('m1', 'claude-sonnet-4-5', { input: 100_000, output: 10_000 }));
    const first = json(stdinFor('cost', path, 'claude-sonnet-4-5'), [], cache);
    expect(first.session_cost_usd).toBe('0.450000');
    expect(first.session_unpriced).toBe(0);
    expect(first.context_tokens).toBe(110_000);
    // A second response, its last line torn (no newline yet): not counted until complete.
    const next = assistant('m2', 'claude-sonnet-4-5', { input: 10, output: 10, cacheRead: 100_000, cacheWrite: 0 });
    appendFileSync(path, next.slice(0, 40));
    expect(json(stdinFor('cost', path, 'claude-sonnet-4-5'), [], cache).session_cost_usd).toBe('0.450000');
    appendFileSync(path, next.slice(40));
    const grown = json(stdinFor('cost', path, 'claude-sonnet-4-5'), [], cache);
    // + 10 × 3 + 10 × 15 + 100 000 × 0.30 micro-dollars: $0.03018.
    expect(grown.session_cost_usd).toBe('0.480180');
    expect(grown.context_tokens).toBe(100_020);
    // The same answer from a fresh cache (the whole file read at once).
    expect(json(stdinFor('cost', path, 'claude-sonnet-4-5'), [], join(root, 'cache-cost-2')).session_cost_usd).toBe('0.480180');
    // Today: every session that showed the line today (one here), to the micro-dollar.
    expect(grown.today_cost_usd).toBe('0.480180');
    const other = join(root, 'cost-other.jsonl');
    writeFileSync(other, assistant('o1', 'claude-sonnet-4-5', { input: 100_000, output: 0 }));
    expect(json(stdinFor('other', other, 'claude-sonnet-4-5'), [], cache).today_cost_usd).toBe('0.780180');
  });

  it("counts a session's subagent transcripts in its cost, not in its context", () => {
    const cache = join(root, 'cache-sub');
    const path = join(root, 'sess.jsonl');
    writeFileSync(path, assistant('a1', 'claude-sonnet-4-5', { input: 100_000, output: 0 }));
    mkdirSync(join(root, 'sess', 'subagents'), { recursive: true });
    writeFileSync(join(root, 'sess', 'subagents', 'agent-x.jsonl'), assistant('b1', 'claude-sonnet-4-5', { input: 200_000, output: 0 }, { isSidechain: true, agentId: 'x' }));
    const s = json(stdinFor('sess', path, 'claude-sonnet-4-5'), [], cache);
    expect(s.session_cost_usd).toBe('0.900000');
    expect(s.context_tokens).toBe(100_000);
  });
});

describe('statusline input', () => {
  it.each([
    ['not JSON', 'nope', /stdin is not JSON/],
    ['empty', '', /stdin was empty/],
    ['an array', '[]', /not an object/],
    ['no session_id', '{"transcript_path":"/x.jsonl"}', /no session_id/],
    ['a transcript_path that is no string', '{"session_id":"s","transcript_path":5}', /transcript_path is number/],
  ])('refuses %s in one line, exit 2', (_what, input, message) => {
    const r = statusline(input);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a transcript not written yet: the model and why there is no context, exit 0', () => {
    const r = statusline(stdinFor('new', join(root, 'not-yet.jsonl')));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Edge · ctx – \(no transcript yet at .*not-yet\.jsonl\) · session \$0\.00 · today /);
    const s = json(stdinFor('new', join(root, 'not-yet.jsonl')));
    expect(s.context_tokens).toBeNull();
    expect(s.note).toMatch(/no transcript yet/);
  });

  it('refuses an unknown flag and a bad format (exit 2)', () => {
    expect(statusline('{}', ['--format', 'csv']).code).toBe(2);
    const r = statusline('{}', ['--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bogus/);
  });
});

describe('statusline with a running serve owning the database', () => {
  it("reads today's cost through it (every request of the day, as report usage --by day prices it), and falls back to its caches without it", async () => {
    const db = join(root, 'owned-db');
    const cache = join(root, 'cache-owned');
    const path = join(root, 'owned.jsonl');
    // Two sessions' worth of today's requests in the database; the status line's own cache has seen none of them.
    writeFileSync(path, user('go') + assistant('w1', 'claude-sonnet-4-5', { input: 100_000, output: 10_000 }) + assistant('w2', 'claude-sonnet-4-5', { input: 10, output: 10, cacheRead: 100_000 }));
    const other = join(root, 'owned-other.jsonl');
    writeFileSync(
      other,
      assistant('w3', 'claude-sonnet-4-5', { input: 100_000, output: 0 }) +
        assistant('w4', 'no-such-model-x', { input: 5, output: 5 }) +
        // Above the prompt limits (200k; wide-model's 100k): the long-context prices of the --prices file below.
        assistant('w5', 'claude-sonnet-4-5', { input: 250_000, output: 0 }) +
        assistant('w6', 'wide-model', { input: 150_000, output: 0 }) +
        assistant('w7', 'wide-model', { input: 50_000, output: 0 }),
    );
    const pricesFile = join(root, 'owned-prices.json');
    const sonnet = { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15, max_prompt_tokens: 200_000, long_context: { input: 6, cache_read: 0.6, cache_write: 7.5, output: 22.5 } };
    writeFileSync(pricesFile, JSON.stringify({ 'claude-sonnet-4-5': sonnet, 'wide-model': { input: 1, cache_read: 0.1, cache_write: 1, output: 2, max_prompt_tokens: 100_000, long_context: { input: 2, cache_read: 0.2, cache_write: 2, output: 4 } } }));
    const withPrices = ['--prices', pricesFile];
    const serve = spawn(process.execPath, [BIN, 'serve', '--db', db, '--format', 'json'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let serveErr = '';
    serve.stderr?.on('data', (c: Buffer) => (serveErr += c.toString()));
    try {
      const info = await new Promise<{ engine_pid: number }>((resolve, reject) => {
        let out = '';
        serve.stdout?.on('data', (c: Buffer) => {
          out += c.toString();
          if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] as string) as { engine_pid: number });
        });
        serve.once('exit', (code) => reject(new Error(`serve exited ${code}: ${serveErr}`)));
      });
      expect(info.engine_pid).toBeGreaterThan(0);
      const imported = spawnSync(process.execPath, [BIN, 'import', 'claude-code', path, other, '--db', db, '--format', 'json'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
      expect(imported.status, imported.stderr).toBe(0);
      const report = spawnSync(process.execPath, [BIN, 'report', 'usage', '--by', 'day', '--db', db, '--format', 'json', ...withPrices], { cwd: root, encoding: 'utf8', timeout: 120_000 });
      expect(report.status, report.stderr).toBe(0);
      const today = new Date().toISOString().slice(0, 10);
      const row = report.stdout.trim().split('\n').map((l) => JSON.parse(l) as { day: string; cost_usd: number | null; cost_flags: string }).find((r) => r.day === today);
      // One request without a price: the report's row says so (no total), the status line counts it apart.
      expect(row).toMatchObject({ cost_usd: null, cost_flags: 'unknown_price:no-such-model-x=1' });

      const t = performance.now();
      const s = json(stdinFor('owned', path, 'claude-sonnet-4-5'), ['--db', db, ...withPrices], cache);
      console.log(`statusline through the owner: ${Math.round(performance.now() - t)} ms (cold, spawned)`);
      expect(s.today_source).toBe('database');
      // $0.45 + $0.03018 + $0.30, + $1.50 (250k at the long-context $6), + $0.30 (150k at $2) + $0.05 (50k at $1).
      expect(s.today_cost_usd).toBe('2.630180');
      expect(s.today_unpriced).toBe(1);
      // The session's own figures are still the transcript's.
      expect(s.session_cost_usd).toBe('0.480180');
      const line = statusline(stdinFor('owned', path, 'claude-sonnet-4-5'), ['--db', db, ...withPrices], cache);
      expect(line.stdout).toMatch(/ · today \$2\.63\+\?\n$/);
      // The priced part is report usage's own figure for those requests (every row here is today's): --by model, the priced models summed.
      const byModel = spawnSync(process.execPath, [BIN, 'report', 'usage', '--by', 'model', '--db', db, '--format', 'json', ...withPrices], { cwd: root, encoding: 'utf8', timeout: 120_000 });
      expect(byModel.status, byModel.stderr).toBe(0);
      const models = byModel.stdout.trim().split('\n').map((l) => JSON.parse(l) as { model: string; cost_usd: number | null });
      expect(models.map((m) => [m.model, m.cost_usd])).toEqual([['claude-sonnet-4-5', 2.28018], ['no-such-model-x', null], ['wide-model', 0.35]]);
      const micro = models.reduce((n, m) => n + Math.round((m.cost_usd ?? 0) * 1e6), 0);
      expect(s.today_cost_usd).toBe((micro / 1e6).toFixed(6));
    } finally {
      const exited = new Promise((resolve) => serve.once('exit', resolve));
      if (serve.exitCode === null) serve.kill('SIGTERM');
      await exited;
    }
    // No owner: today is the caches' again (this session only).
    const after = json(stdinFor('owned', path, 'claude-sonnet-4-5'), ['--db', db, ...withPrices], cache);
    expect(after.today_source).toBe('statusline_sessions');
    expect(after.today_cost_usd).toBe('0.480180');
  });
});

describe('statusline bundle (scripts/bundle-statusline.mjs)', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  it('is built by npm run build from the statusline command and the modules it imports, each a source that exists; the statusline runs from it', () => {
    const inputs = JSON.parse(readFileSync(join(root, 'dist/statusline.inputs.json'), 'utf8')) as string[];
    expect(inputs).toContain('src/cli/statusline-command.ts');
    expect(inputs).toContain('src/statusline/statusline.ts');
    for (const source of inputs) expect(existsSync(join(root, source)), source).toBe(true);
    // Nothing of the engine, the ClickHouse client or the pipeline is in it.
    expect(inputs.filter((s) => /sink\/clickhouse|chdb|pipeline|decode\//.test(s))).toEqual([]);
    const bundle = readFileSync(join(root, 'dist/statusline.mjs'), 'utf8');
    expect(bundle).not.toMatch(/from ['"](chdb|@clickhouse\/client)['"]/);
  });
});
