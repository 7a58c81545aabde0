// --since / --until / --harness applied to the CLI's own report SQL, run in a real ClickHouse on
// both engines with the same assertions (test/helpers/engines.ts: embedded chdb and a server).
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BREACHES_REPORT_SQL,
  DISCOVERY_BY_MODEL_SQL,
  DISCOVERY_BY_TOOL_SQL,
  DRIFT_REPORT_SQL,
  MCP_REPORT_SQL,
  toolsReportSql,
  USAGE_REPORT_SQL,
} from '../../src/report/sql.ts';
import { PriceTable } from '../../src/cost/prices.ts';
import { collectReportData } from '../../src/report/html.ts';
import { applyScope, parseDay } from '../../src/report/scope.ts';
import { usageReportRows } from '../../src/report/usage.ts';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { forEachEngine } from '../helpers/engines.ts';

const FIXTURES = new URL('../../fixtures/', import.meta.url).pathname;

await forEachEngine('test/report/scope.test.ts', (engine) => describe('report scope', () => {
  let sink: ClickHouseSink;
  beforeAll(async () => {
    sink = await engine.openSink('scope');
    await replayPaths([FIXTURES], sink);
  });

  it('rewrites each read of an analytics table, keeping FINAL and aliases; dead letters stay whole', () => {
    const scoped = applyScope('SELECT 1 FROM tool_calls FINAL AS t JOIN token_usage ON 1 FROM dead_letters FINAL', { harness: 'codex' });
    expect(scoped).toBe("SELECT 1 FROM (SELECT * FROM tool_calls FINAL WHERE harness = 'codex') AS t JOIN (SELECT * FROM token_usage WHERE harness = 'codex') AS token_usage ON 1 FROM dead_letters FINAL");
    expect(applyScope(USAGE_REPORT_SQL, {})).toBe(USAGE_REPORT_SQL);
    expect(() => parseDay('2026-02-30', '--since')).toThrow('--since must be a day as YYYY-MM-DD, got "2026-02-30"');
  });

  it('every report SQL runs scoped and returns only what is in scope', async () => {
    const harness = { harness: 'grok_build' } as const;
    for (const sql of [toolsReportSql('tool'), USAGE_REPORT_SQL, BREACHES_REPORT_SQL, DRIFT_REPORT_SQL, MCP_REPORT_SQL, DISCOVERY_BY_MODEL_SQL, DISCOVERY_BY_TOOL_SQL]) {
      const rows = await sink.queryDisplayRows(applyScope(sql, harness));
      for (const r of rows) if ('harness' in r) expect(r['harness']).toBe('grok_build');
    }
    const all = await sink.queryDisplayRows(toolsReportSql('namespace'));
    const grok = await sink.queryDisplayRows(applyScope(toolsReportSql('namespace'), harness));
    // A grok_build call of an MCP tool (use_tool) counts in namespace mcp.
    for (const r of grok) expect(['grok_build', 'mcp']).toContain(r['namespace']);
    expect(grok.length).toBeLessThan(all.length);
    const days = await usageReportRows(sink, 'day', new PriceTable(), { since: '2026-12-01', until: '2026-12-03' });
    expect(days.map((r) => r['day'])).toEqual(['2026-12-01', '2026-12-02', '2026-12-03']);
  });

  it('the page data of a scope: one harness, its sessions, the breaches of its compaction session', async () => {
    const data = (await collectReportData(sink, { prices: new PriceTable(), scope: { harness: 'grok_build', since: '2026-12-01', until: '2026-12-01' } })) as {
      headline: Record<string, unknown>; sessions: Record<string, unknown>[]; context: { session_id: string; breach_points: unknown[] }[];
    };
    // fixtures/bad has grok_build calls of that day too (session bad-1).
    expect(data.sessions.map((s) => s['session_id'])).toEqual(['bad-1', 'sess-compaction']);
    expect(data.headline['tool_calls']).toBe(data.sessions.reduce((n, s) => n + Number(s['calls']), 0));
    expect(data.headline).toMatchObject({ sessions: 2, requests: 5, input_tokens: 314000, output_tokens: 4499, breaches: 2, cost_usd: null, cost_flags: 'unknown_price:grok-4=5' });
    expect(data.context[0]).toMatchObject({ session_id: 'sess-compaction' });
    expect(data.context[0]?.breach_points).toHaveLength(2);
  });
}));
