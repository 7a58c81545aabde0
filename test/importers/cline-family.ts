// What the Cline, Roo Code and Kilo Code importer tests share (they read one format through one
// parser): the golden events of a fixture folder, its import into a real embedded ClickHouse
// against the figures fixtures-cline-family/figures.py computed from the same files (plain json,
// no importer code), a damaged element as a dead letter, a rewritten task file re-imported, and
// the real sample, read from the research folder when it is there.
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Importer } from '../../src/importers/types.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

export interface FamilyCase {
  readonly importer: Importer;
  readonly harness: string;
  /** test/importers/fixtures-<id>/ */
  readonly fixtures: string;
  /** Per session: [usage rows, input, output, cache read, cache write], from figures.py. */
  readonly usage: Readonly<Record<string, readonly [number, number, number, number, number]>>;
  /** Per session: tool name → calls, from figures.py. */
  readonly calls: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** One task folder of the fixtures (the damaged and rewritten copies are made from it). */
  readonly task: string;
  /** The research folder of the real sample (`/work/research-33/<harness>`): read only when present. */
  readonly research: string;
}

/** Every event of the fixture folder as a JSON line, sources relative to it: the golden file's lines. */
export function goldenLines(c: FamilyCase): string[] {
  const out: string[] = [];
  for (const f of c.importer.listFiles([c.fixtures])) {
    const parsed = c.importer.parseFile(f, readFileSync(f));
    for (const e of parsed.events) out.push(JSON.stringify({ source: relative(c.fixtures, e.source), event: JSON.parse(e.envelope.text) as unknown }));
    for (const m of parsed.malformed ?? []) out.push(JSON.stringify({ source: `${relative(c.fixtures, f)}:${m.line}`, malformed: m.problem }));
  }
  return out;
}

export function describeFamily(c: FamilyCase): void {
  const golden = join(c.fixtures, 'events.golden.jsonl');

  it('gives the golden events of the fixture folder (UPDATE_GOLDEN=1 rewrites the file)', () => {
    const lines = goldenLines(c);
    if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(golden, lines.join('\n') + '\n');
    expect(lines).toEqual(readFileSync(golden, 'utf8').split('\n').filter((l) => l !== ''));
  });

  describe(`${c.importer.id} import of the fixture folder into embedded ClickHouse`, () => {
    let sink: ClickHouseSink;
    let cleanup: () => Promise<void>;
    let first: ImportSummary;
    const tmp = makeTempDir(`${c.importer.id}-import`);
    const inFixtures = `startsWith(source, '${c.fixtures}')`;

    beforeAll(async () => {
      ({ sink, cleanup } = await openTempSink(c.importer.id.replace('-', '_')));
      first = await runImport(c.importer, [c.fixtures], sink);
    });
    afterAll(async () => {
      await cleanup?.();
      tmp.cleanup();
    });

    it('stores one usage row per request with the sums figures.py computed from the same files', async () => {
      const rows = await sink.queryRows<Record<string, string>>(
        `SELECT session_id, count() AS n, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cache_read_tokens) AS cr, sum(cache_write_tokens) AS cw
         FROM token_usage FINAL WHERE source = 'observed' AND harness = '${c.harness}' AND startsWith(origin, '${c.fixtures}') GROUP BY session_id ORDER BY session_id`,
      );
      expect(Object.fromEntries(rows.map((r) => [r['session_id'], [Number(r['n']), Number(r['i']), Number(r['o']), Number(r['cr']), Number(r['cw'])]]))).toEqual(c.usage);
    });

    it('stores every tool call once, by tool as figures.py counts them (MCP calls as server__tool)', async () => {
      const rows = await sink.queryRows<Record<string, string>>(
        `SELECT session_id, if(namespace = 'mcp', concat(mcp_server, '__', mcp_tool), tool_name) AS tool, count() AS n FROM tool_calls FINAL WHERE ${inFixtures} GROUP BY session_id, tool ORDER BY session_id, tool`,
      );
      const got: Record<string, Record<string, number>> = {};
      for (const r of rows) (got[r['session_id'] ?? ''] ??= {})[r['tool'] ?? ''] = Number(r['n']);
      expect(got).toEqual(c.calls);
      expect(first.malformedRecords).toBe(0);
      expect(first.counts.deadLetters).toBe(0);
      expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE ${inFixtures} AND harness = '${c.harness}' AND namespace NOT IN ('${c.harness}', 'mcp')`)).toBe(0);
      expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE ${inFixtures} AND has(flags, 'uncatalogued')`)).toBe(0);
    });

    it('reads nothing again unchanged; a rewritten task file adds only its new request; a damaged element is one dead letter', async () => {
      const again = await runImport(c.importer, [c.fixtures], sink);
      expect(again.filesUnchanged).toBe(first.filesSeen);
      expect(again.eventsEmitted).toBe(0);
      // Another task id: its events are its own, not the fixture task's (ids hold the task id).
      const dir = join(tmp.dir, 'tasks', `copy-${c.task}`);
      cpSync(join(c.fixtures, ...taskPath(c)), dir, { recursive: true });
      const ui = join(dir, 'ui_messages.json');
      await runImport(c.importer, [join(tmp.dir, 'tasks')], sink);
      const usageOf = (): Promise<number> => countOf(sink, `SELECT count() AS n FROM token_usage FINAL WHERE source = 'observed' AND startsWith(origin, '${tmp.dir}')`);
      const before = await usageOf();
      expect(before).toBeGreaterThan(0);
      const messages = JSON.parse(readFileSync(ui, 'utf8')) as unknown[];
      const added = { ts: 1790000000000, type: 'say', say: 'api_req_started', text: JSON.stringify({ request: 'later', tokensIn: 5, tokensOut: 7, cacheWrites: 0, cacheReads: 0 }) };
      const bad = { ts: 1790000000500, type: 'say', say: 'api_req_started', text: JSON.stringify({ request: 'later', tokensIn: '12', tokensOut: 7 }) };
      writeFileSync(ui, JSON.stringify([...messages, added, bad]));
      const grown = await runImport(c.importer, [join(tmp.dir, 'tasks')], sink);
      expect(grown.filesRead).toBe(1);
      expect(grown.malformedRecords).toBe(1);
      expect(await usageOf()).toBe(before + 1);
      const dead = await sink.queryRows<{ raw: string; detail: string }>({ query: 'SELECT raw, detail FROM dead_letters FINAL WHERE source = {s:String}', query_params: { s: `${ui}:1` } });
      expect(dead).toEqual([{ raw: JSON.stringify(bad), detail: 'malformed:usage: `text.tokensIn` is the string "12", not a non-negative integer.' }]);
    });
  });

  const samples = join(c.research, 'samples');
  const real = existsSync(samples) ? c.importer.listFiles([samples]) : [];
  if (real.length === 0) {
    console.warn(`\n!! SKIPPING the ${c.importer.id} real-sample test: no real ${c.importer.id} task file in ${samples} (the research folder is not in CI; the README of fixtures-${c.importer.id} says which sample is real).\n`);
  }
  it.skipIf(real.length === 0)('reads the real sample of the research folder without a dead letter or an event the pipeline refuses', () => {
    for (const f of real) {
      const parsed = c.importer.parseFile(f, readFileSync(f));
      expect(parsed.malformed ?? [], f).toEqual([]);
      expect(parsed.events.length + Object.values(parsed.skipped).reduce((a, n) => a + n, 0), f).toBeGreaterThan(0);
    }
  });
}

/** The fixture task folder's path below the fixture root. */
function taskPath(c: FamilyCase): string[] {
  const walk = (dir: string, path: string[]): string[] | undefined => {
    for (const name of readdirSync(dir, { withFileTypes: true })) {
      if (!name.isDirectory()) continue;
      if (name.name === c.task) return [...path, name.name];
      const found = walk(join(dir, name.name), [...path, name.name]);
      if (found) return found;
    }
    return undefined;
  };
  const found = walk(c.fixtures, []);
  if (!found) throw new Error(`no task folder ${c.task} under ${c.fixtures}`);
  return found;
}
