// The command line as a user runs it: the real bin, real files, real embedded ClickHouse.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { makeTempDir } from '../helpers/db.ts';
import { eventLine } from '../helpers/events.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('cli');
afterAll(() => tmp.cleanup());

function toolcanon(args: string[], input?: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args], { cwd: tmp.dir, encoding: 'utf8', input, env: { ...process.env, TOOLCANON_DB: join(tmp.dir, 'db') } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const jsonLines = (text: string): Record<string, unknown>[] => text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

// The shipped fixtures replayed once into a database of their own, by whichever test needs them
// first: no test depends on another having run before it.
const FIXTURES_DB = ['--db', join(tmp.dir, 'fixtures-db')];
let fixturesReplay: ReturnType<typeof toolcanon> | undefined;
function replayedFixtures(): ReturnType<typeof toolcanon> {
  fixturesReplay ??= toolcanon(['replay', join(ROOT, 'fixtures'), '--format', 'json', ...FIXTURES_DB]);
  expect(fixturesReplay.code, fixturesReplay.stderr).toBe(0);
  return fixturesReplay;
}

describe('toolcanon CLI', () => {
  it('--version, -V and `version` print the package version', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const args of [['--version'], ['-V'], ['version']]) {
      const r = toolcanon(args);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`toolcanon ${pkg.version}\n`);
      expect(r.stderr).toBe('');
    }
  });

  it('replay prints a summary whose counts add up, in every format', () => {
    const r = replayedFixtures();
    const m = Object.fromEntries(jsonLines(r.stdout).map((x) => [x['metric'], x['value']])) as Record<string, number>;
    expect(m['events_read']).toBeGreaterThan(250);
    expect((m['rows_written'] ?? NaN) + (m['dead_letters'] ?? NaN)).toBe(m['events_read']);
    expect(m['events_per_s']).toBeGreaterThan(0);
    expect(r.stderr).toContain('embedded ClickHouse at');
    const csv = toolcanon(['replay', join(ROOT, 'fixtures/sessions'), '--format', 'csv']);
    expect(csv.stdout.split('\n')[0]).toBe('metric,value');
  });

  it('report tools answers from the replayed data', () => {
    replayedFixtures();
    const r = toolcanon(['report', 'tools', '--by', 'namespace', '--format', 'json', ...FIXTURES_DB]);
    expect(r.code, r.stderr).toBe(0);
    const rows = jsonLines(r.stdout);
    expect(rows.map((x) => x['namespace'])).toEqual(expect.arrayContaining(['claude_code', 'codex', 'opencode', 'mcp', 'grok_build']));
    const table = toolcanon(['report', 'tools', ...FIXTURES_DB]);
    expect(table.stdout.split('\n')[0]).toMatch(/^namespace\s+kind\s+tool_name\s+calls/);
  });

  it('report mcp and report discovery answer from the replayed fixtures; --by is checked', () => {
    replayedFixtures();
    const mcp = toolcanon(['report', 'mcp', '--format', 'json', ...FIXTURES_DB]);
    expect(mcp.code, mcp.stderr).toBe(0);
    expect(jsonLines(mcp.stdout)[0]).toMatchObject({ server: 'postgres', restart_flags: 'after_disabled=1 attempts_exceeded=1 too_fast=2' });
    const both = toolcanon(['report', 'discovery', ...FIXTURES_DB]);
    expect(both.code, both.stderr).toBe(0);
    expect(both.stdout).toContain('Discovery per model');
    expect(both.stdout).toContain('Discovery per MCP tool');
    expect(both.stdout).toMatch(/exports__startExport .* called only after search/);
    const tools = toolcanon(['report', 'discovery', '--by', 'tool', '--format', 'csv', ...FIXTURES_DB]);
    expect(tools.stdout.split('\n')[0]).toMatch(/^tool,server,visibility,calls/);
    const bad = toolcanon(['report', 'discovery', '--by', 'namespace']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--by must be one of model, tool');
    const validate = toolcanon(['validate', join(ROOT, 'fixtures/mcp/lifecycle.jsonl')]);
    expect(validate.code).toBe(0);
    expect(validate.stdout).toContain('warning: bad_mcp_name: mcp_tools linear: linear__issues__list');
  });

  it('reads stdin with -', () => {
    const r = toolcanon(['replay', '-', '--format', 'json'], `${eventLine({ call_id: 'stdin-1' })}\nnot json\n`);
    expect(r.code, r.stderr).toBe(0);
    const m = Object.fromEntries(jsonLines(r.stdout).map((x) => [x['metric'], x['value']]));
    expect(m).toMatchObject({ events_read: 2, rows_written: 1, dead_letters: 1, 'dead_letters.invalid_json': 1 });
    const q = toolcanon(['query', "SELECT source FROM dead_letters FINAL WHERE source LIKE '-:%'", '--format', 'json']);
    expect(jsonLines(q.stdout)).toEqual([{ source: '-:2' }]);
  });

  it('validate exits 1 with file:line, reason and field for each bad event', () => {
    const file = join(tmp.dir, 'mixed.jsonl');
    writeFileSync(file, `${eventLine()}\n${eventLine({ status: 'done' })}\n{oops\n`);
    const r = toolcanon(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stdout.trim().split('\n')).toEqual([
      `${file}:2: schema: /status: must be one of ok, error, pending (got "done")`,
      `${file}:3: invalid_json: Expected property name or '}' in JSON at position 1`,
    ]);
    expect(r.stderr).toContain('3 event(s): 1 valid, 2 invalid');
    expect(toolcanon(['validate', join(ROOT, 'fixtures/codex')]).code).toBe(0);
  });

  it('usage mistakes exit 2 and say what was wrong', () => {
    for (const args of [['frobnicate'], ['replay'], ['report', 'nothing'], ['replay', 'x', '--format', 'xml'], ['replay', 'x', '--max-depth', '0'], ['replay', 'x', '--bogus']]) {
      const r = toolcanon(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^toolcanon: .+\nRun 'toolcanon --help' for usage\./);
    }
  });

  it('a missing input exits 1 naming it', () => {
    const r = toolcanon(['replay', 'no/such/file.jsonl']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('toolcanon: no/such/file.jsonl: no such file or directory\n');
  });

  it('bad SQL exits 1 with the engine message and the position marked', () => {
    replayedFixtures();
    const r = toolcanon(['query', 'SELECT count( FROM tool_calls', ...FIXTURES_DB]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\ntoolcanon: query failed: syntax error at line 1, col 13: unmatched parentheses/);
  });
});

describe('toolcanon import', () => {
  const codexCorpus = corpusOrSkip('codex/sessions/2025/08', 'test/cli/cli.test.ts (import)');
  it.skipIf(codexCorpus === null)('imports a folder, then finds nothing new in it', () => {
    const dir = codexCorpus as string;
    const first = toolcanon(['import', 'codex', dir, '--format', 'json']);
    expect(first.code, first.stderr).toBe(0);
    const m1 = Object.fromEntries(jsonLines(first.stdout).map((x) => [x['metric'], x['value']])) as Record<string, number>;
    expect(m1['events_emitted']).toBeGreaterThan(0);
    expect((m1['rows_written'] ?? NaN) + (m1['dead_letters'] ?? NaN)).toBe(m1['events_read']);
    const second = toolcanon(['import', 'codex', dir, '--format', 'json']);
    const m2 = Object.fromEntries(jsonLines(second.stdout).map((x) => [x['metric'], x['value']])) as Record<string, number>;
    expect(m2).toMatchObject({ events_emitted: 0, files_read: 0, files_unchanged: m1['files_seen'] });
  });

  it('refuses an unknown importer, and a format without a default location when no path is given', () => {
    expect(toolcanon(['import', 'cursor']).code).toBe(2);
    const r = toolcanon(['import', 'otlp']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('import otlp needs at least one file or folder');
  });
});

describe('first contact (issue 13): a new user on a database that does not exist yet', () => {
  const fresh = (name: string): string[] => ['--db', join(tmp.dir, `fresh-${name}`)];

  it('replay - reads piped stdin into a new database; a piped stdin no command reads is harmless', () => {
    const events = readFileSync(join(ROOT, 'fixtures/claude_code/calls.jsonl'), 'utf8');
    const r = toolcanon(['replay', '-', '--format', 'json', ...fresh('stdin')], events);
    expect(r.code, r.stderr).toBe(0);
    const m = Object.fromEntries(jsonLines(r.stdout).map((x) => [x['metric'], x['value']]));
    expect(m).toMatchObject({ events_read: 50, dead_letters: 0 });
    const other = toolcanon(['replay', join(ROOT, 'fixtures/codex'), '--format', 'json', ...fresh('pipe')], '\n');
    expect(other.code, other.stderr).toBe(0);
    const imported = toolcanon(['import', 'acp', join(ROOT, 'test/importers/fixtures-acp'), '--format', 'json', ...fresh('import')], 'x\n');
    expect(imported.code, imported.stderr).toBe(0);
  });

  it('reads piped stdin the same way through a child (TOOLCANON_STDIN_CHILD=1, where fd 0 cannot be moved aside in place)', () => {
    const events = readFileSync(join(ROOT, 'fixtures/claude_code/calls.jsonl'), 'utf8');
    const run = (child: boolean, name: string): Record<string, unknown> => {
      const env: NodeJS.ProcessEnv = { ...process.env, TOOLCANON_DB: join(tmp.dir, 'db') };
      if (child) env['TOOLCANON_STDIN_CHILD'] = '1';
      else delete env['TOOLCANON_STDIN_CHILD'];
      const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), 'replay', '-', '--format', 'json', ...fresh(name)], { cwd: tmp.dir, encoding: 'utf8', input: events, env });
      expect(r.status, r.stderr).toBe(0);
      return Object.fromEntries(jsonLines(r.stdout).map((x) => [x['metric'], x['value']]));
    };
    const inPlace = run(false, 'stdin-in-place');
    expect(inPlace).toMatchObject({ events_read: 50, rows_written: 50, dead_letters: 0 });
    expect(run(true, 'stdin-child')).toMatchObject({ events_read: inPlace['events_read'], rows_written: inPlace['rows_written'], dead_letters: 0 });
  });

  it('says in one line, and exits 1, when what was replayed or imported was not what it expects', () => {
    const junk = toolcanon(['replay', join(ROOT, 'README.md'), ...fresh('junk')]);
    expect(junk.code).toBe(1);
    // The README holds no envelope line: none of its lines is an event.
    expect(junk.stderr).toMatch(/toolcanon: none of the \d+ event\(s\) was recognised \(\d+ invalid_json\): expected JSONL lines of toolcanon.event\/v1/);
    // A file with some events among other lines says how many were dead letters.
    const mixed = join(tmp.dir, 'mixed.jsonl');
    writeFileSync(mixed, `${readFileSync(join(ROOT, 'fixtures/codex/calls.jsonl'), 'utf8').split('\n')[0]}\nnot json\nnor this\n`);
    expect(toolcanon(['replay', mixed, ...fresh('mixed')]).stderr).toMatch(/toolcanon: 2 of 3 event\(s\) were dead letters \(2 invalid_json\): expected JSONL lines of toolcanon.event\/v1/);
    expect(toolcanon(['replay', join(ROOT, 'README.md'), '--allow-dead-letters', ...fresh('junk')]).code).toBe(0);
    const wrong = toolcanon(['import', 'acp', join(ROOT, 'fixtures/grok_build'), ...fresh('wrong')]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("found no acp tool call or usage in them");
    // The shipped fixtures (27 dead letters of 375, on purpose) are a normal run.
    expect(toolcanon(['replay', join(ROOT, 'fixtures'), ...fresh('fixtures')]).code).toBe(0);
  });

  it('gives each command its own help, honours --format for the catalogue, and checks flags before any work', () => {
    for (const command of ['replay', 'import', 'validate', 'report', 'query', 'catalogue']) {
      const h = toolcanon([command, '--help']);
      expect(h.code).toBe(0);
      expect(h.stdout.split('\n')[0]).toBe(`Usage: toolcanon ${command}${h.stdout.split('\n')[0]?.slice(`Usage: toolcanon ${command}`.length)}`);
      expect(h.stdout).toContain('Example:');
    }
    const cat = toolcanon(['catalogue', '--format', 'json']);
    expect(jsonLines(cat.stdout)[0]).toMatchObject({ namespace: 'grok_build', tool: 'ReadFile', kind: 'read' });
    const pct = toolcanon(['replay', join(ROOT, 'fixtures'), '--threshold-pct', '200', ...fresh('flags')]);
    expect(pct.code).toBe(2);
    expect(pct.stderr).not.toContain('Replaying');
    expect(pct.stderr).toContain('--threshold-pct must be an integer from 0 to 100');
  });

  it('prints 64-bit counts as JSON numbers up to 2^53 and as exact strings beyond; text stays text', () => {
    replayedFixtures();
    const r = toolcanon(['query', "SELECT count() AS n, toUInt64(18446744073709551615) AS big, '42' AS text", '--format', 'json', ...FIXTURES_DB]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('{"n":1,"big":"18446744073709551615","text":"42"}');
  });

  it('turns failures into one line that says what to do', () => {
    const url = toolcanon(['report', 'tools', '--clickhouse', 'notaurl']);
    expect(url.code).toBe(2);
    expect(url.stderr.split('\n')[0]).toBe('toolcanon: --clickhouse must be a URL such as http://localhost:8123/analytics, got "notaurl"');
    const down = toolcanon(['report', 'tools', '--clickhouse', 'http://127.0.0.1:9']);
    expect(down.code).toBe(1);
    expect(down.stderr.trim()).toBe('toolcanon: cannot reach the ClickHouse server at 127.0.0.1:9 (connection refused, 3 attempts): is it running, and is --clickhouse right?');
    replayedFixtures();
    const sql = toolcanon(['query', 'SELEC 1', ...FIXTURES_DB]);
    expect(sql.code).toBe(1);
    // The database used, then the engine's message in one line with the SQL and a caret under the position.
    expect(sql.stderr.trim().split('\n')).toHaveLength(4);
    expect(sql.stderr).not.toContain('FORMAT JSON');
    expect(sql.stderr).not.toMatch(/^\s+at /m);
  });
});

