// Issue 29, items 9 and 10, and `toolcanon query` reading deduplicated data: what a user sees
// for a mistyped command or flag, an --out into a missing folder, SQL the engine refuses, a run
// with no database, and a plain count() after two replays. The real CLI on the real engine.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('messages');
afterAll(() => tmp.cleanup());

/** Runs the CLI in `cwd` (default: an empty folder of its own), without $TOOLCANON_DB. */
function toolcanon(args: string[], cwd = join(tmp.dir, 'empty')): { code: number | null; stdout: string; stderr: string } {
  mkdirSync(cwd, { recursive: true });
  const env = { ...process.env };
  delete env['TOOLCANON_DB'];
  delete env['TOOLCANON_CLICKHOUSE_URL'];
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args], { cwd, encoding: 'utf8', env, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const jsonLines = (text: string): Record<string, unknown>[] => text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

/** The shipped fixtures replayed once (by whichever test needs them first). */
const DB = join(tmp.dir, 'db');
let replayed = false;
function fixturesDb(): string[] {
  if (!replayed) {
    const r = toolcanon(['replay', join(ROOT, 'fixtures'), '--db', DB, '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    replayed = true;
  }
  return ['--db', DB];
}

/** A usage error: exit 2, its line, then the usage hint; no stack, no parser text. */
function usageLine(r: { code: number | null; stderr: string }): string {
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(2);
  expect(lines[1]).toBe("Run 'toolcanon --help' for usage.");
  expect(r.stderr).not.toMatch(/^\s+at /m);
  return lines[0] as string;
}

describe('item 9: a mistyped command or flag says the nearest one, in one line', () => {
  it('suggests the command, the flag, the report and the --by value', () => {
    expect(usageLine(toolcanon(['repaly', 'fixtures']))).toBe('toolcanon: unknown command "repaly": did you mean replay?');
    expect(usageLine(toolcanon(['report', 'tools', '--fromat', 'json']))).toBe('toolcanon: unknown option --fromat: did you mean --format?');
    expect(usageLine(toolcanon(['report', 'tols']))).toMatch(/^toolcanon: unknown report "tols": did you mean tools\? \(expected tools, usage, /);
    expect(usageLine(toolcanon(['report', 'tools', '--by', 'namepsace']))).toBe('toolcanon: --by must be one of tool, namespace, kind, host for report tools, got "namepsace": did you mean namespace?');
    expect(usageLine(toolcanon(['export', 'otlp', '--endpiont', 'http://localhost:4318']))).toBe('toolcanon: unknown option --endpiont for export: did you mean --endpoint?');
    expect(usageLine(toolcanon(['consume', '--brokres', 'localhost:9092']))).toBe('toolcanon: unknown option --brokres for consume: did you mean --brokers?');
    expect(usageLine(toolcanon(['import', 'cluade-code']))).toMatch(/^toolcanon: import needs one of claude-code, .*, got "cluade-code": did you mean claude-code\?$/);
    expect(usageLine(toolcanon(['catalogue', '--format', 'jsno']))).toBe('toolcanon: --format must be one of table, json, csv, got "jsno": did you mean json?');
    expect(usageLine(toolcanon(['frobnicate']))).toBe('toolcanon: unknown command "frobnicate"');
    expect(usageLine(toolcanon(['report', 'tools', '--format']))).toBe('toolcanon: --format needs a value');
    // Never the parser's own text, whose quote is not closed.
    const r = toolcanon(['replay', 'x', '--fromat', 'json']);
    expect(r.stderr).not.toContain("'--'");
    expect(r.stderr).not.toContain('positional argument');
  });

  it('a flag a command does not take is refused, not ignored', () => {
    expect(usageLine(toolcanon(['replay', 'x', '--by', 'tool']))).toBe('toolcanon: replay takes no --by');
    expect(usageLine(toolcanon(['catalogue', '--db', 'x']))).toBe('toolcanon: catalogue takes no --db');
  });

  it('report html --out into a missing folder: one line, exit 2, nothing read or written', () => {
    const out = join(tmp.dir, 'no', 'such', 'folder', 'page.html');
    const r = toolcanon(['report', 'html', '--out', out, ...fixturesDb()]);
    expect(usageLine(r)).toBe(`toolcanon: --out ${out}: the folder ${join(tmp.dir, 'no', 'such', 'folder')} does not exist: create it first, or give another --out`);
    expect(r.stderr).not.toContain('database:');
    expect(existsSync(join(tmp.dir, 'no'))).toBe(false);
    const folder = toolcanon(['report', 'html', '--out', tmp.dir, ...fixturesDb()]);
    expect(usageLine(folder)).toContain(`--out ${tmp.dir} is a folder`);
  });

  it('an empty SQL statement is a usage error in one line (exit 2), not the engine\'s text', () => {
    const r = toolcanon(['query', '  ', ...fixturesDb()]);
    expect(usageLine(r)).toBe('toolcanon: query was given an empty SQL statement: give one, e.g. toolcanon query "SELECT count() FROM tool_calls"');
  });

  it('SQL the engine refuses: its message in one line, the SQL line and a caret under the position', () => {
    const db = fixturesDb();
    const syntax = toolcanon(['query', 'SELECT harness, count( FROM tool_calls', ...db]);
    expect(syntax.code).toBe(1);
    expect(syntax.stderr.split('\n').slice(1)).toEqual([
      'toolcanon: query failed: syntax error at line 1, col 22: unmatched parentheses: (',
      '  SELECT harness, count( FROM tool_calls',
      '                       ^',
      '',
    ]);
    const multiLine = toolcanon(['query', 'SELECT harness\nFROM tool_calls\nWHERE ts > now() AND (harness = 1', ...db]);
    expect(multiLine.stderr.split('\n').slice(1, 4)).toEqual([
      'toolcanon: query failed: syntax error at line 3, col 22: unmatched parentheses: (',
      '  WHERE ts > now() AND (harness = 1',
      '                       ^',
    ]);
    const unknown = toolcanon(['query', 'SELECT count() FROM tool_calls WHERE no_such_column = 1', ...db]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.split('\n').slice(1, 4)).toEqual([
      'toolcanon: query failed: Unknown expression or function identifier `no_such_column`',
      '  SELECT count() FROM tool_calls WHERE no_such_column = 1',
      '                                       ^',
    ]);
    for (const r of [syntax, multiLine, unknown]) {
      expect(r.stderr).not.toContain('FORMAT JSON');
      expect(r.stderr).not.toContain('DB::Exception');
      expect(r.stderr).not.toMatch(/^\s+at /m);
    }
  });
});

describe('item 10: no database, and the database used', () => {
  it('report, query and export with no database: one line naming it, exit 1, nothing created', () => {
    const cwd = join(tmp.dir, 'elsewhere');
    const where = join(cwd, '.toolcanon', 'db');
    for (const args of [['report', 'tools'], ['report', 'usage', '--format', 'json'], ['report', 'html'], ['query', 'SELECT count() FROM tool_calls'], ['export', 'otlp', '--endpoint', 'http://127.0.0.1:9']]) {
      const r = toolcanon(args, cwd);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toBe(`toolcanon: no database at ${where}: run replay or import first (or give --db DIR, $TOOLCANON_DB, or --clickhouse URL)\n`);
      expect(r.stdout).toBe('');
    }
    // Before issue 29: `report tools` made .toolcanon/db here and printed "(no rows)".
    expect(readdirSync(cwd)).toEqual([]);
    // An empty folder given as --db holds no database either, and stays empty.
    const empty = join(tmp.dir, 'empty-db');
    mkdirSync(empty);
    const r = toolcanon(['report', 'tools', '--db', empty]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no database at ${empty}`);
    expect(readdirSync(empty)).toEqual([]);
  });

  it('every command that opens a database names it on stderr; json and csv on stdout stay clean', () => {
    const db = fixturesDb();
    const line = `database: embedded ClickHouse at ${DB}`;
    for (const args of [['report', 'tools', '--format', 'json'], ['report', 'usage', '--format', 'json'], ['query', 'SELECT count() AS n FROM tool_calls', '--format', 'json']]) {
      const r = toolcanon([...args, ...db]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr.split('\n')).toContain(line);
      expect(() => jsonLines(r.stdout)).not.toThrow();
    }
    const csv = toolcanon(['report', 'breaches', '--format', 'csv', ...db]);
    expect(csv.stdout.split('\n')[0]).toMatch(/^session_id,harness,/);
    expect(csv.stdout).not.toContain('database:');
    const replay = toolcanon(['replay', join(ROOT, 'fixtures/codex'), '--format', 'json', ...db]);
    expect(replay.stderr).toContain(`into embedded ClickHouse at ${DB}`);
    const html = toolcanon(['report', 'html', '--out', join(tmp.dir, 'page.html'), ...db]);
    expect(html.stderr.split('\n')).toContain(line);
  });
});

describe('query reads deduplicated data (final = 1)', () => {
  it('after two replays a plain count() equals the distinct events (the FINAL count)', () => {
    const db = ['--db', join(tmp.dir, 'twice')];
    for (let i = 0; i < 2; i++) expect(toolcanon(['replay', join(ROOT, 'fixtures'), ...db]).code).toBe(0);
    const count = (sql: string): number => Number(jsonLines(toolcanon(['query', sql, '--format', 'json', ...db]).stdout)[0]?.['n']);
    const distinct = count('SELECT count() AS n FROM tool_calls FINAL');
    expect(distinct).toBeGreaterThan(300);
    expect(count('SELECT count() AS n FROM tool_calls')).toBe(distinct);
    expect(count('SELECT count() AS n FROM token_usage')).toBe(count('SELECT count() AS n FROM token_usage FINAL'));
    // Copies stored however they came (here: a user's INSERT … SELECT) are still counted once;
    // the stored rows are there (final = 0 shows them).
    expect(toolcanon(['query', 'INSERT INTO tool_calls SELECT * FROM tool_calls', ...db]).code).toBe(0);
    expect(count('SELECT count() AS n FROM tool_calls SETTINGS final = 0')).toBe(2 * distinct);
    expect(count('SELECT count() AS n FROM tool_calls')).toBe(distinct);
    expect(count("SELECT count() AS n FROM tool_calls AS t INNER JOIN (SELECT event_id FROM tool_calls WHERE harness = 'codex') AS c ON c.event_id = t.event_id")).toBe(
      count("SELECT count() AS n FROM tool_calls FINAL WHERE harness = 'codex'"),
    );
  });
});
