// The MCP lifecycle and discovery tables in a real ClickHouse, on both engines with the same
// assertions (test/helpers/engines.ts: embedded chdb and a ClickHouse server): every path and every
// batching of the same events gives the same rows (event time, not arrival time), equal to the
// pure derivation over the fixtures; a replayed input adds nothing; the reports answer the
// questions of the issue on the shipped fixtures.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEvent } from '../../src/decode/event.ts';
import { deriveDiscoveryPerContext } from '../../src/discovery/discovery.ts';
import { loadImporter } from '../../src/importers/registry.ts';
import { runImport } from '../../src/pipeline/import.ts';
import { deriveServerStatesPerServer } from '../../src/mcp/lifecycle.ts';
import { replayPaths, type PipelineCounts } from '../../src/pipeline/batch-writer.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { DISCOVERY_BY_MODEL_SQL, DISCOVERY_BY_TOOL_SQL, MCP_REPORT_SQL } from '../../src/report/sql.ts';
import { countOf, makeTempDir } from '../helpers/db.ts';
import { forEachEngine } from '../helpers/engines.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const LIFECYCLE = join(ROOT, 'fixtures/mcp/lifecycle.jsonl');
const DISCOVERY = join(ROOT, 'fixtures/discovery/calls.jsonl');
const TRANSCRIPT = join(ROOT, 'test/importers/fixtures-claude-code/tool-search.jsonl');
const TABLES = ['mcp_events', 'mcp_server_state', 'mcp_tool_registrations', 'discovery_events', 'tool_calls', 'dead_letters'] as const;

/** What each table holds, without where and when a row was read or computed. */
const DUMP: Record<(typeof TABLES)[number], string> = {
  mcp_events: 'SELECT * EXCEPT (source, ingested_at) FROM mcp_events FINAL ORDER BY event_id',
  mcp_server_state: 'SELECT * EXCEPT (computed_at) FROM mcp_server_state FINAL ORDER BY state_id',
  mcp_tool_registrations: 'SELECT * EXCEPT (source, ingested_at) FROM mcp_tool_registrations FINAL ORDER BY registration_id',
  discovery_events: 'SELECT * EXCEPT (source, ingested_at, computed_at) FROM discovery_events FINAL ORDER BY event_id',
  tool_calls: 'SELECT * EXCEPT (source, ingested_at) FROM tool_calls FINAL ORDER BY event_id',
  dead_letters: 'SELECT reason, detail, hex(raw) FROM dead_letters FINAL ORDER BY dead_letter_id',
};

type Dump = Record<string, unknown[]>;

async function dump(sink: ClickHouseSink): Promise<Dump> {
  const out: Dump = {};
  for (const t of TABLES) out[t] = await sink.queryRows(DUMP[t]);
  return out;
}

async function truncateAll(sink: ClickHouseSink): Promise<void> {
  for (const t of [...TABLES, 'token_usage', 'threshold_breaches', 'import_files']) await sink.client.command({ query: `TRUNCATE TABLE ${t}` });
}

/** The lines of a file, decoded in-process. */
function decodeFile(path: string) {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').map((l, i) => decodeEvent(Buffer.from(l), `${path}:${i + 1}`, '2026-12-03 00:00:00.000'));
}

/** The derived rows the pure functions give for the fixtures, in the dump's shape. */
function pureDerivation(): { states: unknown[]; discovery: unknown[] } {
  const decoded = [...decodeFile(LIFECYCLE), ...decodeFile(DISCOVERY)];
  const events = decoded.flatMap((o) => (o.kind === 'mcp' ? [o.event] : []));
  const observations = decoded.flatMap((o) => (o.kind === 'row' && o.discovery ? [o.discovery] : []));
  // UInt64 columns come back as decimal text (exact beyond 2^53).
  const u64 = (v: number | null): string | null => (v === null ? null : String(v));
  const states = [...deriveServerStatesPerServer(events, 'x').values()]
    .flat()
    .map(({ computed_at: _c, ...r }) => ({ ...r, connected_ms: u64(r.connected_ms), observed_ms: u64(r.observed_ms), tools_changed_events: u64(r.tools_changed_events), backoff_ms: u64(r.backoff_ms) }));
  const discovery = deriveDiscoveryPerContext(observations, 'x').map(({ computed_at: _c, source: _s, ingested_at: _i, ...r }) => r);
  return { states: states.sort((a, b) => (a.state_id < b.state_id ? -1 : 1)), discovery: discovery.sort((a, b) => (a.event_id < b.event_id ? -1 : 1)) };
}

await forEachEngine('test/mcp/mcp.e2e.test.ts', (engine) => describe('MCP lifecycle and discovery in ClickHouse', () => {
  let sink: ClickHouseSink;
  const tmp = makeTempDir('mcp');
  const dir = tmp.dir;
  let oneBatch: Dump;
  let counts: PipelineCounts;
  /** The tables' counts right after the first replay (later tests truncate and replay again). */
  let stored: Record<'mcpEvents' | 'serverStates' | 'registrations' | 'discovery', number>;
  /** The github server's state after the first replay (read before any test truncates the tables). */
  let github: { state: string; client_id: string; stale_disconnects: number; reconnects: number } | undefined;

  beforeAll(async () => {
    sink = await engine.openSink('mcp');
    counts = await replayPaths([LIFECYCLE, DISCOVERY], sink);
    oneBatch = await dump(sink);
    stored = {
      mcpEvents: await countOf(sink, 'SELECT count() AS n FROM mcp_events FINAL'),
      serverStates: await countOf(sink, 'SELECT count() AS n FROM mcp_server_state FINAL'),
      registrations: await countOf(sink, 'SELECT count() AS n FROM mcp_tool_registrations FINAL'),
      discovery: await countOf(sink, 'SELECT count() AS n FROM discovery_events FINAL'),
    };
    [github] = await sink.queryRows<{ state: string; client_id: string; stale_disconnects: number; reconnects: number }>(
      "SELECT argMax(state, (ts, last_event_id)) AS state, argMax(client_id, (ts, last_event_id)) AS client_id, max(stale_disconnects) AS stale_disconnects, max(reconnects) AS reconnects FROM mcp_server_state FINAL WHERE server = 'github' AND event_kind = 'status'",
    );
  }, 120_000);
  afterAll(() => tmp.cleanup());

  it('stores every lifecycle event: events in = tool_calls + mcp_events rows, nothing dead-lettered', async () => {
    const lines = decodeFile(LIFECYCLE).length + decodeFile(DISCOVERY).length;
    expect(counts.eventsRead).toBe(lines);
    expect(counts.deadLetters).toBe(0);
    expect(counts.toolCallRows + counts.mcpEventRows).toBe(lines);
    expect(stored.mcpEvents).toBe(counts.mcpEventRows);
    expect(stored.serverStates).toBe(counts.mcpServerStateRows);
    expect(stored.registrations).toBe(counts.mcpToolRegistrations);
    expect(stored.discovery).toBe(counts.discoveryEvents);
  });

  it('holds exactly the rows the pure derivation gives (the golden files\' source)', () => {
    const pure = pureDerivation();
    expect(oneBatch['mcp_server_state']).toEqual(pure.states);
    expect(oneBatch['discovery_events']).toEqual(pure.discovery);
    expect(pure.states.length).toBeGreaterThan(40);
  });

  it('gives the same rows when every event is its own batch (the late stale disconnect arrives in a later batch)', async () => {
    await truncateAll(sink);
    await replayPaths([LIFECYCLE, DISCOVERY], sink, { batch: { batchMaxRows: 1, batchMaxBytes: 1 << 30 } });
    expect(await dump(sink)).toEqual(oneBatch);
  }, 120_000);

  it('gives the same rows from two runs in the other order, in batches of 7, and adds nothing when replayed again', async () => {
    await truncateAll(sink);
    const batch = { batchMaxRows: 7, batchMaxBytes: 1 << 30 };
    await replayPaths([DISCOVERY], sink, { batch });
    await replayPaths([LIFECYCLE], sink, { batch });
    expect(await dump(sink)).toEqual(oneBatch);
    await replayPaths([LIFECYCLE, DISCOVERY], sink);
    expect(await dump(sink)).toEqual(oneBatch);
  }, 120_000);

  it('keeps the new github client connected: the replaced client\'s late disconnect is counted as stale', () => {
    const restarted = (oneBatch['mcp_events'] as { server: string; state: string; client_id: string }[]).find((e) => e.server === 'github' && e.state === 'restarting');
    expect(github).toEqual({ state: 'connected', client_id: restarted?.client_id, stale_disconnects: 2, reconnects: 1 });
  });

  it('coalesces 100 list_changed of one window into one row across batches; a burst over a boundary into two', async () => {
    const lines = (times: number[]) => times.map((ms, i) => JSON.stringify({ schema: 'toolcanon.event/v1', type: 'mcp_tools_changed', ts: new Date(Date.parse('2026-12-20T08:00:00.000Z') + ms).toISOString(), harness: 'grok_build', session_id: 'burst', server: `s${times.length}`, client_id: 'c', event_id: `burst-${times.length}-${i}` })).join('\n');
    const file = join(dir, 'burst.jsonl');
    writeFileSync(file, `${lines(Array.from({ length: 100 }, (_, i) => Math.floor(i / 2)))}\n${lines([30, 40, 49, 50, 60])}\n`);
    await replayPaths([file], sink, { batch: { batchMaxRows: 9, batchMaxBytes: 1 << 30 } });
    const rows = await sink.queryRows<{ server: string; coalesced_events: number; window_start: string }>(
      "SELECT server, coalesced_events, window_start FROM mcp_server_state FINAL WHERE session_id = 'burst' ORDER BY server, window_start",
    );
    expect(rows).toEqual([
      { server: 's100', coalesced_events: 100, window_start: '2026-12-20 08:00:00.000' },
      { server: 's5', coalesced_events: 3, window_start: '2026-12-20 08:00:00.000' },
      { server: 's5', coalesced_events: 2, window_start: '2026-12-20 08:00:00.050' },
    ]);
  });

  it('gives the same discovery rows from `import claude-code` as from replaying the events the importer emits', async () => {
    await truncateAll(sink);
    const importer = await loadImporter('claude-code');
    const summary = await runImport(importer, [TRANSCRIPT], sink);
    expect(summary.counts.discoveryEvents).toBe(5);
    const imported = await dump(sink);
    const found = imported['discovery_events'] as { discovery_kind: string; result_tools: string[]; after_search: boolean; called_tool: string }[];
    expect(found.filter((r) => r.discovery_kind === 'search').flatMap((r) => r.result_tools).sort()).toEqual(['linear__create_comment', 'notion__create_page', 'notion__search']);
    expect(found.filter((r) => r.discovery_kind === 'call').map((r) => [r.called_tool, r.after_search]).sort()).toEqual([
      ['linear__create_comment', true], ['linear__get_issue', false], ['notion__create_page', true],
    ]);

    await truncateAll(sink);
    const lines = importer.parseFile(TRANSCRIPT, readFileSync(TRANSCRIPT)).events.map((e) => e.envelope.text);
    const envelope = join(dir, 'imported-envelope.jsonl');
    writeFileSync(envelope, `${lines.join('\n')}\n`);
    await replayPaths([envelope], sink);
    expect(await dump(sink)).toEqual(imported);
  }, 120_000);

  describe('the reports answer the three questions on the shipped fixtures', () => {
    beforeAll(async () => {
      await truncateAll(sink);
      await replayPaths([join(ROOT, 'fixtures')], sink);
    }, 120_000);

    it('which MCP servers are flapping, and since when: report mcp', async () => {
      const rows = await sink.queryRows<Record<string, unknown>>(MCP_REPORT_SQL);
      const by = new Map(rows.map((r) => [r['server'], r]));
      expect(by.get('postgres')).toMatchObject({ state: 'connected', restarts: '5', reconnects: '1', flapping_since: '2026-12-10 14:02:37.900', restart_flags: 'after_disabled=1 attempts_exceeded=1 too_fast=2' });
      expect(by.get('github')).toMatchObject({ stale_disconnects: '2', model_visible: '2', app_only: '1', search_only: '4', disabled: '1', calls: '5' }); // 3 in fixtures/mcp and fixtures/discovery, 1 in fixtures/gemini_cli, 1 in fixtures/qwen_code (Copilot's is of server github-mcp-server)
      expect(by.get('linear')).toMatchObject({ transport: 'http', restarts: '1', restart_flags: null, bad_names: '1' });
      expect(by.get('figma')).toMatchObject({ state: 'restarting', restart_flags: 'after_removed=1' });
      expect(Number(by.get('time')?.['connected_share'])).toBeGreaterThan(0.99);
      // The servers that flap come first.
      expect(rows[0]?.['server']).toBe('postgres');
    });

    it('which tools could the model even see: visibility per registered tool, distinct per server', async () => {
      const rows = await sink.queryRows<{ qualified_name: string; visibility: string }>(
        "SELECT DISTINCT qualified_name, visibility FROM mcp_tool_registrations FINAL WHERE mcp_tool = 'get_current_time' ORDER BY qualified_name",
      );
      expect(rows).toEqual([{ qualified_name: 'clock__get_current_time', visibility: 'model_visible' }, { qualified_name: 'time__get_current_time', visibility: 'model_visible' }]);
    });

    it('do cheap models ever search, and what happens on an undiscovered tool: report discovery', async () => {
      const models = new Map((await sink.queryRows<Record<string, unknown>>(DISCOVERY_BY_MODEL_SQL)).map((r) => [r['model'], r]));
      expect(models.get('grok-4')).toMatchObject({ budget_refusals: '2', budget_exceeded: '1', not_in_active_set: '2', recovered: '1', recovery_rate: 0.5 });
      expect(models.get('claude-sonnet-4-5')).toMatchObject({ searches: '0', searches_per_turn: 0 });
      const tools = new Map((await sink.queryRows<Record<string, unknown>>(DISCOVERY_BY_TOOL_SQL)).map((r) => [r['tool'], r]));
      expect(tools.get('exports__startExport')).toMatchObject({ verdict: 'called only after search', not_in_active_set: '1', recovered: '1' });
      expect(tools.get('time__get_current_time')).toMatchObject({ verdict: 'never searched for', calls_direct: '2' });
      expect(tools.get('k8s__deploy_service')).toMatchObject({ verdict: 'searched and not found', looked_for: '1' });
      expect(tools.get('github__search_issues')).toMatchObject({ verdict: 'found, never called', listed_by_search: '1' });
    });
  });
}));
