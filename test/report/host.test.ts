// Reports filter and group by machine (issue 16): `--host H` on every report, `--by host` where
// --by exists, through the CLI into a real ClickHouse, on both engines with the same assertions
// (test/helpers/engines.ts: embedded chdb and a ClickHouse server). Expected figures are counted
// by hand from the events written below.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTS } from '../../src/cli/report-commands.ts';
import { eventLine } from '../helpers/events.ts';
import { makeTempDir } from '../helpers/db.ts';
import { cliEnv, forEachEngine } from '../helpers/engines.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('report-host');
afterAll(() => tmp.cleanup());

/** The database the tests of one engine read (set in its beforeAll): `--db DIR` or `--clickhouse URL`. */
let flags: readonly string[] = [];

function toolcanon(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args, ...flags], { cwd: tmp.dir, encoding: 'utf8', env: cliEnv() });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function json(args: string[]): Record<string, unknown>[] {
  const r = toolcanon([...args, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim() === '' ? [] : r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

const usage = (over: Record<string, unknown>): string => {
  const { tool: _t, input: _i, call_id: _c, status: _s, ...rest } = JSON.parse(eventLine({ type: 'usage', ...over })) as Record<string, unknown>;
  return JSON.stringify(rest);
};

// alpha (dev-a): 3 calls (1 error), 2 requests (input 100 + 200, output 10 + 20), one dead letter.
// beta (dev-b): 2 calls, 1 request (input 50, output 5), an MCP search.
// no machine: 1 call, one unreadable line. delta: one request over its threshold.
const A = { host: 'alpha', device_id: 'dev-a', session_id: 'sa' };
const B = { host: "be'ta", device_id: 'dev-b', session_id: 'sb' }; // a quote: the filter is a literal, never SQL
const LINES = [
  eventLine({ ...A, call_id: 'a1', tool: 'Read', input: { file_path: 'a.ts' } }),
  eventLine({ ...A, call_id: 'a2', tool: 'Bash', input: { command: 'false' }, status: 'error', error: 'exit 1' }),
  eventLine({ ...A, call_id: 'a3', tool: 'Read', input: { file_path: 'b.ts' } }),
  usage({ ...A, request_id: 'ra1', input_tokens: 100, output_tokens: 10 }),
  usage({ ...A, request_id: 'ra2', input_tokens: 200, output_tokens: 20 }),
  eventLine({ ...A, call_id: 'a4', status: 'bogus' }),
  eventLine({ ...B, call_id: 'b1', tool: 'Grep', input: { pattern: 'x' } }),
  eventLine({ ...B, call_id: 'b2', tool: 'ToolSearch', input: { query: 'github' }, output: 'github__create_issue' }),
  usage({ ...B, request_id: 'rb1', input_tokens: 50, output_tokens: 5 }),
  eventLine({ session_id: 'sn', call_id: 'n1', tool: 'Read', input: { file_path: 'c.ts' } }),
  // delta: one request filling 900 of a 1,000-token window (90 % > 85 %): one breach.
  usage({ host: 'delta', device_id: 'dev-d', session_id: 'sd', request_id: 'rd1', input_tokens: 900, output_tokens: 0, context_window_tokens: 1000 }),
  'not json',
];

await forEachEngine('test/report/host.test.ts', (engine) => describe('reports by machine', () => {
  // tool-search.jsonl: 5 tool_use blocks and 5 responses (distinct message.id / requestId), counted by hand.
  const log = join(ROOT, 'test/importers/fixtures-claude-code/tool-search.jsonl');
  let imported: ReturnType<typeof toolcanon>;
  let importedAgain: ReturnType<typeof toolcanon>;
  // Everything is written here (the tests pass in any order); the machine gamma of the import is
  // left out of the replay's figures below.
  beforeAll(async () => {
    flags = (await engine.database('report-host')).flags;
    const file = join(tmp.dir, 'events.jsonl');
    writeFileSync(file, `${LINES.join('\n')}\n`);
    const r = toolcanon(['replay', file, '--allow-dead-letters']);
    expect(r.code, r.stderr).toBe(0);
    imported = toolcanon(['import', 'claude-code', log, '--host', 'gamma', '--device-id', 'dev-g']);
    importedAgain = toolcanon(['import', 'claude-code', log, '--host', 'gamma', '--device-id', 'dev-g', '--format', 'json']);
  });
  const notGamma = (rows: unknown[][]): unknown[][] => rows.filter((r) => r[0] !== 'gamma');

  it('report tools --by host: calls and errors per machine', () => {
    const rows = notGamma(json(['report', 'tools', '--by', 'host']).map((r) => [r['host'], r['device_id'], r['calls'], r['errors']]));
    expect(rows.sort()).toEqual([
      ['', '', 1, 0],
      ['alpha', 'dev-a', 3, 1],
      ["be'ta", 'dev-b', 2, 0],
    ]);
  });

  it('report tools --host: one machine only', () => {
    const rows = json(['report', 'tools', '--host', 'alpha']).map((r) => [r['tool_name'], r['calls']]);
    expect(rows.sort()).toEqual([['Bash', 1], ['Read', 2]]);
    expect(json(['report', 'tools', '--host', "be'ta"]).reduce((n, r) => n + Number(r['calls']), 0)).toBe(2);
    expect(json(['report', 'tools', '--host', 'nobody'])).toEqual([]);
  });

  it('report usage --by host and --host', () => {
    const rows = notGamma(json(['report', 'usage', '--by', 'host']).map((r) => [r['host'], r['requests'], r['input_tokens'], r['output_tokens']]));
    expect(rows.sort()).toEqual([
      ['alpha', 2, 300, 30],
      ["be'ta", 1, 50, 5],
      ['delta', 1, 900, 0],
    ]);
    const beta = json(['report', 'usage', '--host', "be'ta"]);
    expect(beta.map((r) => [r['requests'], r['input_tokens']])).toEqual([[1, 50]]);
  });

  it('report dead-letters --host: a dead letter says which machine it came from', () => {
    const all = json(['report', 'dead-letters']);
    expect(all.reduce((n, r) => n + Number(r['dead_letters']), 0)).toBe(2);
    expect(json(['report', 'dead-letters', '--host', 'alpha']).map((r) => [r['reason'], r['dead_letters']])).toEqual([['schema', 1]]);
    expect(json(['report', 'dead-letters', '--host', '']).map((r) => [r['reason'], r['dead_letters']])).toEqual([['invalid_json', 1]]);
  });

  it('report discovery --by host: searches per machine', () => {
    const rows = json(['report', 'discovery', '--by', 'host']).map((r) => [r['host'], r['searches']]);
    expect(rows.find((r) => r[0] === "be'ta")).toEqual(["be'ta", 1]);
    expect(rows.find((r) => r[0] === 'alpha')?.[1] ?? 0).toBe(0);
  });

  it('a local import records the importing machine (--host, --device-id) on every row it writes', () => {
    expect(imported.code, imported.stderr).toBe(0);
    const tools = json(['report', 'tools', '--by', 'host', '--host', 'gamma']).map((row) => [row['host'], row['device_id'], row['calls']]);
    expect(tools).toEqual([['gamma', 'dev-g', 5]]);
    const usage = json(['report', 'usage', '--by', 'host', '--host', 'gamma']).map((row) => [row['host'], row['requests']]);
    expect(usage).toEqual([['gamma', 5]]);
    // Importing again as the same machine finds nothing new; the other machines' rows are untouched.
    expect(importedAgain.stdout).toContain('{"metric":"files_unchanged","value":1}');
    expect(json(['report', 'tools', '--host', 'alpha']).reduce((n, row) => n + Number(row['calls']), 0)).toBe(3);
  });

  it('every report takes --host, and every report with --by takes --by host', () => {
    for (const d of REPORTS) {
      const args = ['report', d.name, '--host', 'alpha'];
      if (d.name === 'html') args.push('--out', join(tmp.dir, 'page.html'));
      const r = toolcanon([...args, '--format', 'json']);
      expect(r.code, `${d.name}: ${r.stderr}`).toBe(0);
      if (d.groupings) expect(d.groupings, d.name).toContain('host');
    }
    // The one breach is delta's, and says so.
    expect(json(['report', 'breaches', '--host', 'alpha'])).toEqual([]);
    expect(json(['report', 'breaches', '--host', 'delta']).map((r) => [r['session_id'], r['host'], r['used_tokens']])).toEqual([['sd', 'delta', 900]]);
  });
}));
