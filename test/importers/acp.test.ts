// The ACP importer on the synthetic captures in fixtures-acp/ (no public capture exists), on
// edge cases, and end to end into embedded ClickHouse, including a capture that grows.
import { readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acpImporter } from '../../src/importers/acp/index.ts';
import { parseAcpFile } from '../../src/importers/acp/parser.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ParsedFile } from '../../src/importers/types.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURES = new URL('./fixtures-acp/', import.meta.url).pathname;
const CAPTURE = join(FIXTURES, 'grok-build-session.capture.jsonl');
const BARE = join(FIXTURES, 'claude-code-acp.bare.jsonl');
const SESSION = '01a25a43-b748-7a32-9ab9-5d95a51644fb';
const GROWING_SESSION = '01a25a43-b748-7a32-9ab9-000000000002';
const DEC_10_2025 = Date.parse('2025-12-10T08:00:00.000Z');

type Event = Record<string, unknown> & { type: string; event_id: string };

function parse(path: string, fallbackTimeMs?: number): ParsedFile & { parsed: Event[] } {
  const result = parseAcpFile(path, readFileSync(path), fallbackTimeMs === undefined ? {} : { fallbackTimeMs });
  return { ...result, parsed: result.events.map((e) => JSON.parse(e.envelope.text) as Event) };
}

/** Byte offset just past line `n` (1-based) of a file. */
function lineEnd(path: string, n: number): number {
  return readFileSync(path, 'utf8').split('\n').slice(0, n).reduce((bytes, l) => bytes + Buffer.byteLength(l) + 1, 0);
}

describe('ACP capture of a Grok Build session (synthetic, recorder wrapper with times)', () => {
  const r = parse(CAPTURE);

  it('joins 29 lines into 7 tool calls; the other 13 lines are counted by type', () => {
    expect(r.recordsRead).toBe(29);
    expect(r.events).toHaveLength(7);
    expect(r.skipped).toEqual({
      'jsonrpc:initialize': 1,
      'jsonrpc:session/new': 1,
      'jsonrpc:session/prompt': 2,
      'jsonrpc:session/cancel': 1,
      'jsonrpc:response': 5,
      'session_update:agent_thought_chunk': 1,
      'session_update:agent_message_chunk': 1,
      'session_update:usage_update': 1,
    });
    expect(r.completeBytes).toBe(readFileSync(CAPTURE).length);
  });

  it('names tools from _meta["x.ai/tool"] (harness from its namespace), else from the title', () => {
    expect(r.parsed.map((e) => [e['tool'], e['harness'], e['status']])).toEqual([
      ['read_file', 'grok_build_concise', 'ok'],
      ['bash', 'grok_build_concise', 'error'],
      ['Searching the web', 'grok_build', 'ok'],
      ['use_tool', 'mcp', 'ok'],
      ['search_replace', 'grok_build_concise', 'ok'],
      ['bash', 'grok_build_concise', 'ok'],
      ['bash', 'grok_build_concise', 'pending'],
    ]);
    for (const e of r.parsed) expect(e).toMatchObject({ session_id: SESSION, model: 'grok-4' });
    expect(r.parsed.map((e) => e['turn_id'])).toEqual(['2', '2', '2', '2', '2', '2', '3']);
  });

  it('times from the lines: ts of the announcement, duration to the completed/failed update', () => {
    expect(r.parsed.map((e) => e['duration_ms'] ?? null)).toEqual([31, 3142, 1338, 769, 786, 1294, null]);
    expect(r.parsed[0]?.['ts']).toBe('2026-12-09T10:03:12.530Z');
    expect(r.parsed[6]?.['ts']).toBe('2026-12-09T10:04:03.518Z');
  });

  it('outputs: text content, rawOutput verbatim, the failed call\'s text as its error', () => {
    expect(r.parsed[0]?.['output']).toBe('package ledger\n\nfunc Split(total int64, parts int64) int64 {\n\treturn total / parts\n}\n');
    expect(r.parsed[1]?.['error']).toBe('--- FAIL: TestBalanceRounding (0.00s)\n    balance_test.go:31: Split(1001, 2) = 500, want 501\nFAIL');
    expect(JSON.parse(String(r.parsed[1]?.['output']))).toMatchObject({ exit_code: 1 });
    expect(r.parsed[3]?.['output']).toBe('#412 Use integer division in Split (merged by kofi)');
    // A diff-only result has no text output.
    expect(r.parsed[4]).not.toHaveProperty('output');
  });

  it('keeps rawInput byte for byte (the \\u2248 escape survives) and sources the last merged line', () => {
    const line20 = readFileSync(CAPTURE, 'utf8').split('\n')[19] ?? '';
    const raw = line20.slice(line20.indexOf('"rawInput":') + 11, line20.indexOf(',"_meta"'));
    expect(raw).toContain('// \\u2248 banker');
    expect(r.events[4]?.envelope.text.endsWith(`,"input":${raw}}`)).toBe(true);
    expect(r.events.map((e) => e.source.slice(CAPTURE.length + 1))).toEqual(['9', '14', '16', '18', '21', '23', '27']);
    expect(r.events.map((e) => e.endOffset)).toEqual([9, 14, 16, 18, 21, 23, 27].map((n) => lineEnd(CAPTURE, n)));
  });
});

describe('ACP bare notifications from claude-code-acp (synthetic, no times)', () => {
  it('takes harness and tool from _meta.claudeCode; ts falls back to the given time, without durations', () => {
    const r = parse(BARE, DEC_10_2025);
    expect(r.recordsRead).toBe(5);
    expect(r.skipped).toEqual({ 'session_update:agent_message_chunk': 1 });
    expect(r.parsed.map((e) => [e['harness'], e['tool'], e['status'], e['ts'], e['duration_ms'] ?? null])).toEqual([
      ['claude_code', 'Read', 'ok', '2025-12-10T08:00:00.000Z', null],
      ['claude_code', 'Bash', 'error', '2025-12-10T08:00:00.000Z', null],
    ]);
    expect(r.parsed[1]?.['error']).toBe('npm ERR! Missing script: "test"');
  });

  it('without a fallback time the calls are malformed at the lines that announced them, not guessed', () => {
    const r = parse(BARE);
    expect(r.events).toHaveLength(0);
    expect(r.skipped).toEqual({ 'session_update:agent_message_chunk': 1 });
    const lines = readFileSync(BARE, 'utf8').split('\n');
    expect(r.malformed?.map((m) => [m.line, m.problem, m.raw, m.endOffset])).toEqual([
      [1, 'tool_call:no_time', lines[0], lineEnd(BARE, 1)],
      [3, 'tool_call:no_time', lines[2], lineEnd(BARE, 3)],
    ]);
  });
});

describe('ACP lines the importer does not turn into events', () => {
  it('returns broken lines and calls as malformed, reads bare params and epoch-second times, leaves a torn last line', () => {
    const text = [
      'not json',
      '{"gc_acp_capture":1,"ts":"2026-09-25T10:00:00Z","session_id":"gc-s1"}',
      // Bare session/update params, time in epoch seconds; rawInput only arrives with the update.
      '{"time":1790000000.25,"sessionId":"s-9","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Edit a.go","kind":"edit","status":"pending"}}',
      '{"time":1790000001.5,"sessionId":"s-9","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawInput":{"path":"a.go","n":12345678901234567890}}}',
      '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-9","update":{"sessionUpdate":"tool_call_update","status":"completed"}}}',
      '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-9","update":{"sessionUpdate":"tool_call","toolCallId":"t2"}}}',
      '{"jsonrpc":"2.0","method":"fs/read_text_file","id":7,"params":{"sessionId":"s-9","path":"/a.go"}}',
    ].join('\n');
    const r = parseAcpFile('/tmp/c.jsonl', Buffer.from(`${text}\n{"jsonrpc":"2.0","method":"session/upd`));
    expect(r.recordsRead).toBe(7);
    expect(r.completeBytes).toBe(Buffer.byteLength(text) + 1);
    expect(r.skipped).toEqual({ unknown: 1, 'jsonrpc:fs/read_text_file': 1 });
    const lines = text.split('\n');
    expect(r.malformed?.map((m) => [m.line, m.problem, m.raw])).toEqual([
      [1, 'invalid_json', lines[0]],
      [5, 'session_update:tool_call_update:no_tool_call_id', lines[4]],
      // A call no update names: malformed where it was announced.
      [6, 'tool_call:no_name', lines[5]],
    ]);
    expect(r.events).toHaveLength(1);
    const t1 = JSON.parse(r.events[0]?.envelope.text ?? '{}') as Event;
    expect(t1).toMatchObject({ harness: 'grok_build', tool: 'Edit a.go', status: 'ok', ts: '2026-09-21T14:13:20.250Z', duration_ms: 1250, turn_id: '', model: '' });
    // The integer beyond 2^53 reaches the envelope as written.
    expect(r.events[0]?.envelope.text.endsWith(',"input":{"path":"a.go","n":12345678901234567890}}')).toBe(true);
    expect(r.events[0]?.source).toBe('/tmp/c.jsonl:4');
  });
});

describe('ACP updates of a call announced elsewhere', () => {
  it('counts updates no line names as a call without its tool_call; an announced call without a name is malformed', () => {
    const update = (id: string, extra: string) => `{"ts":"2026-09-25T10:00:00Z","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"${id === 't2' ? 'tool_call' : 'tool_call_update'}","toolCallId":"${id}"${extra}}}}}`;
    const text = [update('t1', ',"status":"completed"'), update('t1', ',"rawOutput":"done"'), update('t2', ',"status":"pending"'), update('t3', ',"status":"completed","_meta":{"claudeCode":{"toolName":"Read"}}')].join('\n');
    const r = parseAcpFile('/tmp/o.jsonl', Buffer.from(`${text}\n`));
    expect(r.skipped).toEqual({ 'tool_call_update:without_tool_call': 1 });
    expect(r.malformed?.map((m) => [m.line, m.problem])).toEqual([[3, 'tool_call:no_name']]);
    // An update that names its tool is still a call, announced or not.
    expect(r.events.map((e) => (JSON.parse(e.envelope.text) as Event)['tool'])).toEqual(['Read']);
  });
});

describe('acp import into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let first: ImportSummary;
  const tmp = makeTempDir('acp-e2e');
  const growing = join(tmp.dir, 'growing.jsonl');

  // The fixture folder's rows: the growing-capture test adds a session of its own beside them,
  // and the tests pass in any order.
  const OF_FIXTURES = `startsWith(source, '${FIXTURES}')`;

  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('acp'));
    first = await runImport(acpImporter, [FIXTURES], sink);
  });
  afterAll(async () => {
    await cleanup?.();
    tmp.cleanup();
  });

  it('accounts for every event: events in = rows + dead letters', async () => {
    expect(first.filesRead).toBe(2);
    expect(first.recordsRead).toBe(34);
    expect(first.eventsEmitted).toBe(9);
    expect(first.counts.eventsRead).toBe(9);
    expect(first.counts.rowsWritten + first.counts.deadLetters).toBe(9);
    expect(first.counts.deadLetters).toBe(0);
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE ${OF_FIXTURES}`)).toBe(9);
    const byStatus = await sink.queryRows<{ status: string; n: string }>(`SELECT status, count() AS n FROM tool_calls FINAL WHERE ${OF_FIXTURES} GROUP BY status ORDER BY status`);
    expect(Object.fromEntries(byStatus.map((r) => [r.status, Number(r.n)]))).toEqual({ error: 2, ok: 6, pending: 1 });
    const [mcp] = await sink.queryRows<{ namespace: string; via: string; mcp_server: string; mcp_tool: string }>(
      `SELECT namespace, via, mcp_server, mcp_tool FROM tool_calls FINAL WHERE harness = 'mcp' AND ${OF_FIXTURES}`,
    );
    expect(mcp).toEqual({ namespace: 'mcp', via: 'use_tool', mcp_server: 'github', mcp_tool: 'get_pull_request' });
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE has(flags, 'uncatalogued') AND ${OF_FIXTURES}`)).toBe(1);
    const [edit] = await sink.queryRows<{ raw_input: string; path: string }>("SELECT raw_input, path FROM tool_calls FINAL WHERE tool_name = 'search_replace'");
    expect(edit?.path).toBe('internal/ledger/balance.go');
    expect(edit?.raw_input).toContain('// \\u2248 banker');
  });

  it('a second import changes no count', async () => {
    const second = await runImport(acpImporter, [FIXTURES], sink);
    expect(second.filesUnchanged).toBe(2);
    expect(second.counts.eventsRead).toBe(0);
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE ${OF_FIXTURES}`)).toBe(9);
    expect(await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL')).toBe(0);
  });

  it('a growing capture: a call completed by appended lines is re-emitted and replaced; finished calls are not', async () => {
    // A session of its own: the fixture's finished calls, imported above, would outrank the
    // copy's pending ones (a finished call beats a pending copy of it in tool_calls).
    const lines = readFileSync(CAPTURE, 'utf8').replaceAll(SESSION, GROWING_SESSION).split('\n');
    // Cut after line 13: the failing bash call (announced on line 10) is still in progress.
    writeFileSync(growing, `${lines.slice(0, 13).join('\n')}\n`);
    const part = await runImport(acpImporter, [growing], sink);
    expect(part.eventsEmitted).toBe(2);
    const statusOf = async (): Promise<string | undefined> =>
      (await sink.queryRows<{ status: string }>(`SELECT status FROM tool_calls FINAL WHERE session_id = '${GROWING_SESSION}' AND call_id = 'call-6463db1a-b78a-4b45-a33c-67b00c00ee99-0'`))[0]?.status;
    expect(await statusOf()).toBe('pending');
    appendFileSync(growing, lines.slice(13).join('\n'));
    const rest = await runImport(acpImporter, [growing], sink);
    // read_file ended on line 9, before the first import's end: not emitted again.
    expect(rest.eventsAlreadyImported).toBe(1);
    expect(rest.eventsEmitted).toBe(6);
    expect(await statusOf()).toBe('error');
    // Each call once: the 7 of the grown copy beside the fixtures' 9.
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE session_id = '${GROWING_SESSION}'`)).toBe(7);
    expect(await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(16);
  });
});
