// Claude Code's OTel log events beyond tool_result and api_request: mcp_server_connection into
// the MCP lifecycle tables, rejected tool decisions as calls, MCP tool names with and without
// tool details, compaction counted. The fixture (fixtures-otlp/claude-code-events.jsonl, three
// exports of one session) is read by the parser and imported into real embedded ClickHouse;
// every expected figure below is worked out by hand from the fixture, as the comments show.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpImporter } from '../../src/importers/otlp/index.ts';
import { claudeToolName, UNNAMED_MCP_TOOL } from '../../src/importers/otlp/parser.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURE = join(import.meta.dirname, 'fixtures-otlp', 'claude-code-events.jsonl');
const SESSION = '5e1f0c2a-7d4b-4c1e-9a3f-2b6d8e0f1a47';

type Event = Record<string, unknown> & { type: string };

describe('Claude Code OTel events: parser', () => {
  const parsed = otlpImporter.parseFile(FIXTURE, readFileSync(FIXTURE));
  const events = parsed.events.map((e) => JSON.parse(e.envelope.text) as Event);

  it('reads 14 log records: 7 connections (6 named), 1 request, 4 decisions (1 reject), 2 results, 1 compaction', () => {
    expect(parsed.recordsRead).toBe(14);
    expect(parsed.malformed).toEqual([]);
    // 6 mcp_status + 1 usage + 1 rejected call + 2 results = 10 events; 4 records counted.
    expect(events.map((e) => e.type)).toEqual(['mcp_status', 'mcp_status', 'usage', 'tool_call', 'tool_call', 'tool_call', 'mcp_status', 'mcp_status', 'mcp_status', 'mcp_status']);
    expect(parsed.skipped).toEqual({
      'log:claude_code.mcp_server_connection:no_server_name': 1,
      'log:claude_code.tool_decision:accept': 2,
      'log:claude_code.compaction': 1,
    });
  });

  it('a connection: server_name, one client per server, stdio kept, sse as http, the full error over its code', () => {
    const status = events.filter((e) => e.type === 'mcp_status');
    expect(status.map((e) => [e['server'], e['state'], e['transport'], e['client_id'], e['error'] ?? ''])).toEqual([
      ['github', 'connected', 'stdio', 'claude_code:github', ''],
      ['linear', 'failed', 'http', 'claude_code:linear', 'connect ECONNREFUSED 127.0.0.1:8931'],
      ['github', 'disconnected', 'stdio', 'claude_code:github', 'ECONNRESET'],
      ['github', 'connected', 'stdio', 'claude_code:github', ''],
      ['github', 'disconnected', 'stdio', 'claude_code:github', 'EPIPE'],
      ['github', 'connected', 'stdio', 'claude_code:github', ''],
    ]);
  });

  it('a rejected decision is an error call with the decision source, its parameters as input, no duration', () => {
    const rejected = events.find((e) => e['call_id'] === 'toolu_01FixtureReject000000001');
    expect(rejected).toMatchObject({ tool: 'Bash', status: 'error', error: 'rejected (user_reject)', model: 'claude-sonnet-5', ts: '2026-08-11T00:00:02.000Z' });
    expect(rejected?.['duration_ms']).toBeUndefined();
    expect(rejected?.['input']).toBe('{"bash_command":"rm","full_command":"rm -rf build","description":"Clean the build"}');
  });

  it('mcp_tool: qualified from tool_parameters when there, the unnamed MCP name when not', () => {
    const named = events.find((e) => e['call_id'] === 'toolu_01FixtureMcpNamed00000001');
    const hidden = events.find((e) => e['call_id'] === 'toolu_01FixtureMcpHidden0000001');
    expect(named).toMatchObject({ tool: 'mcp__github__create_issue', status: 'ok', duration_ms: 412, input: '{"title":"Flaky test","body":"see CI"}' });
    expect(hidden).toMatchObject({ tool: 'mcp__mcp_tool', status: 'error', error: 'McpError', duration_ms: 37, input: {} });
    expect(UNNAMED_MCP_TOOL).toBe('mcp__mcp_tool');
    // Other names pass as logged; parameters that name no server or tool, or are no JSON, do not qualify.
    expect(claudeToolName('Read', '{"mcp_server_name":"x","mcp_tool_name":"y"}')).toBe('Read');
    expect(claudeToolName('mcp__time__now', undefined)).toBe('mcp__time__now');
    expect(claudeToolName('mcp_tool', '{"mcp_server_name":"github"}')).toBe('mcp__mcp_tool');
    expect(claudeToolName('mcp_tool', '{"mcp_server_name":"","mcp_tool_name":"t"}')).toBe('mcp__mcp_tool');
    expect(claudeToolName('mcp_tool', 'not json')).toBe('mcp__mcp_tool');
  });

  it('a connection with a status of none of the three, or no transport, is malformed; an unknown decision is counted', () => {
    const record = (attributes: Record<string, string>) => ({
      timeUnixNano: '1786406400000000000',
      attributes: Object.entries({ 'session.id': SESSION, ...attributes }).map(([key, v]) => ({ key, value: { stringValue: v } })),
    });
    const text = JSON.stringify({
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] },
          scopeLogs: [
            {
              logRecords: [
                record({ 'event.name': 'mcp_server_connection', server_name: 'a', status: 'pending', transport_type: 'stdio' }),
                record({ 'event.name': 'mcp_server_connection', server_name: 'a', status: 'connected' }),
                record({ 'event.name': 'tool_decision', tool_name: 'Bash', tool_use_id: 'toolu_x', decision: 'ask' }),
                record({ 'event.name': 'tool_decision', tool_use_id: 'toolu_y', decision: 'reject' }),
              ],
            },
          ],
        },
      ],
    });
    const r = otlpImporter.parseFile('/tmp/x.jsonl', Buffer.from(`${text}\n`));
    expect(r.events).toEqual([]);
    expect(r.malformed?.map((m) => m.problem)).toEqual([
      'log:claude_code.mcp_server_connection:bad_status',
      'log:claude_code.mcp_server_connection:no_transport',
      'log:claude_code.tool_decision:no_tool_name',
    ]);
    expect(r.malformed?.[0]?.detail).toBe('The claude_code.mcp_server_connection log record\'s `status` is the string "pending", not "connected", "failed" or "disconnected".');
    expect(r.skipped).toEqual({ 'log:claude_code.tool_decision': 1 });
  });
});

describe('Claude Code OTel events: import into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let summary: ImportSummary;

  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('otlp-claude-events'));
    summary = await runImport(otlpImporter, [FIXTURE], sink);
  });
  afterAll(async () => {
    await cleanup?.();
  });

  it('every event is a row or a dead letter: 10 events, 6 MCP events, 3 calls, 1 usage, no dead letter', async () => {
    expect(summary.eventsEmitted).toBe(10);
    expect(summary.counts.eventsRead).toBe(10);
    expect(summary.counts.deadLetters).toBe(0);
    expect(await countOf(sink, 'SELECT count() AS n FROM mcp_events FINAL')).toBe(6);
    expect(await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(3);
    expect(await countOf(sink, "SELECT count() AS n FROM token_usage FINAL WHERE source = 'observed'")).toBe(1);
  });

  it('mcp_server_state is what the lifecycle rules give by hand', async () => {
    const rows = await sink.queryRows<Record<string, unknown>>({
      query: `SELECT server, toString(window_start) AS window, coalesced_events AS n, state, transport, client_id, toString(since) AS since,
              connected_ms, observed_ms, reconnects, stale_disconnects, restarts, error, flags
       FROM mcp_server_state FINAL WHERE session_id = {s:String} ORDER BY server, window_start`,
      query_params: { s: SESSION },
    });
    const row = (server: string, window: string, n: number, state: string, transport: string, since: string, connected: number, observed: number, reconnects: number, error: string) => ({
      server,
      window,
      n,
      state,
      transport,
      client_id: `claude_code:${server}`,
      since,
      connected_ms: connected,
      observed_ms: observed,
      reconnects,
      stale_disconnects: 0,
      restarts: 0,
      error,
      flags: [],
    });
    expect(rows.map((r) => ({ ...r, n: Number(r['n']), connected_ms: Number(r['connected_ms']), observed_ms: Number(r['observed_ms']), reconnects: Number(r['reconnects']), stale_disconnects: Number(r['stale_disconnects']), restarts: Number(r['restarts']) }))).toEqual([
      // github (stdio): connected at 0 s.
      row('github', '2026-08-11 00:00:00.000', 1, 'connected', 'stdio', '2026-08-11 00:00:00.000', 0, 0, 0, ''),
      // Disconnected at 60 s: connected 0-60 s = 60,000 ms, the error code kept.
      row('github', '2026-08-11 00:01:00.000', 1, 'disconnected', 'stdio', '2026-08-11 00:01:00.000', 60_000, 60_000, 0, 'ECONNRESET'),
      // Connected again at 61 s: a reconnect; a connection clears the error.
      row('github', '2026-08-11 00:01:01.000', 1, 'connected', 'stdio', '2026-08-11 00:01:01.000', 60_000, 61_000, 1, ''),
      // Disconnected at 120.000 s and connected at 120.020 s: one 50 ms window, two events;
      // connected 60,000 + (120,000 - 61,000) = 119,000 ms, a second reconnect.
      row('github', '2026-08-11 00:02:00.000', 2, 'connected', 'stdio', '2026-08-11 00:02:00.020', 119_000, 120_020, 2, ''),
      // linear: failed at 0.010 s, never connected. A failure names no current client (only
      // connecting / connected / restarting do), so the state has no client and no transport.
      { ...row('linear', '2026-08-11 00:00:00.000', 1, 'failed', '', '2026-08-11 00:00:00.010', 0, 0, 0, 'connect ECONNREFUSED 127.0.0.1:8931'), client_id: '' },
    ]);
  });

  it('tool_calls: the rejected Bash call, the named MCP call under its server, the hidden one as an unattributed MCP call', async () => {
    const rows = await sink.queryRows<Record<string, unknown>>('SELECT call_id, tool_name, namespace, mcp_server, mcp_tool, status, error, flags FROM tool_calls FINAL ORDER BY ts');
    expect(rows).toEqual([
      { call_id: 'toolu_01FixtureReject000000001', tool_name: 'Bash', namespace: 'claude_code', mcp_server: '', mcp_tool: '', status: 'error', error: 'rejected (user_reject)', flags: [] },
      { call_id: 'toolu_01FixtureMcpNamed00000001', tool_name: 'github__create_issue', namespace: 'mcp', mcp_server: 'github', mcp_tool: 'create_issue', status: 'ok', error: '', flags: [] },
      { call_id: 'toolu_01FixtureMcpHidden0000001', tool_name: 'mcp__mcp_tool', namespace: 'mcp', mcp_server: '', mcp_tool: '', status: 'error', error: 'McpError', flags: ['bad_mcp_name'] },
    ]);
  });
});

describe('Claude Code OTel events: secrets redacted on the new paths', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let tmp: ReturnType<typeof makeTempDir>;
  // A GitHub token shape (redact/rules.ts github_token), built so no scanner takes it for a real one.
  const token = `ghp_${'A1b2C3d4E5'.repeat(4)}`;

  beforeAll(async () => {
    tmp = makeTempDir('otlp-claude-secrets');
    ({ sink, cleanup } = await openTempSink('otlp-claude-secrets'));
    const record = (attributes: Record<string, string>) => ({
      timeUnixNano: '1786406400000000000',
      attributes: Object.entries({ 'session.id': SESSION, ...attributes }).map(([key, v]) => ({ key, value: { stringValue: v } })),
    });
    const text = JSON.stringify({
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] },
          scopeLogs: [
            {
              logRecords: [
                record({ 'event.name': 'mcp_server_connection', server_name: 'github', status: 'failed', transport_type: 'http', error: `401 for token ${token}` }),
                record({ 'event.name': 'tool_decision', tool_name: 'Bash', tool_use_id: 'toolu_s', decision: 'reject', source: 'user_reject', tool_parameters: JSON.stringify({ full_command: `GH_TOKEN=${token} gh pr list` }) }),
              ],
            },
          ],
        },
      ],
    });
    const path = join(tmp.dir, 'secrets.jsonl');
    writeFileSync(path, `${text}\n`);
    await runImport(otlpImporter, [path], sink);
  });
  afterAll(async () => {
    await cleanup?.();
    tmp?.cleanup();
  });

  it('a connection error and a rejected call\'s parameters keep no token', async () => {
    const mcp = await sink.queryRows<{ raw: string; error: string }>('SELECT raw, error FROM mcp_events FINAL');
    const calls = await sink.queryRows<{ raw_input: string; flags: string[] }>('SELECT raw_input, flags FROM tool_calls FINAL');
    expect(mcp).toHaveLength(1);
    expect(calls).toHaveLength(1);
    for (const text of [mcp[0]?.raw, mcp[0]?.error, calls[0]?.raw_input]) {
      expect(text).toContain('[REDACTED:github_token:');
      expect(text).not.toContain(token);
    }
    expect(calls[0]?.flags).toContain('redacted');
  });
});
