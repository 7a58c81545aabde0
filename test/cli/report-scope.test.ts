// Issue 29, item 2: every report honours every scope flag it takes (--since, --until, --harness,
// --host, the set `report html` takes) or refuses it with exit 2; bad days exit 2 in one line.
// The real CLI on both engines with the same assertions (test/helpers/engines.ts: embedded chdb
// and a ClickHouse server), over the shipped fixtures without gemini_cli's (so `--harness
// gemini_cli` is a harness with no rows at all); each engine's database is written once.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTS } from '../../src/cli/report-commands.ts';
import { makeTempDir } from '../helpers/db.ts';
import { cliEnv, forEachEngine } from '../helpers/engines.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('report-scope');
afterAll(() => tmp.cleanup());

/** The database of the engine under test (set in its beforeAll): `--db DIR` or `--clickhouse URL`. */
let dbFlags: readonly string[] = [];

function toolcanon(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args, ...dbFlags], { cwd: tmp.dir, encoding: 'utf8', timeout: 120_000, env: cliEnv() });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const rowsOf = (stdout: string): Record<string, unknown>[] => (stdout.trim() === '' ? [] : stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>));

/** A report's rows as JSON (html: the page's headline figures). */
function reportRows(name: string, flags: string[]): Record<string, unknown>[] {
  if (name === 'html') {
    const out = join(tmp.dir, `page-${flags.join('_').replace(/[^a-z0-9_-]/gi, '')}.html`);
    const r = toolcanon(['report', 'html', '--out', out, ...flags]);
    expect(r.code, r.stderr).toBe(0);
    const headline = /"headline":(\{[^}]*\})/.exec(readFileSync(out, 'utf8'))?.[1];
    const h = JSON.parse(headline ?? '{}') as Record<string, number>;
    // Dead letters have no event time or harness: the page counts them whatever the days.
    return (h['tool_calls'] ?? 0) + (h['requests'] ?? 0) + (h['breaches'] ?? 0) > 0 ? [h] : [];
  }
  const r = toolcanon(['report', name, '--format', 'json', ...flags]);
  expect(r.code, `report ${name} ${flags.join(' ')}: ${r.stderr}`).toBe(0);
  return rowsOf(r.stdout);
}

/** Per flag: a value that leaves no row in the database, and one that keeps every row. */
const SCOPES = {
  since: { none: '2099-01-01', all: '2000-01-01' },
  until: { none: '2000-01-01', all: '2099-12-31' },
  harness: { none: 'gemini_cli', all: undefined },
  host: { none: 'nobody', all: '' },
} as const;

const EVENT_REPORTS = REPORTS.map((r) => r.name).filter((n) => n !== 'dead-letters');

await forEachEngine('test/cli/report-scope.test.ts', (engine) => describe('report scope flags (issue 29 item 2)', () => {
  beforeAll(async () => {
    dbFlags = (await engine.database('report-scope')).flags;
    const dirs = readdirSync(join(ROOT, 'fixtures'), { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'gemini_cli').map((d) => join(ROOT, 'fixtures', d.name));
    const r = toolcanon(['replay', ...dirs, '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
  }, 120_000);

  const unscoped = new Map<string, Record<string, unknown>[]>();
  const full = (name: string): Record<string, unknown>[] => {
    let rows = unscoped.get(name);
    if (rows === undefined) unscoped.set(name, (rows = reportRows(name, [])));
    return rows;
  };

  const cases = EVENT_REPORTS.flatMap((name) => (Object.keys(SCOPES) as (keyof typeof SCOPES)[]).map((flag) => [name, flag] as const));
  it.each(cases)('report %s honours --%s', (name, flag) => {
    const all = full(name);
    expect(all.length, `report ${name} has rows unscoped`).toBeGreaterThan(0);
    // A value no row is in: nothing (the rows of the whole database before issue 29).
    expect(reportRows(name, [`--${flag}`, SCOPES[flag].none])).toEqual([]);
    // A value every row is in: the same rows as unscoped.
    const keep = SCOPES[flag].all;
    if (keep !== undefined && name !== 'html') expect(reportRows(name, [`--${flag}`, keep])).toEqual(all);
  }, 120_000);

  it('report html --host counts the dead letters of that machine only, as report dead-letters --host does', () => {
    const page = (flags: string[]): Record<string, number> => {
      const out = join(tmp.dir, `dl-${engine.name}-${flags.join('_').replace(/[^a-z0-9_-]/gi, '')}.html`);
      const r = toolcanon(['report', 'html', '--out', out, ...flags]);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(/"headline":(\{[^}]*\})/.exec(readFileSync(out, 'utf8'))?.[1] ?? '{}') as Record<string, number>;
    };
    const deadLetters = (flags: string[]): number => reportRows('dead-letters', flags).reduce((n, r) => n + Number(r['dead_letters']), 0);
    expect(deadLetters([])).toBeGreaterThan(0);
    expect(page([])['dead_letters']).toBe(deadLetters([]));
    expect(deadLetters(['--host', 'nobody'])).toBe(0);
    expect(page(['--host', 'nobody'])['dead_letters']).toBe(0);
  }, 120_000);

  it('a narrower scope gives exactly its rows: tools per harness, usage per day, breaches per day', () => {
    const codexCalls = toolcanon(['query', "SELECT count() AS n FROM tool_calls FINAL WHERE harness = 'codex'", '--format', 'json']);
    const n = Number(rowsOf(codexCalls.stdout)[0]?.['n']);
    expect(n).toBeGreaterThan(0);
    const tools = reportRows('tools', ['--harness', 'codex']);
    expect(tools.reduce((s, r) => s + Number(r['calls']), 0)).toBe(n);
    const days = reportRows('usage', ['--by', 'day', '--since', '2026-12-01', '--until', '2026-12-03']).map((r) => r['day']);
    expect(days).toEqual(['2026-12-01', '2026-12-02', '2026-12-03']);
    // Every breach of the fixtures is on 2026-12-01, of grok_build.
    expect(reportRows('breaches', ['--until', '2026-12-01']).length).toBe(full('breaches').length);
    expect(reportRows('breaches', ['--since', '2026-12-02'])).toEqual([]);
    expect(reportRows('breaches', ['--harness', 'codex'])).toEqual([]);
  }, 120_000);

  it('dead-letters honours --host and refuses --since, --until and --harness (exit 2, before any work)', () => {
    expect(full('dead-letters').length).toBeGreaterThan(0);
    expect(reportRows('dead-letters', ['--host', 'nobody'])).toEqual([]);
    expect(reportRows('dead-letters', ['--host', ''])).toEqual(full('dead-letters'));
    for (const [flag, value] of [['--since', '2026-12-01'], ['--until', '2026-12-01'], ['--harness', 'codex']] as const) {
      const r = toolcanon(['report', 'dead-letters', flag, value]);
      expect(r.code, flag).toBe(2);
      expect(r.stderr.split('\n')[0]).toBe(`toolcanon: report dead-letters takes no ${flag} (a dead letter has no event time or harness); it takes --host`);
      expect(r.stdout).toBe('');
    }
  });
}));

// Usage mistakes: refused before any database is opened, so on one engine (a data directory never made).
describe('report scope flags: usage mistakes (issue 29 item 2)', () => {
  beforeAll(() => {
    dbFlags = ['--db', join(tmp.dir, 'never-made')];
  });

  it.each(REPORTS.map((r) => r.name))('report %s: a bad day or harness exits 2 in one line, before any work', (name) => {
    for (const [flag, value, message] of [
      ['--since', 'garbage', '--since must be a day as YYYY-MM-DD, got "garbage"'],
      ['--until', '2026-02-30', '--until must be a day as YYYY-MM-DD, got "2026-02-30"'],
      ['--harness', 'cursor', '--harness must be one of'],
    ] as const) {
      const r = toolcanon(['report', name, flag, value]);
      expect(r.code, `${name} ${flag} ${value}`).toBe(2);
      const first = r.stderr.split('\n')[0] ?? '';
      if (name === 'dead-letters') expect(first).toContain(`takes no ${flag}`);
      else expect(first).toContain(`toolcanon: ${message}`);
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(r.stderr).not.toContain('database:');
    }
    if (name !== 'dead-letters') {
      const order = toolcanon(['report', name, '--since', '2026-12-02', '--until', '2026-12-01']);
      expect(order.code).toBe(2);
      expect(order.stderr.split('\n')[0]).toBe('toolcanon: --since 2026-12-02 is after --until 2026-12-01');
    }
  });

  it('a flag a report does not take is refused, not ignored', () => {
    const out = toolcanon(['report', 'tools', '--out', join(tmp.dir, 'x.html')]);
    expect(out.code).toBe(2);
    expect(out.stderr.split('\n')[0]).toBe('toolcanon: report tools takes no --out; it takes --since, --until, --harness, --host');
    const prices = toolcanon(['report', 'breaches', '--prices', join(tmp.dir, 'p.json')]);
    expect(prices.code).toBe(2);
    expect(prices.stderr.split('\n')[0]).toContain('report breaches takes no --prices');
    const query = toolcanon(['query', 'SELECT 1', '--since', '2026-12-01']);
    expect(query.code).toBe(2);
    expect(query.stderr.split('\n')[0]).toBe('toolcanon: query takes no --since (put the condition in the SQL: WHERE …)');
  });
});
