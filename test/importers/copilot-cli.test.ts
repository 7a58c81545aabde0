// The GitHub Copilot CLI importer: parser units on inline events, then the fixture folder (a real
// ~/.copilot/session-state layout) imported into a real embedded ClickHouse and checked against
// figures computed here from the same files by a small reference reader, and by hand.
import { appendFileSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copilotCliImporter } from '../../src/importers/copilot-cli/index.ts';
import { callOutcome, eventToolName, parseCopilotFile, SESSION_TOTALS_AGENT } from '../../src/importers/copilot-cli/parser.ts';
import { defaultCopilotPaths, isSessionLog, listCopilotFiles, sessionOfPath } from '../../src/importers/copilot-cli/paths.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURES = new URL('./fixtures-copilot-cli/', import.meta.url).pathname;
// Rows of the fixture folder's import: the tests that import files of their own (redaction, a
// damaged line) add rows beside them, and the tests pass in any order.
const OF_FIXTURES = `startsWith(source, '${FIXTURES}')`;
const USAGE_OF_FIXTURES = `startsWith(origin, '${FIXTURES}')`;
const A = '3f6b2c1d-8e4a-4b7f-9c2d-1a0e5f6b7c8d';
const B = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const FILE_A = join(FIXTURES, 'session-state', A, 'events.jsonl');
const FILE_B = join(FIXTURES, 'session-state', B, 'events.jsonl');

type Obj = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Inline events, shaped like Copilot CLI 1.0 lines ({type, data, id, timestamp, parentId}).

let seq = 0;
function ev(type: string, data: Obj, extra: Obj = {}): Obj {
  seq++;
  return { type, data, id: `e-${seq}`, timestamp: `2026-05-01T10:00:${String(seq % 60).padStart(2, '0')}.000Z`, parentId: null, ...extra };
}

function start(id: string, toolName: string, args: unknown = { command: 'ls' }, extra: Obj = {}): Obj {
  return ev('tool.execution_start', { toolCallId: id, toolName, arguments: args, turnId: '0', ...extra });
}

function complete(id: string, success: boolean, extra: Obj = {}): Obj {
  return ev('tool.execution_complete', { toolCallId: id, success, ...(success ? { result: { content: `out of ${id}` } } : { error: { message: `failed ${id}\nmore`, code: 'failure' } }), ...extra });
}

function metrics(m: Record<string, [number, number, number, number, number]>): Obj {
  return Object.fromEntries(Object.entries(m).map(([model, [i, o, r, w, re]]) => [model, { requests: { count: 1, cost: 1 }, usage: { inputTokens: i, outputTokens: o, cacheReadTokens: r, cacheWriteTokens: w, reasoningTokens: re } }]));
}

function parse(records: readonly (Obj | string)[], path = '/home/u/.copilot/session-state/sess-1/events.jsonl') {
  const text = records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
  const parsed = parseCopilotFile(path, Buffer.from(text, 'utf8'));
  return { ...parsed, malformed: parsed.malformed ?? [], text, parsedEvents: parsed.events.map((e) => JSON.parse(e.envelope.text) as Obj) };
}

describe('copilot-cli paths', () => {
  it('defaults to ~/.copilot/session-state, or $COPILOT_CONFIG_DIR/session-state', () => {
    expect(defaultCopilotPaths({}, '/home/u')).toEqual(['/home/u/.copilot/session-state']);
    expect(defaultCopilotPaths({ COPILOT_CONFIG_DIR: '/data/copilot' }, '/home/u')).toEqual(['/data/copilot/session-state']);
  });
  it('reads <id>/events.jsonl and flat <id>.jsonl logs; the session is the folder (or the stem)', () => {
    expect(isSessionLog('/h/.copilot/session-state/abc/events.jsonl')).toBe(true);
    expect(isSessionLog('/h/.copilot/session-state/abc.jsonl')).toBe(true);
    expect(isSessionLog('/h/.copilot/session-state/abc/workspace.yaml')).toBe(false);
    expect(isSessionLog('/h/.copilot/logs/x.jsonl')).toBe(false);
    expect(sessionOfPath('/h/.copilot/session-state/abc/events.jsonl')).toBe('abc');
    expect(sessionOfPath('/h/.copilot/session-state/def.jsonl')).toBe('def');
    expect(listCopilotFiles([FIXTURES])).toEqual([FILE_A, FILE_B].sort());
  });
});

describe('copilot-cli parser', () => {
  it('joins tool.execution_start to tool.execution_complete: status, output, error, duration, model, turn', () => {
    const p = parse([
      ev('session.start', { sessionId: 'sess-1', selectedModel: 'claude-sonnet-4.5' }),
      ev('user.message', { content: 'go' }, { id: 'u-1' }),
      start('c1', 'bash', { command: 'npm test', description: 'Run tests' }),
      start('c2', 'view', { path: '/w/a.ts' }, { model: 'gpt-5.4' }),
      complete('c1', false),
      complete('c2', true, { model: 'gpt-5.4-mini' }),
    ]);
    expect(p.malformed).toEqual([]);
    expect(p.parsedEvents.map((e) => [e['call_id'], e['tool'], e['status'], e['error'], e['output'], e['model'], e['turn_id'], e['duration_ms']])).toEqual([
      ['c1', 'bash', 'error', 'failed c1', 'failed c1\nmore', 'claude-sonnet-4.5', 'u-1', 2000],
      ['c2', 'view', 'ok', undefined, 'out of c2', 'gpt-5.4-mini', 'u-1', 2000],
    ]);
    expect(p.parsedEvents[0]?.['session_id']).toBe('sess-1');
  });

  it('keeps object arguments byte for byte and freeform arguments as a string', () => {
    const raw = '{"type":"tool.execution_start","data":{"toolCallId":"c1","toolName":"view","arguments":{"view_range":[1,18446744073709551617],"path":"caf\\u00e9.ts"}},"id":"e1","timestamp":"2026-05-01T10:00:00.000Z"}';
    const p = parse([raw, start('c2', 'apply_patch', '*** Begin Patch\n*** End Patch')]);
    expect(p.events[0]?.envelope.text.endsWith(',"input":{"view_range":[1,18446744073709551617],"path":"caf\\u00e9.ts"}}')).toBe(true);
    expect(p.parsedEvents[1]).toMatchObject({ status: 'pending', input: '*** Begin Patch\n*** End Patch' });
  });

  it('names an MCP tool mcp__<server>__<tool>, with its original name on the server', () => {
    expect(eventToolName({ toolName: 'github-mcp-server-get_issue', mcpServerName: 'github-mcp-server', mcpToolName: 'get_issue' })).toBe('mcp__github-mcp-server__get_issue');
    expect(eventToolName({ toolName: 'search', mcpServerName: 'docs', mcpToolName: undefined })).toBe('mcp__docs__search');
    expect(eventToolName({ toolName: 'view', mcpServerName: undefined, mcpToolName: undefined })).toBe('view');
    expect(callOutcome({ success: false, errorMessage: undefined, errorCode: 'rejected' })).toEqual({ status: 'error', error: 'rejected' });
  });

  it('writes each shutdown as per-model totals of its segment, apart from the main agent; per-request usage wins when the log has it', () => {
    const p = parse([
      ev('session.start', { sessionId: 'sess-1' }),
      ev('session.shutdown', { shutdownType: 'routine', modelMetrics: metrics({ 'claude-sonnet-4.5': [71282, 1204, 35495, 35783, 0], 'gpt-5.4': [100, 20, 50, 0, 5] }) }, { id: 'sd-1' }),
      ev('session.resume', { eventCount: 2 }),
      ev('assistant.usage', { model: 'gpt-5.4', inputTokens: 300, outputTokens: 40, cacheReadTokens: 256, reasoningTokens: 8, apiCallId: 'chatcmpl-1' }, { ephemeral: true }),
      ev('session.shutdown', { shutdownType: 'routine', modelMetrics: metrics({ 'gpt-5.4': [300, 40, 256, 0, 8] }) }),
    ]);
    expect(p.malformed).toEqual([]);
    expect(p.parsedEvents.map((e) => [e['agent_id'], e['model'], e['request_id'], e['input_tokens'], e['output_tokens'], e['cache_read_tokens'], e['cache_write_tokens'], e['reasoning_tokens']])).toEqual([
      [SESSION_TOTALS_AGENT, 'claude-sonnet-4.5', 'sd-1:claude-sonnet-4.5', 71282, 1204, 35495, 35783, 0],
      [SESSION_TOTALS_AGENT, 'gpt-5.4', 'sd-1:gpt-5.4', 100, 20, 50, 0, 5],
      [undefined, 'gpt-5.4', 'chatcmpl-1', 300, 40, 256, 0, 8],
    ]);
    expect(p.skipped).toEqual({ 'session.shutdown:covered_by_requests': 1 });
  });

  it('dead-letters figures that contradict the format, and counts a shutdown without metrics', () => {
    const p = parse([
      ev('session.shutdown', { modelMetrics: metrics({ m: [10, 1, 8, 5, 0] }) }),
      ev('session.shutdown', { modelMetrics: { m: { usage: { inputTokens: -1 } } } }),
      ev('session.shutdown', { modelMetrics: 'lots' }),
      ev('session.shutdown', { shutdownType: 'error', errorReason: 'crash' }),
      ev('assistant.usage', { inputTokens: 1, outputTokens: 1 }),
      ev('assistant.usage', { model: 'm', inputTokens: 1, outputTokens: 1, reasoningTokens: 2 }),
    ]);
    expect(p.events).toEqual([]);
    expect(p.malformed.map((m) => [m.line, m.problem])).toEqual([
      [1, 'malformed:shutdown'],
      [2, 'malformed:shutdown'],
      [3, 'malformed:shutdown'],
      [5, 'malformed:usage'],
      [6, 'malformed:usage'],
    ]);
    expect(p.malformed[0]?.detail).toContain('exceed');
    expect(p.skipped).toEqual({ 'session.shutdown:no_metrics': 1 });
  });

  it('counts completes without a start and repeats, hands out unfinished calls as pending, gives sub-agent calls their agent id', () => {
    const p = parse([
      complete('ghost', true),
      start('c1', 'glob', { pattern: '*.ts' }, {}),
      start('c1', 'glob', { pattern: '*.ts' }),
      complete('c1', true),
      complete('c1', true),
      ev('tool.execution_start', { toolCallId: 'c2', toolName: 'grep', arguments: { pattern: 'x' } }, { agentId: 'explore-1' }),
      ev('subagent.started', { toolCallId: 't1', agentName: 'explore' }),
    ]);
    expect(p.skipped).toEqual({ tool_complete_without_start: 1, repeated_tool_start: 1, repeated_tool_complete: 1, 'subagent.started': 1 });
    expect(p.parsedEvents.map((e) => [e['call_id'], e['status'], e['agent_id']])).toEqual([
      ['c1', 'ok', undefined],
      ['c2', 'pending', 'explore-1'],
    ]);
    expect(p.events[1]?.source.endsWith(':6')).toBe(true);
  });

  it('makes each unreadable event a malformed record with its line and bytes', () => {
    const deep = '['.repeat(200) + ']'.repeat(200);
    const p = parse([
      '{"type":"tool.execution_start",',
      '"a string"',
      { id: 'x', data: {} },
      { type: 'user.message', data: 'hi', id: 'y' },
      start('c1', 'bash', 42),
      start('', 'bash'),
      { ...start('c2', 'bash'), timestamp: 'later' },
      ev('tool.execution_complete', { toolCallId: 'c1', success: 'yes' }),
      `{"type":"tool.execution_start","data":{"toolCallId":"c3","toolName":"glob","arguments":{"pattern":${deep}}},"id":"e9","timestamp":"2026-05-01T10:00:00.000Z"}`,
    ]);
    expect(p.malformed.map((m) => [m.line, m.problem])).toEqual([
      [1, 'invalid_json'],
      [2, 'not_an_object'],
      [3, 'malformed:event'],
      [4, 'malformed:event'],
      [5, 'malformed:tool_start'],
      [6, 'malformed:tool_start'],
      [7, 'bad_timestamp'],
      [8, 'malformed:tool_complete'],
      [9, 'too_deep'],
    ]);
    const lines = p.text.split('\n');
    for (const m of p.malformed) expect(m.raw).toBe(lines[m.line - 1]);
    expect(p.events).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// The fixture folder, read by a reference that follows the README's rules with JSON.parse.

interface Expected {
  totals: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
  calls: Map<string, { tool: string; status: string; session: string; args: unknown }>;
}

function expectedFigures(files: readonly string[]): Expected {
  const e: Expected = { totals: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, calls: new Map() };
  for (const file of files) {
    const session = file.split('/').at(-2) ?? '';
    const events = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Obj);
    const done = new Map<string, boolean>();
    for (const x of events) if (x['type'] === 'tool.execution_complete') done.set(String((x['data'] as Obj)['toolCallId']), (x['data'] as Obj)['success'] === true);
    for (const x of events) {
      const d = x['data'] as Obj;
      if (x['type'] === 'tool.execution_start') {
        const id = String(d['toolCallId']);
        const tool = d['mcpServerName'] ? `mcp__${String(d['mcpServerName'])}__${String(d['mcpToolName'] ?? d['toolName'])}` : String(d['toolName']);
        const ok = done.get(id);
        e.calls.set(id, { tool, status: ok === undefined ? 'pending' : ok ? 'ok' : 'error', session, args: d['arguments'] });
      }
      if (x['type'] === 'session.shutdown') {
        for (const m of Object.values(d['modelMetrics'] as Record<string, { usage: Record<string, number> }>)) {
          e.totals++;
          e.input += m.usage['inputTokens'] ?? 0;
          e.output += m.usage['outputTokens'] ?? 0;
          e.cacheRead += m.usage['cacheReadTokens'] ?? 0;
          e.cacheWrite += m.usage['cacheWriteTokens'] ?? 0;
          e.reasoning += m.usage['reasoningTokens'] ?? 0;
        }
      }
    }
  }
  return e;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

describe('copilot-cli import of the fixture folder into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let first: ImportSummary;
  const files = walk(FIXTURES).filter((p) => p.endsWith('events.jsonl'));
  const expected = expectedFigures(files);
  const tmp = makeTempDir('copilot-import');

  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('copilot-cli'));
    first = await runImport(copilotCliImporter, [FIXTURES], sink);
  });
  afterAll(async () => {
    await cleanup?.();
    tmp.cleanup();
  });

  async function usageTotals(): Promise<Record<string, number>> {
    const [row] = await sink.queryRows<Record<string, string>>(
      `SELECT count() AS totals, sum(input_tokens) AS input, sum(output_tokens) AS output, sum(cache_read_tokens) AS cacheRead, sum(cache_write_tokens) AS cacheWrite, sum(reasoning_tokens) AS reasoning
       FROM token_usage FINAL WHERE source = 'observed' AND harness = 'copilot_cli' AND ${USAGE_OF_FIXTURES}`,
    );
    return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
  }

  it('the independent figures are what the fixture was made to hold (summed by hand in the fixture README)', () => {
    const { calls, ...sums } = expected;
    expect(sums).toEqual({ totals: 3, input: 150_472, output: 2_349, cacheRead: 105_127, cacheWrite: 35_783, reasoning: 376 });
    expect(calls.size).toBe(10);
  });

  it('stores one usage row per model and shutdown, the token sums computed from the files, all in session A', async () => {
    const { calls: _c, ...sums } = expected;
    expect(await usageTotals()).toEqual(sums);
    const rows = await sink.queryRows<{ session_id: string; agent_id: string; model: string; input: string; context: string }>(
      `SELECT session_id, agent_id, model, sum(input_tokens) AS input, max(context_tokens) AS context FROM token_usage FINAL WHERE source = 'observed' AND ${USAGE_OF_FIXTURES} GROUP BY session_id, agent_id, model ORDER BY model`,
    );
    expect(rows).toEqual([
      { session_id: A, agent_id: SESSION_TOTALS_AGENT, model: 'claude-sonnet-4.5', input: '71282', context: String(71_282 + 1_204) },
      { session_id: A, agent_id: SESSION_TOTALS_AGENT, model: 'gpt-5.4', input: String(58_710 + 20_480), context: String(58_710 + 930) },
    ]);
  });

  it('stores every tool call once, with the status, namespace and projection the files give', async () => {
    const statuses = await sink.queryRows<{ status: string; n: string }>(`SELECT status, count() AS n FROM tool_calls FINAL WHERE harness = 'copilot_cli' AND ${OF_FIXTURES} GROUP BY status ORDER BY status`);
    const want: Record<string, number> = {};
    for (const c of expected.calls.values()) want[c.status] = (want[c.status] ?? 0) + 1;
    expect(want).toEqual({ ok: 7, error: 2, pending: 1 });
    expect(Object.fromEntries(statuses.map((r) => [r.status, Number(r.n)]))).toEqual(want);
    const rows = await sink.queryRows<Record<string, string | null>>(
      `SELECT call_id, namespace, tool_name, kind, mcp_server, mcp_tool, path, command, description, pattern, arrayStringConcat(flags, ',') AS flags, session_id, agent_id, model, error, duration_ms FROM tool_calls FINAL WHERE ${OF_FIXTURES} ORDER BY call_id`,
    );
    const byCall = Object.fromEntries(rows.map((r) => [r['call_id'], r]));
    expect(byCall['toolu_vrtx_01B3dF5gH7jK9lM2nP4qR6sT']).toMatchObject({ namespace: 'copilot_cli', kind: 'read', path: '/home/ana/src/atlas/src/router.ts', model: 'claude-sonnet-4.5', duration_ms: '76' });
    expect(byCall['toolu_vrtx_01C5fG7hJ9kL1mN3pQ5rS7tV']).toMatchObject({ kind: 'execute', command: 'npm test -- --run router', description: 'Run the router tests', error: 'FAIL test/router.test.ts > GET /health returns 200' });
    expect(byCall['toolu_vrtx_01D7hJ9kL1mN3pQ5rS7tV9wX']).toMatchObject({ kind: 'edit', error: 'The user rejected this tool call. User feedback: import health first' });
    expect(byCall['call_Gk2mP4rT6vX8zB0dF2hJ4lN6']).toMatchObject({ namespace: 'mcp', mcp_server: 'github-mcp-server', mcp_tool: 'get_issue', flags: '' });
    expect(byCall['call_Kq5rS7uW9yA1cE3gI5kM7oQ9']).toMatchObject({ tool_name: 'glob', pattern: 'src/**/*.test.ts', agent_id: 'explore-1', model: 'gpt-5.4-mini' });
    expect(byCall['call_Ms7tU9wY1aC3eG5iK7mO9qS1']).toMatchObject({ tool_name: 'bash', command: 'npm run dev', duration_ms: null });
    expect(byCall['toolu_vrtx_01E9jL1mN3pQ5rS7tV9wX1yZ']).toMatchObject({ session_id: B, pattern: 'PORT', model: 'claude-haiku-4.5' });
    expect(rows.filter((r) => r['flags'] !== '').map((r) => r['call_id'])).toEqual([]);
  });

  it('keeps each raw input as the file logged it (an object verbatim, a freeform patch as its text)', async () => {
    const rows = await sink.queryRows<{ call_id: string; raw_input: string; source: string }>(`SELECT call_id, raw_input, source FROM tool_calls FINAL WHERE ${OF_FIXTURES}`);
    expect(rows).toHaveLength(expected.calls.size);
    for (const r of rows) {
      const args = expected.calls.get(r.call_id)?.args;
      if (typeof args === 'string') expect(r.raw_input, r.call_id).toBe(args);
      else {
        expect(readFileSync(r.source.split(/:(?=\d+$)/)[0] ?? '', 'utf8'), r.call_id).toContain(`"arguments":${r.raw_input}`);
        expect(JSON.parse(r.raw_input), r.call_id).toEqual(args);
      }
    }
  });

  it('accounts for every event and record: no dead letter, the skipped types listed in the README', async () => {
    const c = first.counts;
    expect(first.filesSeen).toBe(2);
    expect(first.eventsEmitted).toBe(expected.totals + expected.calls.size);
    expect(c.eventsRead).toBe(first.eventsEmitted);
    expect(c.rowsWritten + c.deadLetters).toBe(c.eventsRead);
    expect(c.deadLetters).toBe(0);
    expect(first.malformedRecords).toBe(0);
    expect(await countOf(sink, `SELECT count() AS n FROM dead_letters FINAL WHERE ${OF_FIXTURES}`)).toBe(0);
    expect(first.skippedRecords).toEqual({ 'session.info': 1, 'assistant.turn_start': 2, 'assistant.message': 4, 'assistant.turn_end': 1, 'subagent.started': 1, abort: 1 });
    const lines = files.reduce((n, f) => n + readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '').length, 0);
    expect(first.recordsRead).toBe(lines);
  });

  it('changes no count when the same folder is imported again', async () => {
    const again = await runImport(copilotCliImporter, [FIXTURES], sink);
    expect(again.filesUnchanged).toBe(2);
    expect(again.eventsEmitted).toBe(0);
  });

  it('redacts secrets on the import path: in a call\'s raw input and output, and in a dead letter\'s bytes', async () => {
    const key = 'sk-ant-api03-dozKV6hsDOZalwHS3epALW7itEP0bmxIT4fqBMX8juFQ1cnyJU5grCNY9kvGR2dozKV6hsDOZalwHS3epALW7itEP0bmxAA';
    const dir = join(tmp.dir, 'session-state', 'sec-1');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'events.jsonl');
    const lines = [
      start('sec-c1', 'bash', { command: `curl -H "x-api-key: ${key}" https://api.anthropic.com`, description: 'Call the API' }),
      ev('tool.execution_complete', { toolCallId: 'sec-c1', success: true, result: { content: `echoed ${key}` } }),
      `{"type":"tool.execution_start","data":{"toolCallId":"${key}`,
    ].map((r) => (typeof r === 'string' ? r : JSON.stringify(r)));
    writeFileSync(file, lines.join('\n') + '\n');
    const s = await runImport(copilotCliImporter, [file], sink);
    expect(s.malformedRecords).toBe(1);
    const [row] = await sink.queryRows<{ raw_input: string; command: string }>("SELECT raw_input, command FROM tool_calls FINAL WHERE call_id = 'sec-c1'");
    expect(row?.raw_input).toContain('[REDACTED:anthropic_key');
    expect(row?.command).toContain('[REDACTED:anthropic_key');
    const [dl] = await sink.queryRows<{ raw: string }>(`SELECT raw FROM dead_letters FINAL WHERE source = '${file}:3'`);
    expect(dl?.raw).toContain('[REDACTED:anthropic_key');
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE position(raw_input, '${key}') > 0 OR position(command, '${key}') > 0`)).toBe(0);
    expect(await countOf(sink, `SELECT count() AS n FROM dead_letters FINAL WHERE position(raw, '${key}') > 0`)).toBe(0);
  });

  it('writes a damaged line as one dead letter with its bytes and file:line', async () => {
    // A session of its own (the folder names it): the same calls under B would replace the fixture's rows.
    const dir = join(tmp.dir, 'session-state', `${B}-damaged`);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'events.jsonl');
    const good = readFileSync(FILE_B, 'utf8').split('\n').filter((l) => l !== '');
    const junk = '{"type":"tool.execution_complete","data":{"toolCallId":';
    writeFileSync(file, [...good.slice(0, 3), junk].join('\n') + '\n');
    appendFileSync(file, good.slice(3).join('\n') + '\n');
    const s = await runImport(copilotCliImporter, [file], sink);
    expect(s.malformedRecords).toBe(1);
    const [dl] = await sink.queryRows<{ reason: string; raw: string }>(`SELECT reason, raw FROM dead_letters FINAL WHERE source = '${file}:4'`);
    expect(dl).toEqual({ reason: 'import_malformed', raw: junk });
    expect(s.eventsEmitted).toBe(1);
  });
});
