// The same data and the same answers from both engines (issue 34 item 2): the CLI writes the shipped
// fixtures (replay) and every harness's test logs (import) into an embedded data directory and
// into a database on a ClickHouse server (scripts/clickhouse.sh, or
// $TOOLCANON_TEST_CLICKHOUSE_URL); every analytics table holds the same rows on both, plain
// count() = FINAL count() on both, every report with every grouping prints the same rows, and the
// HTML report is the same page. The server half is a loud skip without a server, an error under
// CI=true.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTS } from '../../src/cli/report-commands.ts';
import { IMPORTER_IDS, type ImporterId } from '../../src/importers/types.ts';
import { ANALYTICS_TABLE_NAMES } from '../../src/sink/clickhouse.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { makeTempDir } from '../helpers/db.ts';
import { cliEnv, engineServer } from '../helpers/engines.ts';
import { createTestDatabase, dropTestDatabase } from '../helpers/clickhouse-server.ts';
import { cli, metrics } from '../helpers/faults.ts';
import { DUMP_SQL, ROOT, generateEvents } from '../helpers/worker.ts';
import { writeCodexRollout, GENERATED_CODEX_FILE } from '../importers/generate-codex.ts';

const SUITE = 'test/sink/engines-parity.test.ts';
const server = await engineServer(SUITE);
const tmp = makeTempDir('engines-parity');
const urls: string[] = [];
afterAll(async () => {
  for (const u of urls) await dropTestDatabase(u);
  tmp.cleanup();
});

// Host and device fixed: the rows of both engines come from the same machine.
const ENV = cliEnv({ TOOLCANON_HOST: 'parity-box', TOOLCANON_DEVICE_ID: 'parity-dev' });
const run = async (args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> => cli(args, ENV);

function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Every analytics row (test/helpers/worker.ts's DUMP_SQL), per table, sorted; through `toolcanon query`. */
async function dump(flags: readonly string[]): Promise<Map<string, string[]>> {
  const r = await run(['query', ...flags, '--format', 'json', DUMP_SQL]);
  expect(r.code, r.stderr).toBe(0);
  const out = new Map<string, string[]>(ANALYTICS_TABLE_NAMES.map((t) => [t, []]));
  for (const row of jsonLines(r.stdout)) out.get(String(row['t']))?.push(String(row['r']));
  for (const rows of out.values()) rows.sort();
  return out;
}

/** Per table, `plain count() / FINAL count()`. */
async function counts(flags: readonly string[]): Promise<Record<string, string>> {
  const sql = ANALYTICS_TABLE_NAMES.map((t) => `SELECT '${t}' AS t, toString((SELECT count() FROM ${t})) AS plain, toString(count()) AS final FROM ${t} FINAL`).join(' UNION ALL ');
  const r = await run(['query', ...flags, '--format', 'json', sql]);
  expect(r.code, r.stderr).toBe(0);
  return Object.fromEntries(jsonLines(r.stdout).map((row) => [String(row['t']), `${String(row['plain'])} / ${String(row['final'])}`]));
}

/** Both engines' flags for one database each: embedded first, then the server. */
async function bothDatabases(label: string): Promise<{ embedded: string[]; server: string[] }> {
  const url = await createTestDatabase(label);
  urls.push(url);
  return { embedded: ['--db', join(tmp.dir, label)], server: ['--clickhouse', url] };
}

describe.skipIf(server === null)('the fixtures replayed: the same rows and reports on both engines', () => {
  let dbs: { embedded: string[]; server: string[] };
  let replayed: Record<string, number>;

  beforeAll(async () => {
    dbs = await bothDatabases('parity_replay');
    const fixtures = join(ROOT, 'fixtures');
    // Twice each: the second replay must store nothing (plain count = FINAL count below).
    const [e, s] = await Promise.all([
      run(['replay', fixtures, ...dbs.embedded, '--format', 'json', '--no-progress']),
      run(['replay', fixtures, ...dbs.server, '--format', 'json', '--no-progress']),
    ]);
    expect(e.code, e.stderr).toBe(0);
    expect(s.code, s.stderr).toBe(0);
    replayed = metrics(s.stdout);
    expect(metrics(e.stdout)).toMatchObject({ events_read: replayed['events_read'], rows_written: replayed['rows_written'], dead_letters: replayed['dead_letters'] });
    const [e2, s2] = await Promise.all([
      run(['replay', fixtures, ...dbs.embedded, '--format', 'json', '--no-progress']),
      run(['replay', fixtures, ...dbs.server, '--format', 'json', '--no-progress']),
    ]);
    expect(e2.code, e2.stderr).toBe(0);
    expect(s2.code, s2.stderr).toBe(0);
    for (const again of [metrics(e2.stdout), metrics(s2.stdout)]) expect(again).toMatchObject({ events_read: replayed['events_read'], events_already_stored: replayed['events_read'] });
  });

  it('every analytics table holds the same rows; plain count() = FINAL count() in each, after two replays', async () => {
    const [e, s] = await Promise.all([dump(dbs.embedded), dump(dbs.server)]);
    expect(s.get('tool_calls')).toHaveLength(373);
    expect(s.get('dead_letters')!.length).toBeGreaterThan(20);
    expect(s).toEqual(e);
    const [ce, cs] = await Promise.all([counts(dbs.embedded), counts(dbs.server)]);
    expect(cs['tool_calls']).toBe('373 / 373');
    for (const t of ANALYTICS_TABLE_NAMES) {
      const [plain, final] = (cs[t] ?? '').split(' / ');
      expect({ table: t, plain }).toEqual({ table: t, plain: final });
    }
    expect(cs).toEqual(ce);
  });

  const reportRuns = REPORTS.filter((r) => r.name !== 'html').flatMap((r) => [[r.name], ...(r.groupings ?? []).map((g) => [r.name, '--by', g])]);
  it.each(reportRuns.map((args) => [args.join(' '), args] as const))('report %s prints the same rows on both engines', async (_name, args) => {
    const [e, s] = await Promise.all([run(['report', ...args, ...dbs.embedded, '--format', 'json']), run(['report', ...args, ...dbs.server, '--format', 'json'])]);
    expect(e.code, e.stderr).toBe(0);
    expect(s.code, s.stderr).toBe(0);
    expect(jsonLines(s.stdout).length).toBeGreaterThan(0);
    // The same rows; compared as sorted lines: rows a report's ORDER BY ties (e.g. usage --by
    // session: one session id in three harnesses, same start) come in either order, on
    // either engine, from run to run.
    const lines = (out: string): string[] => out.split('\n').sort();
    expect(lines(s.stdout)).toEqual(lines(e.stdout));
  });

  it('report html writes the same page from both engines', async () => {
    const out = { embedded: join(tmp.dir, 'embedded.html'), server: join(tmp.dir, 'server.html') };
    const [e, s] = await Promise.all([run(['report', 'html', ...dbs.embedded, '--out', out.embedded]), run(['report', 'html', ...dbs.server, '--out', out.server])]);
    expect(e.code, e.stderr).toBe(0);
    expect(s.code, s.stderr).toBe(0);
    // The page's data, less when it was made and the source it names; the rest of the page equal.
    const DATA = /<script type="application\/json" id="report-data">(.*?)<\/script>/s;
    const split = (file: string): { page: string; data: Record<string, unknown> } => {
      const html = readFileSync(file, 'utf8');
      const m = DATA.exec(html);
      expect(m, file).not.toBeNull();
      const { generated_at: _g, source, ...data } = JSON.parse(m![1]!) as Record<string, unknown>;
      // Each list in its rows' order as text (ties of a report's ORDER BY come in either order).
      const sorted = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => JSON.stringify(x)).sort() : v]));
      return { page: html.replace(DATA, ''), data: { source: String(source).split(' ')[0], ...sorted } };
    };
    const [pe, ps] = [split(out.embedded), split(out.server)];
    expect(ps.data['headline']).toMatchObject({ tool_calls: 373 });
    expect(ps.data['source']).toBe('ClickHouse');
    expect(pe.data['source']).toBe('embedded');
    expect({ ...ps.data, source: '' }).toEqual({ ...pe.data, source: '' });
    expect(ps.page.length).toBeGreaterThan(10_000);
    expect(ps.page).toBe(pe.page);
  });
});

/** Each importer's logs in this repository (and the corpus samples for opencode). */
function importerInputs(): Record<ImporterId, string[]> {
  const codex = join(tmp.dir, 'codex-sessions');
  writeCodexRollout(join(mkdirSync(codex, { recursive: true }) ?? codex, GENERATED_CODEX_FILE), 200_000, 2_000);
  const opencode = corpusOrSkip('samples/opencode', `${SUITE} (opencode import)`);
  const fx = (name: string): string => join(ROOT, 'test/importers', name);
  return {
    'claude-code': [fx('fixtures-claude-code')],
    codex: [codex],
    opencode: opencode === null ? [] : [opencode],
    otlp: [fx('fixtures-otlp')],
    acp: [fx('fixtures-acp')],
    'gemini-cli': [fx('fixtures-gemini-cli')],
    'qwen-code': [fx('fixtures-qwen-code')],
    'copilot-cli': [fx('fixtures-copilot-cli')],
    'pi-agent': [fx('fixtures-pi-agent')],
    openclaw: [fx('fixtures-openclaw')],
    cline: [fx('fixtures-cline')],
    'roo-code': [fx('fixtures-roo-code')],
    'kilo-code': [fx('fixtures-kilo-code')],
    kimi: [fx('fixtures-kimi')],
    amp: [fx('fixtures-amp')],
    droid: [fx('fixtures-droid')],
    goose: [fx('fixtures-goose')],
    'hermes-agent': [fx('fixtures-hermes-agent')],
    aider: [fx('fixtures-aider')],
    codebuff: [fx('fixtures-codebuff')],
  };
}

describe.skipIf(server === null)('every harness imported: the same rows on both engines', () => {
  it('imports each importer\'s test logs into both engines: the same summaries, the same rows in every table, plain count() = FINAL count()', async () => {
    const dbs = await bothDatabases('parity_import');
    const inputs = importerInputs();
    const emitted: Record<string, number> = {};
    for (const id of IMPORTER_IDS) {
      const paths = inputs[id];
      if (paths.length === 0) continue;
      const args = ['import', id, ...paths, '--format', 'json', '--no-progress'];
      const [e, s] = await Promise.all([run([...args, ...dbs.embedded]), run([...args, ...dbs.server])]);
      expect(e.code, `${id} embedded: ${e.stderr}`).toBe(0);
      expect(s.code, `${id} server: ${s.stderr}`).toBe(0);
      const stable = (m: Record<string, number>): Record<string, number> => {
        const { elapsed_ms: _e, events_per_s: _r, mb_per_s: _m, ...rest } = m;
        return rest;
      };
      expect({ id, ...stable(metrics(s.stdout)) }).toEqual({ id, ...stable(metrics(e.stdout)) });
      emitted[id] = metrics(s.stdout)['events_emitted'] ?? 0;
    }
    for (const [id, n] of Object.entries(emitted)) expect({ id, emitted: n > 0 }).toEqual({ id, emitted: true });
    const [e, s] = await Promise.all([dump(dbs.embedded), dump(dbs.server)]);
    const harnesses = new Set(s.get('tool_calls')!.map((r) => String((JSON.parse(r) as { harness: string }).harness)));
    expect(harnesses.size).toBeGreaterThanOrEqual(8);
    expect(s).toEqual(e);
    const [ce, cs] = await Promise.all([counts(dbs.embedded), counts(dbs.server)]);
    for (const t of ANALYTICS_TABLE_NAMES) {
      const [plain, final] = (cs[t] ?? '').split(' / ');
      expect({ table: t, plain }).toEqual({ table: t, plain: final });
    }
    expect(cs).toEqual(ce);
  });
});

// A batch of thousands of sessions and ids: its lookups and its insert's session list are more
// than a server takes in one HTTP form field (64 KiB on clickhouse-local, 128 KiB on
// clickhouse-server: "HTML Form Exception: Field value too long" before the sink sent them in parts).
describe.skipIf(server === null)('a batch of 12 000 events over 4 000 sessions: the same rows on both engines', () => {
  it('replayed twice into both engines: the same rows, the second run stores nothing, plain count() = FINAL count()', async () => {
    const dbs = await bothDatabases('parity_wide_batch');
    const file = join(tmp.dir, 'wide.jsonl');
    writeFileSync(file, `${generateEvents('wide-batch-session-with-a-long-name-0123456789', 12_000, 4_000).lines.join('\n')}\n`);
    for (const pass of [1, 2]) {
      const [e, s] = await Promise.all([
        run(['replay', file, ...dbs.embedded, '--format', 'json', '--no-progress']),
        run(['replay', file, ...dbs.server, '--format', 'json', '--no-progress']),
      ]);
      expect(e.code, e.stderr).toBe(0);
      expect(s.code, s.stderr).toBe(0);
      expect(metrics(s.stdout)).toMatchObject({ events_read: 12_000, events_already_stored: pass === 1 ? 0 : 12_000 });
      expect(metrics(e.stdout)).toMatchObject({ events_read: 12_000, events_already_stored: pass === 1 ? 0 : 12_000 });
    }
    const [ce, cs] = await Promise.all([counts(dbs.embedded), counts(dbs.server)]);
    expect(cs['tool_calls']).toBe('12000 / 12000');
    for (const t of ANALYTICS_TABLE_NAMES) {
      const [plain, final] = (cs[t] ?? '').split(' / ');
      expect({ table: t, plain }).toEqual({ table: t, plain: final });
    }
    expect(cs).toEqual(ce);
    expect(await dump(dbs.server)).toEqual(await dump(dbs.embedded));
  });
});
