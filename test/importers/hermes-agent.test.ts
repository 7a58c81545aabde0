// The Hermes Agent importer: its folder, the state database read through chdb's sqlite(), each
// session's totals as one usage (a delegated child an agent of its parent, a continuation after
// compression its own session), calls joined to their tool rows, mcp_<server>_<tool> split with the
// config's server names, the fixture's golden events and its import into a real embedded ClickHouse
// against the figures fixtures-hermes-agent/figures.py computes (python3 sqlite3, no importer code),
// a re-read database replacing the totals, and the research sample when present.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hermesAgentImporter } from '../../src/importers/hermes/index.ts';
import { mcpName, mcpServersOf, parseHermesDb } from '../../src/importers/hermes/parser.ts';
import { defaultHermesPaths } from '../../src/importers/hermes/paths.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURES = new URL('./fixtures-hermes-agent/', import.meta.url).pathname.replace(/\/$/, '');
const DB = join(FIXTURES, 'dot-hermes/state.db');
const S = '20261005_090000_a1b2c3';
const SUB = '20261005_090200_d4e5f6';
const CONT = '20261005_090500_0f9e8d';
type Obj = Record<string, unknown>;
const events = (path: string): Obj[] => hermesAgentImporter.parseFile(path, readFileSync(path)).events.map((e) => JSON.parse(e.envelope.text) as Obj);

describe('hermes-agent paths and parser', () => {
  it('reads $HERMES_HOME or ~/.hermes, every state.db below it', () => {
    expect(defaultHermesPaths({}, '/home/u')).toEqual(['/home/u/.hermes']);
    expect(defaultHermesPaths({ HERMES_HOME: '~/h' }, '/home/u')).toEqual(['/home/u/h']);
    expect(hermesAgentImporter.listFiles([FIXTURES]).map((f) => relative(FIXTURES, f))).toEqual(['dot-hermes/state.db']);
  });
  it('splits mcp_<server>_<tool> with the config\'s server names, else keeps it', () => {
    const yaml = readFileSync(join(FIXTURES, 'dot-hermes/config.yaml'), 'utf8');
    expect(mcpServersOf(yaml)).toEqual(['github', 'my-files']);
    expect(mcpName('mcp_github_get_issue', ['github'])).toBe('github__get_issue');
    expect(mcpName('mcp_my_files_read', ['my-files'])).toBe('my-files__read');
    expect(mcpName('mcp_other_tool', ['github'])).toBe('mcp_other_tool');
  });
  it('one usage per session with tokens (session totals); a delegated child an agent of its parent; a continuation its own session', () => {
    const usage = events(DB).filter((e) => e['type'] === 'usage');
    expect(usage.map((u) => [u['session_id'], u['agent_id'], u['input_tokens'], u['reasoning_tokens']])).toEqual([
      [S, 'session_totals', 6120, 0],
      [S, `session_totals:${SUB}`, 2300, 0],
      [CONT, 'session_totals', 1650, 128],
    ]);
    const calls = Object.fromEntries(events(DB).filter((e) => e['type'] === 'tool_call').map((e) => [e['call_id'], e]));
    expect(calls['call_2']).toMatchObject({ tool: 'terminal', status: 'error', error: 'Command exited with code 1' });
    expect(calls['call_s1']).toMatchObject({ session_id: S, agent_id: SUB, status: 'ok' });
    expect(calls['call_6']).toMatchObject({ status: 'pending' });
    expect(parseHermesDb('/x/state.db', Buffer.from('nope')).malformed?.map((m) => m.problem)).toEqual(['not_sqlite']);
  });
});

describe('hermes-agent fixtures', () => {
  // Its golden events: test/importers/golden-registry.test.ts.
  describe('import into embedded ClickHouse', () => {
    let sink: ClickHouseSink;
    let cleanup: () => Promise<void>;
    let first: ImportSummary;
    const tmp = makeTempDir('hermes-import');
    const grownDb = join(tmp.dir, 'grown.db');
    beforeAll(async () => {
      // Before the sink starts the process's engine: a copy whose first session's totals grew, and a damaged row.
      copyFileSync(DB, grownDb);
      const { query } = createRequire(import.meta.url)('chdb') as { query: (sql: string) => string };
      query(`INSERT INTO TABLE FUNCTION sqlite('${grownDb}', 'sessions') (id, source, model, started_at, input_tokens, output_tokens) VALUES ('copy_1', 'cli', 'openai/gpt-5.2', 1790400000, 500, 60)`);
      query(`INSERT INTO TABLE FUNCTION sqlite('${grownDb}', 'messages') (session_id, role, tool_calls, timestamp) VALUES ('copy_1', 'assistant', 'not json', 1790400001)`);
      ({ sink, cleanup } = await openTempSink('hermes'));
      first = await runImport(hermesAgentImporter, [FIXTURES], sink);
    });
    afterAll(async () => {
      await cleanup?.();
      tmp.cleanup();
    });
    const sums = async (prefix: string): Promise<number[]> => {
      const r = await sink.queryRows<Record<string, string>>(`SELECT count() AS n, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cache_read_tokens) AS cr, sum(cache_write_tokens) AS cw, sum(reasoning_tokens) AS t FROM token_usage FINAL WHERE source = 'observed' AND harness = 'hermes_agent' AND startsWith(origin, '${prefix}')`);
      return ['n', 'i', 'o', 'cr', 'cw', 't'].map((k) => Number(r[0]?.[k]));
    };

    it('stores the session totals figures.py sums and every call once (MCP as server__tool)', async () => {
      // python3 test/importers/fixtures-hermes-agent/figures.py: 10,070 / 2,080 / 43,008 / 8,192 / 128; 7 calls, 6 with a result
      expect(await sums(FIXTURES)).toEqual([3, 10_070, 2080, 43_008, 8192, 128]);
      const rows = await sink.queryRows<{ tool: string; n: string }>(`SELECT if(namespace = 'mcp', concat('mcp:', mcp_server, '__', mcp_tool), tool_name) AS tool, count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${FIXTURES}') GROUP BY tool ORDER BY tool`);
      expect(Object.fromEntries(rows.map((r) => [r.tool, Number(r.n)]))).toEqual({ read_file: 1, terminal: 2, delegate_task: 1, search_files: 1, 'mcp:github__get_issue': 1, patch: 1 });
      expect(first.malformedRecords).toBe(0);
      expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${FIXTURES}') AND has(flags, 'uncatalogued')`)).toBe(0);
    });

    it('reads nothing again unchanged; a database changed in place re-read whole: a new session added, a damaged row one dead letter', async () => {
      expect((await runImport(hermesAgentImporter, [FIXTURES], sink)).eventsEmitted).toBe(0);
      const dir = join(tmp.dir, 'home');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, 'state.db');
      copyFileSync(grownDb, file);
      const grown = await runImport(hermesAgentImporter, [dir], sink);
      expect(grown.malformedRecords).toBe(1);
      expect(await sums(dir)).toEqual([1, 500, 60, 0, 0, 0]);
      expect(await sums(FIXTURES)).toEqual([3, 10_070, 2080, 43_008, 8192, 128]);
      const dead = await sink.queryRows<{ detail: string }>({ query: 'SELECT detail FROM dead_letters FINAL WHERE startsWith(source, {s:String})', query_params: { s: `${file}:` } });
      expect(dead).toEqual([{ detail: 'messages:malformed:tool_calls: `tool_calls` is not a JSON array of calls.' }]);
    });
  });
});

// The research sample: synthetic (no real state.db is public).
const RESEARCH = '/work/research-33/hermes/samples';
const present = existsSync(RESEARCH) && hermesAgentImporter.listFiles([RESEARCH]).length > 0;
if (!present) console.warn(`\n!! SKIPPING the hermes-agent research-sample test: ${RESEARCH} is absent (not in CI; no real Hermes state.db is public).\n`);
describe.skipIf(!present)('hermes-agent research sample', () => {
  it('gives the research figures: one session 2,400 / 180 / 1,024 / 0 / 64 reasoning; shell with its result', () => {
    // python3 /work/research-33/hermes/figures.py
    const all = hermesAgentImporter.listFiles([RESEARCH]).flatMap((f) => events(f));
    expect(all.filter((e) => e['type'] === 'usage').map((u) => [u['input_tokens'], u['output_tokens'], u['cache_read_tokens'], u['cache_write_tokens'], u['reasoning_tokens']])).toEqual([[2400, 180, 1024, 0, 64]]);
    expect(all.filter((e) => e['type'] === 'tool_call').map((e) => `${String(e['tool'])} ${String(e['status'])}`)).toEqual(['shell ok']);
  });
});
