// A report asked again on a data directory whose tables have not changed answers from the rows it
// kept, without starting the engine (src/report/cache.ts): the same output as the usual way. Any
// change of the tables (a replay, SQL run by another process, a merge), another grouping, scope or
// price table, or TOOLCANON_REPORT_CACHE=0 takes the usual way.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { jsonExact, REPORT_CACHE_DIR, REPORT_CACHE_ENTRIES, readReportCache, tablesStamp, writeReportCache, type ReportCacheKey } from '../../src/report/cache.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('report-cache');
afterAll(() => tmp.cleanup());

const DB = join(tmp.dir, 'db');
const ENV: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME: tmp.dir, TOOLCANON_HOST: 'box', TOOLCANON_DEVICE_ID: 'dev-1' };
const REUSED = '(its tables unchanged since the rows of this report were made: rows reused)';

function toolcanon(args: string[], env: NodeJS.ProcessEnv = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args], { cwd: tmp.dir, encoding: 'utf8', env: { ...ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const report = (...args: string[]): ReturnType<typeof toolcanon> => toolcanon(['report', ...args, '--db', DB, '--format', 'json']);
/** The same report the usual way, keeping nothing. */
const uncached = (...args: string[]): ReturnType<typeof toolcanon> => toolcanon(['report', ...args, '--db', DB, '--format', 'json'], { TOOLCANON_REPORT_CACHE: '0' });
const kept = (): string[] => (existsSync(join(DB, REPORT_CACHE_DIR)) ? readdirSync(join(DB, REPORT_CACHE_DIR)) : []);

/** A usage event of its own session (one request of `model`, `input` tokens). */
function usage(session: string, day: string, model: string, input: number): string {
  return JSON.stringify({ schema: 'toolcanon.event/v1', type: 'usage', ts: `${day}T10:00:00.000Z`, harness: 'codex', session_id: session, turn_id: 't-1', model, request_id: `req-${session}`, input_tokens: input, output_tokens: 100 });
}
function replay(name: string, lines: string[]): void {
  const file = join(tmp.dir, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  const r = toolcanon(['replay', file, '--db', DB, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
}

/** Another process holding the data directory's engine (its lock), until stopped. */
async function holdEngine(dir: string, then = ''): Promise<ChildProcess> {
  const chdb = createRequire(import.meta.url).resolve('chdb');
  const child = spawn(process.execPath, ['-e', `const { Session } = require(${JSON.stringify(chdb)}); const s = new Session(${JSON.stringify(dir)}); ${then}; console.log('held'); setInterval(() => {}, 1000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('held')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`the engine holder exited (${code})`)));
  });
  return child;
}
async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('report: rows reused while the tables are unchanged', () => {
  let first: ReturnType<typeof toolcanon>;

  it('the first report computes its rows and keeps them', () => {
    replay('a.jsonl', [usage('s-a', '2026-11-01', 'gpt-5', 1000), usage('s-b', '2026-11-02', 'gpt-5', 2000)]);
    first = report('usage', '--by', 'day');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toContain(REUSED);
    expect(JSON.parse(first.stdout.trim().split('\n')[0] ?? '{}')).toMatchObject({ day: '2026-11-01' });
    expect(kept()).toHaveLength(1);
  });

  it('asked again while another process holds the engine: the same rows, said reused, no engine started', async () => {
    const holder = await holdEngine(DB);
    try {
      const again = report('usage', '--by', 'day');
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe(first.stdout);
      expect(again.stderr).toContain(`database: embedded ClickHouse at ${DB} ${REUSED}`);
      // Not kept: the usual way finds the directory in use.
      const other = report('usage', '--by', 'model');
      expect(other.code).not.toBe(0);
      expect(other.stderr).toContain('in use');
    } finally {
      await stop(holder);
    }
  });

  it('another grouping or scope is its own report', () => {
    for (const args of [['usage', '--by', 'model'], ['usage', '--by', 'day', '--since', '2026-11-02'], ['tools'], ['drift'], ['discovery'], ['discovery', '--by', 'tool']]) {
      const r = report(...args);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toContain(REUSED);
      expect(r.stdout).toBe(uncached(...args).stdout);
      expect(report(...args).stderr).toContain(REUSED);
    }
    // discovery's table format prints both of its tables: its own report.
    const table = (env: NodeJS.ProcessEnv = {}): ReturnType<typeof toolcanon> => toolcanon(['report', 'discovery', '--db', DB, '--format', 'table'], env);
    const both = table();
    expect(both.code, both.stderr).toBe(0);
    expect(both.stderr).not.toContain(REUSED);
    expect(both.stdout).toContain('Discovery per MCP tool');
    const bothAgain = table();
    expect(bothAgain.stderr).toContain(REUSED);
    expect(bothAgain.stdout).toBe(both.stdout);
    expect(bothAgain.stdout).toBe(table({ TOOLCANON_REPORT_CACHE: '0' }).stdout);
    const since = report('usage', '--by', 'day', '--since', '2026-11-02');
    expect(since.stdout).not.toBe(first.stdout);
  });

  it('a new price table is another report; the same file again reuses', () => {
    const prices = join(tmp.dir, 'prices.json');
    const table = (input: number): string => JSON.stringify({ 'gpt-5': { input, cache_read: 0, cache_write: 0, output: 1 } });
    writeFileSync(prices, table(1));
    const one = report('usage', '--by', 'day', '--prices', prices);
    expect(one.stderr).not.toContain(REUSED);
    expect(report('usage', '--by', 'day', '--prices', prices).stderr).toContain(REUSED);
    writeFileSync(prices, table(2));
    const two = report('usage', '--by', 'day', '--prices', prices);
    expect(two.code, two.stderr).toBe(0);
    expect(two.stderr).not.toContain(REUSED);
    expect(two.stdout).not.toBe(one.stdout);
    expect(two.stdout).toBe(uncached('usage', '--by', 'day', '--prices', prices).stdout);
  });

  it('a replay makes the most recently asked reports again: they answer with its events; an older one is computed again', () => {
    const older = report('drift');
    expect(older.stderr).toContain(REUSED);
    for (const args of [['usage', '--by', 'model'], ['tools'], ['usage', '--by', 'day']]) expect(report(...args).stderr).toContain(REUSED);
    replay('b.jsonl', [usage('s-c', '2026-11-03', 'gpt-5', 3000)]);
    // The three asked last: made again by the replay, so reused, and equal to the usual way.
    for (const args of [['usage', '--by', 'day'], ['usage', '--by', 'model'], ['tools']]) {
      const after = report(...args);
      expect(after.code, after.stderr).toBe(0);
      expect(after.stderr, args.join(' ')).toContain(REUSED);
      expect(after.stdout).toBe(uncached(...args).stdout);
    }
    expect(report('usage', '--by', 'day').stdout).toContain('2026-11-03');
    // drift was asked before them: its rows no longer match the tables.
    const drift = report('drift');
    expect(drift.stderr).not.toContain(REUSED);
    expect(drift.stdout).toBe(uncached('drift').stdout);
  });

  it('rows written by SQL toolcanon did not run (another process on the engine) are seen', async () => {
    const before = report('usage', '--by', 'day');
    expect(before.stderr).toContain(REUSED);
    const sql = "INSERT INTO token_usage (event_id, session_id, harness, model, ts, source, input_tokens, output_tokens) SELECT 'ext-1', 's-ext', 'codex', 'gpt-5', toDateTime64('2026-11-04 10:00:00', 3, 'UTC'), 'observed', 7, 1";
    const writer = await holdEngine(DB, `s.query(${JSON.stringify(sql)})`);
    await stop(writer);
    const after = report('usage', '--by', 'day');
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).not.toContain(REUSED);
    expect(after.stdout).toContain('2026-11-04');
  });

  it('toolcanon query drops the kept rows; TOOLCANON_REPORT_CACHE=0 neither reuses nor keeps', () => {
    expect(kept().length).toBeGreaterThan(0);
    const q = toolcanon(['query', 'SELECT count() FROM token_usage', '--db', DB, '--format', 'json']);
    expect(q.code, q.stderr).toBe(0);
    expect(kept()).toHaveLength(0);
    const off = uncached('usage', '--by', 'day');
    expect(off.stderr).not.toContain(REUSED);
    expect(kept()).toHaveLength(0);
  });
});

describe('the tables stamp', () => {
  const dir = join(tmp.dir, 'stamp');
  const table = join(dir, 'store', 'abc', 'abc-uuid');
  const definitions = join(dir, 'store', 'def', 'def-uuid');
  mkdirSync(join(table, 'all_1_1_0'), { recursive: true });
  mkdirSync(definitions, { recursive: true });
  mkdirSync(join(dir, 'metadata'));
  writeFileSync(join(definitions, 't.sql'), 'ATTACH TABLE t (a UInt8) ENGINE = MergeTree ORDER BY a');

  it('is the same while nothing changes, and changes with a part, a folder being written, a definition', () => {
    const s0 = tablesStamp(dir);
    expect(s0).toMatch(/^[0-9a-f]{64}$/);
    expect(tablesStamp(dir)).toBe(s0);
    mkdirSync(join(table, 'tmp_insert_all_2_2_0'));
    const writing = tablesStamp(dir);
    expect(writing).not.toBe(s0);
    renameSync(join(table, 'tmp_insert_all_2_2_0'), join(table, 'all_2_2_0'));
    const inserted = tablesStamp(dir);
    expect(inserted).not.toBe(s0);
    expect(inserted).not.toBe(writing);
    rmdirSync(join(table, 'all_1_1_0'));
    expect(tablesStamp(dir)).not.toBe(inserted);
    // A part of the same name again (a block number taken again after a restart): another part.
    const dropped = tablesStamp(dir);
    rmdirSync(join(table, 'all_2_2_0'));
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20); // past the file system clock's tick
    mkdirSync(join(table, 'all_2_2_0'));
    expect(tablesStamp(dir)).not.toBe(dropped);
    const s1 = tablesStamp(dir);
    writeFileSync(join(definitions, 't.sql'), 'ATTACH TABLE t (a UInt8, b UInt8) ENGINE = MergeTree ORDER BY a');
    expect(tablesStamp(dir)).not.toBe(s1);
  });

  it('is undefined for a folder the engine has not written tables to', () => {
    expect(tablesStamp(join(tmp.dir, 'nothing-here'))).toBeUndefined();
  });

  it('keeps rows JSON gives back exactly, and at most REPORT_CACHE_ENTRIES reports', () => {
    const key = (n: number): ReportCacheKey => ({ report: 'usage', by: 'day', format: 'json', scope: { since: undefined }, prices: undefined, code: `c${n}` });
    writeReportCache(dir, [{ key: key(0), rows: [{ a: 1, b: 'x', c: null, d: [true] }] }]);
    expect(readReportCache(dir, key(0))).toEqual([{ a: 1, b: 'x', c: null, d: [true] }]);
    expect(readReportCache(dir, key(1))).toBeUndefined();
    writeReportCache(dir, [{ key: key(2), rows: [{ a: 1n }] }]);
    expect(readReportCache(dir, key(2))).toBeUndefined();
    for (let i = 3; i < 3 + REPORT_CACHE_ENTRIES + 4; i++) writeReportCache(dir, [{ key: key(i), rows: [] }]);
    expect(readdirSync(join(dir, REPORT_CACHE_DIR)).filter((f) => f.endsWith('.json')).length).toBe(REPORT_CACHE_ENTRIES);
    // A change of the tables: nothing kept is reused.
    writeReportCache(dir, [{ key: key(100), rows: [1] }]);
    mkdirSync(join(table, 'all_3_3_0'));
    expect(readReportCache(dir, key(100))).toBeUndefined();
  });

  it('jsonExact: edges both ways', () => {
    for (const v of [null, 'x', 0, 1.5, -2, true, [], {}, [{ a: [1, 'b'] }]]) expect(jsonExact(v), JSON.stringify(v)).toBe(true);
    for (const v of [undefined, Number.NaN, Number.POSITIVE_INFINITY, -0, 1n, new Date(0), [undefined], { a: undefined }, new Map()]) expect(jsonExact(v), String(v)).toBe(false);
  });
});
