// The Factory Droid importer: its folder, a transcript's calls joined to their results (an
// `Error:` result a failure), a subagent session (callingSessionId) as an agent of its parent,
// the session's totals from its settings file as one usage event, the fixture folder's golden
// events and its import into a real embedded ClickHouse against the figures fixtures-droid/figures.py
// computes (plain json, no importer code), a malformed record as a dead letter, an incremental
// re-import where the grown transcript writes the totals again (replaced, not added), and the
// research sample when present.
import { appendFileSync, cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { droidImporter } from '../../src/importers/droid/index.ts';
import { parseDroidFile } from '../../src/importers/droid/parser.ts';
import { defaultDroidPaths, settingsPathOf } from '../../src/importers/droid/paths.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURES = new URL('./fixtures-droid/', import.meta.url).pathname.replace(/\/$/, '');
const S = '5f0c2d3e-8a1b-4c7d-9e2f-3a4b5c6d7e8f';
const SUB = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const FLAT = '0e9d8c7b-6a5f-4e3d-9c2b-1a0f9e8d7c6b';
const PROJECT = join(FIXTURES, 'sessions/-home-ada-src-calc');
type Obj = Record<string, unknown>;
const parse = (f: string): Obj[] => droidImporter.parseFile(f, readFileSync(f)).events.map((e) => JSON.parse(e.envelope.text) as Obj);

describe('droid paths and parser', () => {
  it('reads ~/.factory/sessions, every *.jsonl below it, each with its <session>.settings.json', () => {
    expect(defaultDroidPaths('/home/u')).toEqual(['/home/u/.factory/sessions']);
    expect(settingsPathOf('/s/p/abc.jsonl')).toBe('/s/p/abc.settings.json');
    expect(droidImporter.listFiles([join(FIXTURES, 'events.golden.jsonl')])).toHaveLength(1);
    expect(droidImporter.listFiles([FIXTURES]).map((f) => relative(FIXTURES, f))).toEqual([`sessions/-home-ada-src-calc/${S}.jsonl`, `sessions/-home-ada-src-calc/${SUB}.jsonl`, `sessions/${FLAT}.jsonl`]);
  });
  it('joins calls to results (a result text starting Error: is a failure), and writes the settings totals as one usage of the session', () => {
    const events = parse(join(PROJECT, `${S}.jsonl`));
    const calls = Object.fromEntries(events.filter((e) => e['type'] === 'tool_call').map((e) => [e['call_id'], e]));
    expect(calls['toolu_x1']).toMatchObject({ tool: 'Execute', status: 'error', error: 'Error: Command failed (exit code: 1)', turn_id: 'u1' });
    expect(calls['toolu_r1']).toMatchObject({ tool: 'Read', status: 'ok', duration_ms: 200, input: { file_path: '/home/ada/src/calc/src/math.ts' } });
    expect(calls['toolu_g1']).toMatchObject({ status: 'pending' });
    const usage = events.filter((e) => e['type'] === 'usage');
    expect(usage).toEqual([expect.objectContaining({ agent_id: 'session_totals', ts: '2026-10-02T09:00:00.000Z', input_tokens: 4210, output_tokens: 1380, cache_read_tokens: 61440, cache_write_tokens: 9120, reasoning_tokens: 512, model: 'custom:Claude-Sonnet-4.5-[Anthropic]-0' })]);
    // The usage ends with the transcript's last line: a grown transcript writes it again.
    const parsed = droidImporter.parseFile(join(PROJECT, `${S}.jsonl`), readFileSync(join(PROJECT, `${S}.jsonl`)));
    expect(parsed.events.find((e) => e.envelope.text.includes('"type":"usage"'))?.endOffset).toBe(readFileSync(join(PROJECT, `${S}.jsonl`)).length);
  });
  it('makes a subagent session (callingSessionId) an agent of its parent session; no settings file, no usage', () => {
    const sub = parse(join(PROJECT, `${SUB}.jsonl`));
    expect(sub.map((e) => [e['type'], e['session_id'], e['agent_id']])).toEqual([['tool_call', S, SUB], ['usage', S, `session_totals:${SUB}`]]);
    expect(parse(join(FIXTURES, 'sessions', `${FLAT}.jsonl`)).map((e) => e['type'])).toEqual(['tool_call']);
  });
  it('makes a record it cannot read a malformed record at its line; an unreadable settings file a counted skip', () => {
    const lines = ['{"type":"message","id":"x","timestamp":"nope","message":{"role":"user","content":[]}}', '{"type":"message","id":"y","timestamp":"2026-10-02T09:00:00.000Z","message":{"role":"assistant","content":[{"type":"tool_use","name":"Read","input":{}}]}}', '[1]'];
    const p = parseDroidFile('/h/.factory/sessions/p/s.jsonl', Buffer.from(lines.join('\n') + '\n'), '{"tokenUsage":{"inputTokens":"9"}}');
    expect(p.events).toEqual([]);
    expect(p.malformed?.map((m) => [m.line, m.problem])).toEqual([[1, 'no_timestamp'], [2, 'malformed:tool_use'], [3, 'not_an_object']]);
    expect(p.skipped).toMatchObject({ 'settings:unreadable': 1 });
  });
});

describe('droid fixtures', () => {
  // Its golden events: test/importers/golden-registry.test.ts.
  describe('import into embedded ClickHouse', () => {
    let sink: ClickHouseSink;
    let cleanup: () => Promise<void>;
    let first: ImportSummary;
    const tmp = makeTempDir('droid-import');
    beforeAll(async () => {
      ({ sink, cleanup } = await openTempSink('droid'));
      first = await runImport(droidImporter, [FIXTURES], sink);
    });
    afterAll(async () => {
      await cleanup?.();
      tmp.cleanup();
    });
    const sums = async (prefix: string): Promise<number[]> => {
      const r = await sink.queryRows<Record<string, string>>(`SELECT count() AS n, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cache_read_tokens) AS cr, sum(cache_write_tokens) AS cw, sum(reasoning_tokens) AS t FROM token_usage FINAL WHERE source = 'observed' AND harness = 'droid' AND startsWith(origin, '${prefix}')`);
      return ['n', 'i', 'o', 'cr', 'cw', 't'].map((k) => Number(r[0]?.[k]));
    };

    it('stores one usage per session with settings (the figures.py totals) and every call once', async () => {
      // python3 test/importers/fixtures-droid/figures.py: 6,010 / 1,475 / 65,536 / 11,168 / 512 thinking; 7 calls
      expect(await sums(FIXTURES)).toEqual([2, 6010, 1475, 65_536, 11_168, 512]);
      const rows = await sink.queryRows<{ tool: string; n: string }>(`SELECT tool_name AS tool, count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${FIXTURES}') GROUP BY tool ORDER BY tool`);
      expect(Object.fromEntries(rows.map((r) => [r.tool, Number(r.n)]))).toEqual({ Read: 1, Edit: 1, Execute: 1, Task: 1, Grep: 2, LS: 1 });
      expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${FIXTURES}') AND session_id = '${S}' AND agent_id = '${SUB}'`)).toBe(1);
      expect(first.malformedRecords).toBe(0);
      expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${FIXTURES}') AND has(flags, 'uncatalogued')`)).toBe(0);
    });

    it('reads nothing again unchanged; a grown transcript adds its new calls and writes the totals again, replaced; a malformed line is one dead letter', async () => {
      expect((await runImport(droidImporter, [FIXTURES], sink)).eventsEmitted).toBe(0);
      const dir = join(tmp.dir, 'sessions', 'p');
      const id = 'copy-session';
      cpSync(join(PROJECT, `${S}.jsonl`), join(dir, `${id}.jsonl`));
      const settings = JSON.parse(readFileSync(join(PROJECT, `${S}.settings.json`), 'utf8')) as Obj;
      writeFileSync(join(dir, `${id}.settings.json`), JSON.stringify(settings));
      // The session_start names the copy's id (the ids hold the session).
      const lines = readFileSync(join(dir, `${id}.jsonl`), 'utf8').replace(S, id);
      writeFileSync(join(dir, `${id}.jsonl`), lines);
      await runImport(droidImporter, [dir], sink);
      expect(await sums(tmp.dir)).toEqual([1, 4210, 1380, 61_440, 9120, 512]);
      const bad = '{"type":"message","id":"u9","timestamp":"2026-10-02T09:02:00.000Z","message":"oops"}';
      appendFileSync(join(dir, `${id}.jsonl`), '{"type":"message","id":"u5","parentId":"a4","timestamp":"2026-10-02T09:01:06.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_g1","content":"src/cli.ts"}]}}\n' + bad + '\n');
      writeFileSync(join(dir, `${id}.settings.json`), JSON.stringify({ ...settings, tokenUsage: { ...(settings['tokenUsage'] as Obj), outputTokens: 1500 } }));
      const grown = await runImport(droidImporter, [dir], sink);
      expect(grown.malformedRecords).toBe(1);
      expect(await sums(tmp.dir)).toEqual([1, 4210, 1500, 61_440, 9120, 512]);
      expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${tmp.dir}') AND call_id = 'toolu_g1' AND status = 'ok'`)).toBe(1);
      const dead = await sink.queryRows<{ raw: string }>({ query: 'SELECT raw FROM dead_letters FINAL WHERE startsWith(source, {s:String})', query_params: { s: join(dir, `${id}.jsonl:`) } });
      expect(dead).toEqual([{ raw: bad }]);
    });
  });
});

// The research samples: synthetic transcripts (agent-sessions fixtures) and a settings file with a real machine's figures.
const RESEARCH = '/work/research-33/droid/samples';
const present = existsSync(RESEARCH) && droidImporter.listFiles([RESEARCH]).length > 0;
if (!present) console.warn(`\n!! SKIPPING the droid research-sample test: ${RESEARCH} is absent (not in CI; no real Droid transcript is public, src/importers/droid/README.md says why).\n`);
describe.skipIf(!present)('droid research sample', () => {
  it('gives the research figures: 2 sessions, Execute 2 (1 error), 286,905 / 32,652 / 10,505,600 / 0 / 10,176 thinking', () => {
    // python3 /work/research-33/droid/figures.py
    const events = droidImporter.listFiles([RESEARCH]).flatMap((f) => {
      const p = droidImporter.parseFile(f, readFileSync(f));
      expect(p.malformed).toEqual([]);
      return p.events.map((e) => JSON.parse(e.envelope.text) as Obj);
    });
    const usage = events.filter((e) => e['type'] === 'usage');
    expect(usage.map((u) => [u['input_tokens'], u['output_tokens'], u['cache_read_tokens'], u['cache_write_tokens'], u['reasoning_tokens']])).toEqual([[286_905, 32_652, 10_505_600, 0, 10_176]]);
    expect(events.filter((e) => e['type'] === 'tool_call').map((e) => `${String(e['tool'])} ${String(e['status'])}`).sort()).toEqual(['Execute error', 'Execute ok']);
    expect(new Set(events.map((e) => e['session_id']))).toEqual(new Set(['droid_s1', 'droid_large']));
  });
});
