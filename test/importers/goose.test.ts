// The Goose importer: its folders, the database read through chdb's sqlite() (verified here on
// the committed fixture database), the ledger's input taken apart from the cache read, a
// sub_agent session as an agent of its parent, MCP tools as server__tool, the fixture's golden
// events and its import into a real embedded ClickHouse (the database read while the sink's
// engine holds the process) against the figures fixtures-goose/figures.py computes (python3
// sqlite3, no importer code), a database changed in place re-imported (replaced, a new request
// added), a damaged row as a dead letter, and the research sample when present.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gooseImporter } from '../../src/importers/goose/index.ts';
import { parseGooseDb } from '../../src/importers/goose/parser.ts';
import { defaultGoosePaths } from '../../src/importers/goose/paths.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURES = new URL('./fixtures-goose/', import.meta.url).pathname.replace(/\/$/, '');
const DB = join(FIXTURES, 'goose/sessions/sessions.db');
const S = '20260901_3';
const SUB = '20260901_4';
type Obj = Record<string, unknown>;
const events = (path: string): Obj[] => parseGooseDb(path, readFileSync(path)).events.map((e) => JSON.parse(e.envelope.text) as Obj);

describe('goose paths', () => {
  it('reads <data dir>/sessions/sessions.db per OS, or $GOOSE_PATH_ROOT/data/sessions', () => {
    const none = (): boolean => false;
    expect(defaultGoosePaths({}, '/home/u', 'linux', none)).toEqual(['/home/u/.local/share/goose/sessions']);
    expect(defaultGoosePaths({ XDG_DATA_HOME: '/x' }, '/home/u', 'darwin', none)).toEqual(['/x/goose/sessions']);
    expect(defaultGoosePaths({ APPDATA: 'C:/Users/u/AppData/Roaming' }, 'C:/Users/u', 'win32', none)[0]).toBe('C:/Users/u/AppData/Roaming/Block/goose/data/sessions');
    expect(defaultGoosePaths({ GOOSE_PATH_ROOT: '/srv/g' }, '/home/u', 'linux', none)).toEqual(['/srv/g/data/sessions']);
    expect(gooseImporter.listFiles([FIXTURES]).map((f) => relative(FIXTURES, f))).toEqual(['goose/sessions/sessions.db']);
  });
});

describe('goose parser (through chdb sqlite())', () => {
  it('a usage per ledger row, the fresh input (the ledger\'s input includes the cache read), the compaction row counted, an all-zero row skipped', () => {
    const usage = events(DB).filter((e) => e['type'] === 'usage');
    expect(usage.map((u) => u['request_id'])).toEqual(['ledger:1', 'ledger:2', 'ledger:3', 'ledger:4', 'ledger:5', 'ledger:7']);
    expect(usage[1]).toMatchObject({ input_tokens: 2038, cache_read_tokens: 8192, cache_write_tokens: 1536, output_tokens: 180, model: 'claude-sonnet-4-5', session_id: S });
    expect(usage[3]).toMatchObject({ session_id: S, agent_id: SUB, model: 'claude-haiku-4-5' });
    expect(parseGooseDb(DB, readFileSync(DB)).skipped).toMatchObject({ 'usage_ledger:zero': 1 });
  });
  it('joins toolRequest to toolResponse: isError an error, a call the model wrote badly an error, none pending; the sub_agent\'s calls on its agent', () => {
    const calls = Object.fromEntries(events(DB).filter((e) => e['type'] === 'tool_call').map((e) => [e['call_id'], e]));
    expect(calls['toolu_2']).toMatchObject({ tool: 'developer__shell', status: 'error', error: 'test add ... FAILED', input: { command: 'cargo test' } });
    expect(calls['toolu_3']).toMatchObject({ tool: 'github__get_issue', status: 'ok' });
    expect(calls['toolu_4']).toMatchObject({ status: 'error', error: 'invalid_call: Invalid JSON in tool arguments' });
    expect(calls['toolu_6']).toMatchObject({ status: 'pending' });
    expect(calls['toolu_s1']).toMatchObject({ session_id: S, agent_id: SUB, status: 'ok' });
  });
  it('bytes that are no Goose database are one malformed record', () => {
    expect(parseGooseDb('/x/sessions.db', Buffer.from('{"not":"sqlite"}')).malformed?.map((m) => m.problem)).toEqual(['not_sqlite']);
    expect(parseGooseDb('/x/sessions.db', Buffer.alloc(0)).skipped).toEqual({ empty_database: 1 });
  });
});

describe('goose fixtures', () => {
  // Its golden events: test/importers/golden-registry.test.ts.
  describe('import into embedded ClickHouse (the database read while the sink holds the engine)', () => {
    let sink: ClickHouseSink;
    let cleanup: () => Promise<void>;
    let first: ImportSummary;
    const tmp = makeTempDir('goose-import');
    const grownDb = join(tmp.dir, 'grown.db');
    beforeAll(async () => {
      // Before the sink starts the process's engine: a copy changed in place (one more request, one damaged row).
      copyFileSync(DB, grownDb);
      const { query } = createRequire(import.meta.url)('chdb') as { query: (sql: string) => string };
      query(`INSERT INTO TABLE FUNCTION sqlite('${grownDb}', 'usage_ledger') (session_id, created_timestamp, model, input_tokens, output_tokens, cache_read_tokens) VALUES ('copy_1', 1788250000, 'claude-sonnet-4-5', 9000, 70, 8000)`);
      query(`INSERT INTO TABLE FUNCTION sqlite('${grownDb}', 'messages') (message_id, session_id, role, content_json, created_timestamp) VALUES ('bad', 'copy_1', 'assistant', 'not json', 1788250001)`);
      ({ sink, cleanup } = await openTempSink('goose'));
      first = await runImport(gooseImporter, [FIXTURES], sink);
    });
    afterAll(async () => {
      await cleanup?.();
      tmp.cleanup();
    });
    const sums = async (prefix: string): Promise<number[]> => {
      const r = await sink.queryRows<Record<string, string>>(`SELECT count() AS n, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cache_read_tokens) AS cr, sum(cache_write_tokens) AS cw FROM token_usage FINAL WHERE source = 'observed' AND harness = 'goose' AND startsWith(origin, '${prefix}')`);
      return ['n', 'i', 'o', 'cr', 'cw'].map((k) => Number(r[0]?.[k]));
    };

    it('stores the ledger figures figures.py computes and every call once (MCP as server__tool, built-in extensions catalogued)', async () => {
      // python3 test/importers/fixtures-goose/figures.py: 6 ledger rows; fresh 19,550 / cache read 28,416 / cache write 9,728 / output 1,015
      expect(await sums(FIXTURES)).toEqual([6, 19_550, 1015, 28_416, 9728]);
      const rows = await sink.queryRows<{ tool: string; n: string }>(`SELECT if(namespace = 'mcp', concat('mcp:', mcp_server, '__', mcp_tool), tool_name) AS tool, count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${FIXTURES}') GROUP BY tool ORDER BY tool`);
      expect(Object.fromEntries(rows.map((r) => [r.tool, Number(r.n)]))).toEqual({ developer__shell: 2, developer__text_editor: 2, 'mcp:github__get_issue': 1, subagent__execute_task: 1, unknown: 1 });
      expect(first.malformedRecords).toBe(0);
      expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${FIXTURES}') AND has(flags, 'uncatalogued') AND tool_name != 'unknown'`)).toBe(0);
    });

    it('reads nothing again unchanged; a database changed in place re-read whole: its requests replaced, the new one added, a damaged row one dead letter', async () => {
      expect((await runImport(gooseImporter, [FIXTURES], sink)).eventsEmitted).toBe(0);
      const dir = join(tmp.dir, 'data', 'sessions');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, 'sessions.db');
      copyFileSync(DB, file);
      await runImport(gooseImporter, [dir], sink);
      expect((await sums(dir))[0]).toBe(0); // the same ids as the fixture's: stored once
      copyFileSync(grownDb, file);
      const grown = await runImport(gooseImporter, [dir], sink);
      expect(grown.filesRead).toBe(1);
      expect(grown.malformedRecords).toBe(1);
      expect(await sums(dir)).toEqual([1, 1000, 70, 8000, 0]);
      expect(await sums(FIXTURES)).toEqual([6, 19_550, 1015, 28_416, 9728]);
      const dead = await sink.queryRows<{ detail: string }>({ query: 'SELECT detail FROM dead_letters FINAL WHERE startsWith(source, {s:String})', query_params: { s: `${file}:` } });
      expect(dead).toEqual([{ detail: 'messages:malformed: `content_json` is not a JSON array of content blocks.' }]);
    });
  });
});

// The research sample: a synthetic database on Goose's schema, with figures from tokdash's tests.
const RESEARCH = '/work/research-33/goose/samples';
const present = existsSync(RESEARCH) && gooseImporter.listFiles([RESEARCH]).length > 0;
if (!present) console.warn(`\n!! SKIPPING the goose research-sample test: ${RESEARCH} is absent (not in CI; no real Goose sessions.db is public, src/importers/goose/README.md says so).\n`);
describe.skipIf(!present)('goose research sample', () => {
  it('gives the research figures: 3 ledger rows, fresh 8,634 / cache read 8,320 / output 324; developer__shell ok', () => {
    // python3 /work/research-33/goose/figures.py
    const all = gooseImporter.listFiles([RESEARCH]).flatMap((f) => events(f));
    const usage = all.filter((e) => e['type'] === 'usage');
    const sum = (k: string): number => usage.reduce((n, u) => n + Number(u[k]), 0);
    expect([usage.length, sum('input_tokens'), sum('cache_read_tokens'), sum('cache_write_tokens'), sum('output_tokens')]).toEqual([3, 8634, 8320, 0, 324]);
    expect(all.filter((e) => e['type'] === 'tool_call').map((e) => `${String(e['tool'])} ${String(e['status'])}`)).toEqual(['developer__shell ok']);
  });
});
