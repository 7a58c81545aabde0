// The Amp importer: its folders (the XDG data folder, the legacy editor globalStorage), the
// reading of a thread document (gpt-* cache creation as input, results by toolUseID or
// tool_use_id, failed and rejected runs), the fixture folder's golden events and its import into a
// real embedded ClickHouse against the figures fixtures-amp/figures.py computes (plain json, no
// importer code), a thread rewritten whole re-imported (its events replace, never add), a damaged
// message as a dead letter, and the research sample when present.
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ampImporter } from '../../src/importers/amp/index.ts';
import { parseThreadFile } from '../../src/importers/amp/parser.ts';
import { defaultAmpPaths, isThreadFile } from '../../src/importers/amp/paths.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURES = new URL('./fixtures-amp/', import.meta.url).pathname.replace(/\/$/, '');
const T1 = 'T-3c7e1a9d-52b4-4f08-9e6a-1d2c3b4a5f60';
const T2 = 'T-9b8a7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d';
const T1_FILE = join(FIXTURES, 'dot-local-share/amp/threads', `${T1}.json`);
type Obj = Record<string, unknown>;

describe('amp paths', () => {
  it('reads $XDG_DATA_HOME/amp/threads or ~/.local/share/amp/threads, and the editor globalStorage threads3 folders that exist', () => {
    const none = (): boolean => false;
    expect(defaultAmpPaths({}, '/home/u', 'linux', none)).toEqual(['/home/u/.local/share/amp/threads']);
    expect(defaultAmpPaths({ XDG_DATA_HOME: '/x' }, '/home/u', 'linux', none)).toEqual(['/x/amp/threads']);
    expect(defaultAmpPaths({}, '/Users/u', 'darwin', (p) => p.includes('Cursor'))).toEqual(['/Users/u/Library/Application Support/Cursor/User/globalStorage/sourcegraph.amp/threads3']);
    expect(isThreadFile('/h/.local/share/amp/threads/T-1.json')).toBe(true);
    expect(isThreadFile('/h/g/sourcegraph.amp/threads3/T-1.json')).toBe(true);
    expect(isThreadFile('/h/.local/share/amp/threads/settings.json')).toBe(false);
    expect(ampImporter.listFiles([FIXTURES]).map((f) => relative(FIXTURES, f))).toEqual([`Code/User/globalStorage/sourcegraph.amp/threads3/${T2}.json`, `dot-local-share/amp/threads/${T1}.json`]);
  });
});

describe('amp parser', () => {
  const events = (): Obj[] => parseThreadFile(T1_FILE, readFileSync(T1_FILE)).events.map((e) => JSON.parse(e.envelope.text) as Obj);
  it('writes a gpt-* request\'s cache creation as uncached input, a Claude request\'s as cache write', () => {
    const usage = events().filter((e) => e['type'] === 'usage');
    expect(usage.find((u) => u['model'] === 'gpt-5.6-sol')).toMatchObject({ input_tokens: 17012, cache_write_tokens: 0, request_id: '6', turn_id: `${T1}#5` });
    expect(usage[0]).toMatchObject({ input_tokens: 12, output_tokens: 140, cache_read_tokens: 14208, cache_write_tokens: 2210, request_id: '1', turn_id: `${T1}#0`, ts: '2026-09-24T12:26:42.000Z' });
  });
  it('joins tool_use to tool_result: done ok, error and rejected-by-user errors, none pending', () => {
    const calls = Object.fromEntries(events().filter((e) => e['type'] === 'tool_call').map((e) => [e['call_id'], e]));
    expect(calls['toolu_01']).toMatchObject({ tool: 'Read', status: 'ok', output: 'export const add = (a, b) => a - b;', input: { path: '/home/ada/calc/src/math.ts', read_range: [1, 40] } });
    expect(calls['toolu_02']).toMatchObject({ tool: 'Bash', status: 'error', error: 'exit code 1', output: 'FAIL math.test.ts' });
    expect(calls['toolu_03']).toMatchObject({ status: 'error', error: 'rejected-by-user' });
    expect(calls['toolu_04']).toMatchObject({ tool: 'oracle', status: 'ok', output: 'Yes.' });
    expect(calls['toolu_05']).toMatchObject({ status: 'pending' });
  });
  it('makes a damaged message a malformed record at its line, and a document that is no thread one record', () => {
    const doc = JSON.parse(readFileSync(T1_FILE, 'utf8')) as Obj;
    const messages = doc['messages'] as Obj[];
    const bad = { ...messages[1], usage: { inputTokens: '12', outputTokens: 1 } };
    const pretty = JSON.stringify({ ...doc, messages: [messages[0], bad] }, null, 2);
    const p = parseThreadFile(T1_FILE, Buffer.from(pretty));
    expect(p.malformed?.map((m) => [m.problem, m.line, m.detail])).toEqual([['malformed:usage', pretty.split('\n').findIndex((l) => l.includes('"messageId": 1')) - 1, '`usage.inputTokens` is the string "12", not a non-negative integer.']]);
    expect(parseThreadFile('/t/threads/T-x.json', Buffer.from('{"v":1}')).malformed?.map((m) => m.problem)).toEqual(['not_a_thread']);
  });
});

describe('amp fixtures', () => {
  // Its golden events: test/importers/golden-registry.test.ts.
  describe('import into embedded ClickHouse', () => {
    let sink: ClickHouseSink;
    let cleanup: () => Promise<void>;
    let first: ImportSummary;
    const tmp = makeTempDir('amp-import');
    beforeAll(async () => {
      ({ sink, cleanup } = await openTempSink('amp'));
      first = await runImport(ampImporter, [FIXTURES], sink);
    });
    afterAll(async () => {
      await cleanup?.();
      tmp.cleanup();
    });
    const sums = async (prefix: string): Promise<number[]> => {
      const r = await sink.queryRows<Record<string, string>>(`SELECT count() AS n, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cache_read_tokens) AS cr, sum(cache_write_tokens) AS cw FROM token_usage FINAL WHERE source = 'observed' AND harness = 'amp' AND startsWith(origin, '${prefix}')`);
      return ['n', 'i', 'o', 'cr', 'cw'].map((k) => Number(r[0]?.[k]));
    };

    it('stores the figures figures.py computes (normalised: gpt-* cache creation as input) and every call once', async () => {
      // python3 test/importers/fixtures-amp/figures.py: 5 usage records; normalised 17,043 / 349 / 47,354 / 14,520
      expect(await sums(FIXTURES)).toEqual([5, 17_043, 349, 47_354, 14_520]);
      const rows = await sink.queryRows<{ tool: string; status: string; n: string }>(`SELECT tool_name AS tool, status, count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${FIXTURES}') GROUP BY tool, status ORDER BY tool, status`);
      expect(rows.map((r) => `${r.tool} ${r.status} ${r.n}`)).toEqual(['Bash error 1', 'Read ok 1', 'edit_file error 1', 'edit_file pending 1', 'finder ok 1', 'oracle ok 1']);
      expect(first.malformedRecords).toBe(0);
      expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${FIXTURES}') AND has(flags, 'uncatalogued')`)).toBe(0);
    });

    it('re-reads a thread rewritten whole: a streaming message completed replaces its usage and call, nothing is added; a damaged message is one dead letter', async () => {
      expect((await runImport(ampImporter, [FIXTURES], sink)).eventsEmitted).toBe(0);
      const dir = join(tmp.dir, 'threads');
      // Another thread id: its events are its own, not the fixture thread's (ids hold the thread id).
      const file = join(dir, 'T-copy.json');
      cpSync(join(FIXTURES, 'dot-local-share/amp/threads'), dir, { recursive: true });
      writeFileSync(file, JSON.stringify({ ...(JSON.parse(readFileSync(join(dir, `${T1}.json`), 'utf8')) as Obj), id: 'T-copy' }));
      rmSync(join(dir, `${T1}.json`));
      await runImport(ampImporter, [dir], sink);
      const before = await sums(tmp.dir);
      expect(before[0]).toBe(4);
      const doc = JSON.parse(readFileSync(file, 'utf8')) as Obj;
      const messages = doc['messages'] as Obj[];
      const last = messages[messages.length - 1] as Obj;
      messages[messages.length - 1] = { ...last, state: { type: 'complete', stopReason: 'tool_use' }, usage: { ...(last['usage'] as Obj), outputTokens: 180 } };
      messages.push({ role: 'user', messageId: 9, content: [{ type: 'tool_result', toolUseID: 'toolu_05', run: { status: 'done', result: { diff: '-a - b\n+a + b' } } }], meta: { sentAt: 1790200030000 } });
      messages.push({ role: 'assistant', messageId: 10, content: [{ type: 'text', text: 'Fixed.' }], usage: { model: 'claude-sonnet-4-20250514', timestamp: '2026-09-24T12:27:20.000Z', inputTokens: '3', outputTokens: 2 } });
      writeFileSync(file, JSON.stringify({ ...doc, v: 15 }));
      const again = await runImport(ampImporter, [dir], sink);
      expect(again.filesRead).toBe(1);
      expect(again.malformedRecords).toBe(1);
      const after = await sums(tmp.dir);
      expect(after).toEqual([4, before[1], (before[2] ?? 0) + 160, before[3], before[4]]);
      expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${tmp.dir}') AND call_id = 'toolu_05' AND status = 'ok'`)).toBe(1);
      expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${tmp.dir}')`)).toBe(5);
      const dead = await sink.queryRows<{ detail: string }>({ query: 'SELECT detail FROM dead_letters FINAL WHERE startsWith(source, {s:String})', query_params: { s: `${file}:` } });
      expect(dead).toEqual([{ detail: 'malformed:usage: `usage.inputTokens` is the string "3", not a non-negative integer.' }]);
    });
  });
});

// The research sample (synthetic: no real Amp thread is public; Amp is closed source).
const RESEARCH = '/work/research-33/amp/samples';
const present = existsSync(RESEARCH) && ampImporter.listFiles([RESEARCH]).length > 0;
if (!present) console.warn(`\n!! SKIPPING the amp research-sample test: ${RESEARCH} is absent (not in CI; no real Amp thread is public, src/importers/amp/README.md says why).\n`);
describe.skipIf(!present)('amp research sample (synthetic, from agentsview test snippets)', () => {
  it('gives the research figures: 3 usage, 18,637 / 258 / 15,863 / 13,438 normalised; Read, Bash ok, librarian error', () => {
    // python3 /work/research-33/amp/figures.py
    const tok = [0, 0, 0, 0, 0];
    const calls: string[] = [];
    for (const f of ampImporter.listFiles([RESEARCH])) {
      const p = ampImporter.parseFile(f, readFileSync(f));
      expect(p.malformed).toEqual([]);
      for (const e of p.events.map((x) => JSON.parse(x.envelope.text) as Obj)) {
        if (e['type'] === 'usage') ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens'].forEach((k, i) => (tok[i + 1]! += Number(e[k])), tok[0]!++);
        else calls.push(`${String(e['tool'])} ${String(e['status'])}`);
      }
    }
    expect(tok).toEqual([3, 18_637, 258, 15_863, 13_438]);
    expect(calls.sort()).toEqual(['Bash ok', 'Read ok', 'librarian error']);
  });
});
