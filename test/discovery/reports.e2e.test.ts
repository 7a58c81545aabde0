// report discovery and the HTML report's funnel tell the truth (issue 29, item 5): one
// definition of an MCP call for report tools, report mcp and report discovery (exports__archiveRun,
// refused as not in active set, is 1 call in each); a tool never called after a search is not
// "called directly and after search"; the funnel's steps are each a subset of the step they
// name, and calls without a turn id are said to be not placed. The shipped fixtures plus a
// session without turn ids, in a real ClickHouse on both engines with the same assertions
// (test/helpers/engines.ts: embedded chdb and a ClickHouse server).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PriceTable } from '../../src/cost/prices.ts';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import { collectReportData } from '../../src/report/html.ts';
import { applyScope } from '../../src/report/scope.ts';
import { DISCOVERY_BY_MODEL_SQL, DISCOVERY_BY_TOOL_SQL, DISCOVERY_FUNNEL_SQL, MCP_REPORT_SQL, toolsReportSql } from '../../src/report/sql.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { makeTempDir } from '../helpers/db.ts';
import { forEachEngine } from '../helpers/engines.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const NO_TURNS = '0199bf24-0000-7000-8000-0000000a0a0a';

await forEachEngine('test/discovery/reports.e2e.test.ts', (engine) => {
  let sink: ClickHouseSink;
  const tmp = makeTempDir('discovery-reports');
  const dir = tmp.dir;
  beforeAll(async () => {
    sink = await engine.openSink('discovery-reports');
    // A Codex session whose calls carry no turn id (as rollouts of some builds): a search that
    // lists a tool, then a call of it.
    const call = (n: number, tool: string, input: unknown, output: string): string =>
      JSON.stringify({
        schema: 'toolcanon.event/v1', type: 'tool_call', ts: `2026-12-12T11:00:0${n}.000Z`, harness: 'codex', session_id: NO_TURNS, call_id: `call_nt_${n}`,
        model: 'gpt-5-codex', tool, input, output, status: 'ok',
      });
    const path = join(dir, 'no-turns.jsonl');
    writeFileSync(
      path,
      [
        call(1, 'search_tool_bm25', { query: 'archive' }, JSON.stringify({ tools: [{ server_name: 'exports', tool_name: 'listExports' }] })),
        call(2, 'exports__listExports', {}, '[]'),
      ].join('\n') + '\n',
    );
    await replayPaths([join(ROOT, 'fixtures'), path], sink);
  });
  afterAll(() => tmp.cleanup());

  const rows = (sql: string): Promise<Record<string, unknown>[]> => sink.queryRows<Record<string, unknown>>(sql);
  const n = (v: unknown): number => Number(v);

  describe('one definition of an MCP call', () => {
    it('gives each MCP tool the same calls in report discovery --by tool as in report tools --by tool', async () => {
      const tools = new Map((await rows(toolsReportSql('tool'))).filter((r) => r['namespace'] === 'mcp').map((r) => [r['tool_name'], n(r['calls'])]));
      const discovery = (await rows(DISCOVERY_BY_TOOL_SQL)).filter((r) => n(r['calls']) > 0);
      expect(discovery.length).toBeGreaterThan(20);
      for (const r of discovery) expect([r['tool'], n(r['calls'])]).toEqual([r['tool'], tools.get(r['tool'])]);
      expect(discovery.find((r) => r['tool'] === 'exports__archiveRun')).toMatchObject({ calls: '1', calls_refused: '1', calls_direct: '0', not_in_active_set: '1' });
      expect(tools.get('exports__archiveRun')).toBe(1);
    });

    it('counts the same MCP calls in report tools (mcp_calls), report mcp and report discovery --by model', async () => {
      const sum = (list: Record<string, unknown>[], col: string): number => list.reduce((s, r) => s + n(r[col] ?? 0), 0);
      const viaTools = sum(await rows(toolsReportSql('namespace')), 'mcp_calls');
      expect(viaTools).toBeGreaterThan(30);
      expect(sum(await rows(DISCOVERY_BY_MODEL_SQL), 'mcp_calls')).toBe(viaTools);
      expect(sum(await rows(MCP_REPORT_SQL), 'calls')).toBe(viaTools);
      expect(sum(await rows(DISCOVERY_BY_TOOL_SQL), 'calls')).toBe(viaTools);
    });
  });

  describe('the verdict per tool', () => {
    it('never says "called directly and after search" of a tool with no call after a search', async () => {
      const list = await rows(DISCOVERY_BY_TOOL_SQL);
      for (const r of list) if (r['verdict'] === 'called directly and after search') expect(n(r['calls_after_search'])).toBeGreaterThan(0);
      for (const r of list) if (r['verdict'] === 'called directly and after search') expect(n(r['calls_direct'])).toBeGreaterThan(0);
      // Listed by a search, called once, never after a search listed it.
      expect(list.find((r) => r['tool'] === 'git__git_diff_unstaged')).toMatchObject({ calls: '1', calls_after_search: '0', verdict: 'called only directly' });
      // One refused call, then one after the recovery search: every call that ran came after search.
      expect(list.find((r) => r['tool'] === 'exports__startExport')).toMatchObject({ calls: '2', calls_after_search: '1', calls_refused: '1', verdict: 'called only after search' });
    });
  });

  describe('the funnel of the HTML report', () => {
    it('has each step a subset of the step it names, and says which sessions it could not place', async () => {
      const data = await collectReportData(sink, { prices: new PriceTable() });
      const steps = data['funnel'] as { step: string; of_step: string; turns: unknown; not_placed: unknown; not_placed_harnesses: string[] }[];
      expect(steps.map((s) => s.step)).toEqual([
        'turns with a tool call', 'turns that searched', 'searching turns with an MCP call a search had listed',
        'turns with a not-in-active-set refusal', 'refusal turns that searched for the tool', 'refusal turns that recovered',
      ]);
      const by = new Map(steps.map((s) => [s.step, s]));
      for (const s of steps) {
        if (s.of_step === '') continue;
        const parent = by.get(s.of_step);
        expect(parent, s.of_step).toBeDefined();
        expect(n(s.turns)).toBeLessThanOrEqual(n(parent?.turns));
        expect(n(s.not_placed)).toBeLessThanOrEqual(n(parent?.not_placed));
      }
      expect(n(by.get('turns that searched')?.turns)).toBeGreaterThan(0);
      expect(n(by.get('searching turns with an MCP call a search had listed')?.turns)).toBeGreaterThan(0);
      // The session without turn ids is not placed, and named by its harness, in the steps it met.
      expect(by.get('turns with a tool call')).toMatchObject({ not_placed: 1, not_placed_harnesses: ['codex'] });
      expect(by.get('turns that searched')).toMatchObject({ not_placed: 1, not_placed_harnesses: ['codex'] });
      expect(by.get('searching turns with an MCP call a search had listed')).toMatchObject({ not_placed: 1, not_placed_harnesses: ['codex'] });
      expect(by.get('turns with a not-in-active-set refusal')).toMatchObject({ not_placed: 0, not_placed_harnesses: [] });
    });

    it('narrows under a scope too (the same SQL with --harness)', async () => {
      const steps = await sink.queryRows<{ step: string; of_step: string; turns: string }>(applyScope(DISCOVERY_FUNNEL_SQL, { harness: 'grok_build_concise' }));
      const turns = new Map(steps.map((s) => [s.step, Number(s.turns)]));
      for (const s of steps) if (s.of_step !== '') expect(Number(s.turns)).toBeLessThanOrEqual(turns.get(s.of_step) as number);
      expect(turns.get('turns with a not-in-active-set refusal')).toBe(2);
    });
  });

  // A refusal names a bare tool in its text ("Tool 'archiveRun' not in active set"): it is the
  // refused call's own tool (exports__archiveRun), never another server's tool of that name.
  describe('a refusal counts against the tool its call named', () => {
    it("another server's tool with the same bare name is not refused", async () => {
      const path = join(dir, 'same-name.jsonl');
      const event = (n: number, tool: string, status: string, more: Record<string, unknown>): string =>
        JSON.stringify({
          schema: 'toolcanon.event/v1', type: 'tool_call', ts: `2026-12-13T10:00:0${n}.000Z`, harness: 'grok_build', session_id: 'sess-same-name', turn_id: `t${n}`,
          call_id: `c-same-${n}`, model: 'grok-4', tool: 'use_tool', input: { tool_name: tool, tool_input: {} }, status, ...more,
        });
      writeFileSync(path, `${event(1, 'vault__sealRun', 'error', { error: "Tool 'sealRun' not in active set" })}\n${event(2, 'backup__sealRun', 'ok', { output: 'done' })}\n`);
      await replayPaths([path], sink);
      const byTool = new Map((await rows(DISCOVERY_BY_TOOL_SQL)).map((r) => [r['tool'], r]));
      expect(byTool.get('vault__sealRun')).toMatchObject({ calls: '1', calls_refused: '1', not_in_active_set: '1' });
      expect(byTool.get('backup__sealRun')).toMatchObject({ calls: '1', calls_refused: '0', not_in_active_set: '0' });
    });
  });
});
