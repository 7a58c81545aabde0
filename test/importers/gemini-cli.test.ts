// The Gemini CLI importer: parser units on inline records, then the fixture folder (a real
// ~/.gemini/tmp layout) imported into a real embedded ClickHouse and checked against figures
// computed here from the same files with plain JSON reading; the shared sample when present.
import { appendFileSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stableEventId } from '../../src/importers/envelope.ts';
import { geminiCliImporter } from '../../src/importers/gemini-cli/index.ts';
import { callOutcome, eventToolName, parseGeminiFile } from '../../src/importers/gemini-cli/parser.ts';
import { defaultGeminiPaths, isSessionFile, listGeminiFiles, parentSessionOf } from '../../src/importers/gemini-cli/paths.ts';
import type { ToolCallStatus } from '../../src/importers/gemini-cli/types.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURES = new URL('./fixtures-gemini-cli/', import.meta.url).pathname;
const P1 = 'a3f1c9e07b52d4186e0f9c2b7d31a5e8f4c6b0d29e7a1f3c5b8d0e2a4c6f8b1d';
const P2 = '5d2e8b1f0c4a7e3d9b6f2a8c1e5d7b0f3a9c6e2d8b4f1a7c0e3d5b9f2a6c8e4d';
const S1 = '7c1e4a2b-9d3f-4e8a-b5c6-0f1d2e3a4b5c';
const SUB = 'e2b7d0c4-1a9f-4c3e-8b6d-5f0a1e2c3d4b';
const S2 = '1f0e9d8c-7b6a-4543-9210-fedcba987654';
const MAIN_FILE = join(FIXTURES, 'tmp', P1, 'chats', 'session-2026-04-29T21-39-7c1e4a2b.jsonl');
const SUB_FILE = join(FIXTURES, 'tmp', P1, 'chats', S1, `${SUB}.jsonl`);
const LEGACY_FILE = join(FIXTURES, 'tmp', P2, 'chats', 'session-2025-09-12T08-14-1f0e9d8c.json');

// ---------------------------------------------------------------------------------------------
// Inline records, shaped like Gemini CLI 0.40 lines (members the parser ignores left out).

type Obj = Record<string, unknown>;
const META: Obj = { sessionId: 'sess-1', projectHash: 'abc', startTime: '2026-05-01T10:00:00.000Z', lastUpdated: '2026-05-01T10:00:00.000Z', kind: 'main' };

function prompt(id: string, text = 'do the thing'): Obj {
  return { id, timestamp: '2026-05-01T10:00:01.000Z', type: 'user', content: [{ text }] };
}

function call(id: string, name: string, status = 'success', extra: Obj = {}): Obj {
  return {
    id,
    name,
    args: { command: 'ls', description: 'List files.' },
    result: [{ functionResponse: { id, name, response: { output: `output of ${id}` } } }],
    status,
    timestamp: '2026-05-01T10:00:03.000Z',
    displayName: 'Shell',
    ...extra,
  };
}

function gemini(id: string, tokens: unknown, toolCalls?: unknown[], extra: Obj = {}): Obj {
  return { id, timestamp: '2026-05-01T10:00:02.000Z', type: 'gemini', content: '', thoughts: [], tokens, model: 'gemini-3-flash-preview', ...(toolCalls ? { toolCalls } : {}), ...extra };
}

const TOKENS = { input: 1000, output: 50, cached: 400, thoughts: 30, tool: 20, total: 1100 };

function parse(records: readonly (Obj | string)[], path = '/home/u/.gemini/tmp/abc/chats/session-2026-05-01T10-00-sess1xxx.jsonl') {
  const text = records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
  const parsed = parseGeminiFile(path, Buffer.from(text, 'utf8'));
  return { ...parsed, malformed: parsed.malformed ?? [], text, parsedEvents: parsed.events.map((e) => JSON.parse(e.envelope.text) as Obj) };
}

describe('parseGeminiFile (inline records)', () => {
  it('maps tokens exactly: input + tool, cached, output, thoughts as reasoning; one usage per message', () => {
    const r = parse([META, prompt('u1'), gemini('g1', TOKENS)]);
    expect(r.malformed).toEqual([]);
    expect(r.parsedEvents).toEqual([
      {
        schema: 'toolcanon.event/v1',
        type: 'usage',
        event_id: stableEventId('gemini_cli', 'sess-1', 'usage', 'g1'),
        ts: '2026-05-01T10:00:02.000Z',
        harness: 'gemini_cli',
        session_id: 'sess-1',
        turn_id: 'u1',
        model: 'gemini-3-flash-preview',
        request_id: 'g1',
        input_tokens: 1020,
        output_tokens: 50,
        cache_read_tokens: 400,
        reasoning_tokens: 30,
      },
    ]);
    // input_tokens + output_tokens + reasoning_tokens is the logged total: nothing counted twice.
    const u = r.parsedEvents[0] ?? {};
    expect(Number(u['input_tokens']) + Number(u['output_tokens']) + Number(u['reasoning_tokens'])).toBe(TOKENS.total);
  });

  it('reads a message appended again whole: one usage and one call per id, each completed by the line where its last version first appeared', () => {
    const c1 = call('c1', 'run_shell_command');
    const c2running = call('c2', 'run_shell_command', 'executing', { result: null });
    const c2done = call('c2', 'run_shell_command', 'error', { timestamp: '2026-05-01T10:00:09.000Z', result: [{ functionResponse: { id: 'c2', name: 'run_shell_command', response: { error: 'Command exited with code 2\nmore' } } }] });
    const r = parse([
      META, // 1
      prompt('u1'), // 2
      gemini('g1', null, [c1]), // 3: the first batch, tokens not yet known
      gemini('g1', TOKENS, [c1]), // 4: tokens arrive
      { $set: { lastUpdated: '2026-05-01T10:00:04.000Z' } }, // 5
      gemini('g1', TOKENS, [c1, c2running]), // 6: a second batch, still running
      gemini('g1', TOKENS, [c1, c2done]), // 7: it finished
    ]);
    expect(r.malformed).toEqual([]);
    const lines = r.events.map((e) => Number(e.source.split(':').pop()));
    const kinds = r.parsedEvents.map((e) => `${String(e['type'])}:${String(e['call_id'] ?? e['request_id'])}`);
    expect(kinds).toEqual(['tool_call:c1', 'usage:g1', 'tool_call:c2']);
    expect(lines).toEqual([3, 4, 7]);
    const c2 = r.parsedEvents[2] ?? {};
    // The time of the call's first version (stable while the file grows), its final status.
    expect(c2).toMatchObject({ status: 'error', error: 'Command exited with code 2', ts: '2026-05-01T10:00:03.000Z', input: { command: 'ls', description: 'List files.' } });
    expect(r.skipped).toEqual({ metadata_update: 1 });
  });

  it('keeps the raw args byte for byte, as the line wrote them', () => {
    const line = '{"id":"g1","timestamp":"2026-05-01T10:00:02.000Z","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"read_file","args":{"file_path":"a\\u00e9.ts","start_line":12345678901234567890},"status":"success","timestamp":"2026-05-01T10:00:03.000Z"}]}';
    const r = parse([META, line]);
    expect(r.events).toHaveLength(1);
    expect(r.events[0]?.envelope.text).toContain(',"input":{"file_path":"a\\u00e9.ts","start_line":12345678901234567890}}');
  });

  it('maps the status: success ok, error and cancelled error (with the reason), running pending', () => {
    const withError = (status: ToolCallStatus, error?: string) => ({ status, result: error === undefined ? null : [{ functionResponse: { response: { error } } }], resultDisplay: 'shown' });
    expect(callOutcome(withError('success'))).toEqual({ status: 'ok' });
    expect(callOutcome(withError('error', 'File not found: x.ts\nstack'))).toEqual({ status: 'error', error: 'File not found: x.ts' });
    expect(callOutcome(withError('error'))).toEqual({ status: 'error', error: 'shown' });
    expect(callOutcome(withError('cancelled', '[Operation Cancelled] Reason: User did not allow tool call'))).toEqual({ status: 'error', error: 'cancelled: [Operation Cancelled] Reason: User did not allow tool call' });
    expect(callOutcome({ status: 'cancelled', result: null, resultDisplay: undefined })).toEqual({ status: 'error', error: 'cancelled' });
    for (const s of ['validating', 'scheduled', 'executing', 'awaiting_approval'] as const) expect(callOutcome({ status: s, result: null, resultDisplay: undefined })).toEqual({ status: 'pending' });
  });

  it('qualifies an MCP tool logged by its bare name with the server its display name gives', () => {
    expect(eventToolName({ name: 'get_issue', displayName: 'get_issue (github MCP Server)' })).toBe('github__get_issue');
    expect(eventToolName({ name: 'github__get_issue', displayName: 'get_issue (github MCP Server)' })).toBe('github__get_issue');
    expect(eventToolName({ name: 'run_shell_command', displayName: 'Shell' })).toBe('run_shell_command');
    expect(eventToolName({ name: 'read_file', displayName: undefined })).toBe('read_file');
  });

  it('reads outputs from functionResponse and text parts, and counts image parts', () => {
    const r = parse([
      META,
      gemini('g1', null, [
        call('c1', 'read_file', 'success', {
          result: [{ functionResponse: { id: 'c1', name: 'read_file', response: { output: 'Read image file: a.png' }, parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }] } }, { text: 'extra' }, { inlineData: { mimeType: 'image/jpeg', data: 'BBBB' } }],
        }),
      ]),
    ]);
    expect(r.parsedEvents[0]).toMatchObject({ output: 'Read image file: a.png\nextra', images: 2 });
  });

  it('dead-letters what it cannot read, keeps the rest of the message, counts what it skips on purpose', () => {
    const r = parse([
      META, // 1
      '{"id": "half', // 2 invalid JSON
      { hello: 'world' }, // 3 no known record
      gemini('g1', { input: -1, output: 2 }, [call('c1', 'glob')]), // 4 bad tokens, its call read
      gemini('g2', TOKENS, [{ id: 'c2', args: {}, status: 'success' }, call('c3', 'glob')]), // 5 a call without name
      gemini('g3', TOKENS, [], { timestamp: 'yesterday' }), // 6 bad timestamp
      gemini('g4', { input: 10, output: 1, cached: 11 }), // 7 cached above input
      { id: 'i1', type: 'info', timestamp: '2026-05-01T10:00:05.000Z', content: 'note' }, // 8
      { id: 'x1', type: 'tool_group', timestamp: '2026-05-01T10:00:05.000Z', content: '' }, // 9 a newer type
      { $rewindTo: 'g2' }, // 10
      { sessionId: '', projectHash: 'abc' }, // 11 an empty session id
      { id: 'w1', type: 42 }, // 12 a type that is no string
      gemini('g5', null), // 13 never gets tokens
    ]);
    expect(r.malformed.map((m) => [m.line, m.problem])).toEqual([
      [2, 'invalid_json'],
      [3, 'malformed:record'],
      [4, 'malformed:tokens'],
      [5, 'malformed:tool_call'],
      [6, 'bad_timestamp'],
      [7, 'malformed:tokens'],
      [11, 'malformed:metadata'],
      [12, 'malformed:message'],
    ]);
    for (const m of r.malformed) expect(m.raw).toBe(r.text.split('\n')[m.line - 1]);
    expect(r.malformed[2]?.detail).toBe('`tokens.input` is the number -1, not a non-negative integer.');
    expect(r.malformed[3]?.detail).toBe('`toolCalls[0].name` is missing, not a non-empty string of at most 256 characters.');
    expect(r.parsedEvents.map((e) => String(e['call_id'] ?? e['request_id']))).toEqual(['c1', 'g2', 'c3']);
    expect(r.skipped).toEqual({ 'message:info': 1, 'message:unknown_type:tool_group': 1, rewind: 1, gemini_without_tokens: 1 });
    expect(r.recordsRead).toBe(13);
  });

  it('puts a subagent file in its parent session, with its own id as the agent', () => {
    const path = '/h/.gemini/tmp/abc/chats/parent-1/sub-9.jsonl';
    expect(parentSessionOf(path)).toBe('parent-1');
    const r = parse([{ ...META, sessionId: 'sub-9', kind: 'subagent' }, gemini('g1', TOKENS, [call('c1', 'glob')])], path);
    for (const e of r.parsedEvents) expect(e).toMatchObject({ session_id: 'parent-1', agent_id: 'sub-9' });
    expect(r.parsedEvents[0]?.['event_id']).toBe(stableEventId('gemini_cli', 'parent-1', 'usage', 'g1'));
  });

  it('reads a legacy .json document: each message at its line, no prefix skippable, an unfinished one left for later', () => {
    const doc = JSON.stringify({ sessionId: 'sess-old', projectHash: 'abc', messages: [prompt('u1'), gemini('g1', TOKENS, [call('c1', 'glob')])] }, null, 2);
    const path = '/h/.gemini/tmp/abc/chats/session-old.json';
    const r = parseGeminiFile(path, Buffer.from(doc));
    expect(r.completeBytes).toBe(0);
    expect(r.recordsRead).toBe(2);
    const gLine = doc.split('\n').findIndex((l) => l.includes('"id": "g1"'));
    // The record starts at the message's opening brace, the line before its id.
    expect(r.events.map((e) => e.source)).toEqual([`${path}:${gLine}`, `${path}:${gLine}`]);
    expect(r.events.every((e) => e.endOffset === Buffer.byteLength(doc))).toBe(true);
    const torn = parseGeminiFile(path, Buffer.from(doc.slice(0, 100)));
    expect(torn).toMatchObject({ events: [], malformed: [], skipped: { incomplete_document: 1 } });
    const noMessages = parseGeminiFile(path, Buffer.from('{"sessionId":"s","projectHash":"p"}'));
    expect(noMessages.malformed?.map((m) => m.problem)).toEqual(['malformed:document']);
  });
});

describe('paths', () => {
  it('defaults to ~/.gemini/tmp, or $GEMINI_CLI_HOME/.gemini/tmp', () => {
    expect(defaultGeminiPaths({}, '/home/u')).toEqual(['/home/u/.gemini/tmp']);
    expect(defaultGeminiPaths({ GEMINI_CLI_HOME: '/profiles/b' }, '/home/u')).toEqual(['/profiles/b/.gemini/tmp']);
  });

  it('walks only session files: chats/*.json[l] and chats/<parent>/*.jsonl, not logs.json', () => {
    expect(listGeminiFiles([FIXTURES])).toEqual([SUB_FILE, MAIN_FILE, LEGACY_FILE].sort());
    expect(isSessionFile(join(FIXTURES, 'tmp', P2, 'logs.json'))).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Figures computed here from the fixture files with plain JSON reading, as Gemini CLI's own
// loader reads them (the last copy of each message id wins), except that rewound messages are
// kept: they were billed and their tools ran.

interface Expected {
  responses: number;
  input: number;
  output: number;
  cacheRead: number;
  reasoning: number;
  total: number;
  calls: Map<string, { name: string; status: string; args: unknown }>;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

function finalMessages(file: string): Obj[] {
  const text = readFileSync(file, 'utf8');
  if (file.endsWith('.json')) return (JSON.parse(text) as { messages: Obj[] }).messages;
  const byId = new Map<string, Obj>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const o = JSON.parse(line) as Obj;
    if (typeof o['id'] === 'string') byId.set(o['id'], o);
  }
  return [...byId.values()];
}

function expectedFigures(files: readonly string[]): Expected {
  const e: Expected = { responses: 0, input: 0, output: 0, cacheRead: 0, reasoning: 0, total: 0, calls: new Map() };
  for (const file of files) {
    for (const m of finalMessages(file)) {
      if (m['type'] !== 'gemini') continue;
      const t = m['tokens'] as { input: number; output: number; cached: number; thoughts?: number; tool?: number; total: number } | null | undefined;
      if (t) {
        e.responses++;
        e.input += t.input + (t.tool ?? 0);
        e.output += t.output;
        e.cacheRead += t.cached;
        e.reasoning += t.thoughts ?? 0;
        e.total += t.total;
      }
      for (const c of (m['toolCalls'] as Obj[] | undefined) ?? []) e.calls.set(String(c['id']), { name: String(c['name']), status: String(c['status']), args: c['args'] });
    }
  }
  return e;
}

describe('gemini-cli import of the fixture folder into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let first: ImportSummary;
  const sessionFiles = walk(FIXTURES).filter((p) => p.includes('/chats/'));
  const expected = expectedFigures(sessionFiles);
  const tmp = makeTempDir('gemini-import');

  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('gemini-cli'));
    first = await runImport(geminiCliImporter, [FIXTURES], sink);
  });
  afterAll(async () => {
    await cleanup?.();
    tmp.cleanup();
  });

  async function usageTotals(): Promise<Record<string, number>> {
    const [row] = await sink.queryRows<Record<string, string>>(
      `SELECT count() AS responses, sum(input_tokens) AS input, sum(output_tokens) AS output, sum(cache_read_tokens) AS cacheRead,
              sum(reasoning_tokens) AS reasoning, sum(input_tokens + output_tokens + reasoning_tokens) AS total
       FROM token_usage FINAL WHERE source = 'observed' AND harness = 'gemini_cli'`,
    );
    return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
  }

  async function toolsByName(): Promise<Record<string, number>> {
    const rows = await sink.queryRows<{ tool_name: string; n: string }>("SELECT tool_name, count() AS n FROM tool_calls FINAL WHERE harness = 'gemini_cli' GROUP BY tool_name");
    return Object.fromEntries(rows.map((r) => [r.tool_name, Number(r.n)]));
  }

  it('the independent figures are what the fixture was made to hold', () => {
    expect(sessionFiles).toHaveLength(3);
    expect({ ...expected, calls: expected.calls.size }).toEqual({ responses: 11, input: 111_151, output: 718, cacheRead: 73_966, reasoning: 821, total: 112_690, calls: 11 });
  });

  it('stores one usage row per response, with the token sums computed from the files', async () => {
    expect(await usageTotals()).toEqual({ responses: expected.responses, input: expected.input, output: expected.output, cacheRead: expected.cacheRead, reasoning: expected.reasoning, total: expected.total });
    expect(await countOf(sink, "SELECT uniqExact(request_id) AS n FROM token_usage FINAL WHERE source = 'observed'")).toBe(expected.responses);
    // The convention: context_tokens is input + output + reasoning, which is the logged total.
    const [g1] = await sink.queryRows<{ context_tokens: string; input_tokens: string; cache_read_tokens: string }>("SELECT context_tokens, input_tokens, cache_read_tokens FROM token_usage FINAL WHERE source = 'observed' AND request_id = 'g-4'");
    expect(g1).toEqual({ context_tokens: '13898', input_tokens: '13700', cache_read_tokens: '12288' });
  });

  it('stores every tool call once, per tool, status and namespace as the files say', async () => {
    const byName: Record<string, number> = {};
    for (const c of expected.calls.values()) {
      const tool = c.name === 'get_issue' ? 'github__get_issue' : c.name;
      byName[tool] = (byName[tool] ?? 0) + 1;
    }
    expect(await toolsByName()).toEqual(byName);
    const statuses = await sink.queryRows<{ status: string; n: string }>('SELECT status, count() AS n FROM tool_calls FINAL GROUP BY status ORDER BY status');
    const want = { ok: 0, error: 0 };
    for (const c of expected.calls.values()) want[c.status === 'success' ? 'ok' : 'error']++;
    expect(Object.fromEntries(statuses.map((r) => [r.status, Number(r.n)]))).toEqual(want);
    const rows = await sink.queryRows<Record<string, string | null>>(
      'SELECT call_id, namespace, tool_name, kind, mcp_server, mcp_tool, path, `offset`, command, cwd, directory, pattern, arrayStringConcat(flags, \',\') AS flags, session_id, agent_id, error FROM tool_calls FINAL ORDER BY call_id',
    );
    const byCall = Object.fromEntries(rows.map((r) => [r['call_id'], r]));
    expect(byCall['get_issue_1777498815880_0']).toMatchObject({ namespace: 'mcp', tool_name: 'github__get_issue', mcp_server: 'github', mcp_tool: 'get_issue', flags: '' });
    expect(byCall['read_file_1777498775364_0']).toMatchObject({ namespace: 'gemini_cli', kind: 'read', path: 'src/dates.ts', offset: '1', flags: '' });
    expect(byCall['read_file-1757664854301-4d5e6f']).toMatchObject({ path: '/home/dev/svc/config/default.json', offset: '0' });
    expect(byCall['run_shell_command_1777498785410_0']).toMatchObject({ kind: 'execute', command: 'npm test -- dates', cwd: '.' });
    expect(byCall['list_directory-1757664854301-7a8b9c']).toMatchObject({ directory: '/home/dev/svc/config', error: "Error listing directory: EACCES: permission denied, scandir '/home/dev/svc/config'" });
    expect(byCall['grep_search_1777498791700_0']).toMatchObject({ pattern: 'parseDay\\(', path: 'src', session_id: S1, agent_id: SUB });
    expect(byCall['google_web_search_1777498816450_1']).toMatchObject({ pattern: 'javascript new Date date-only string time zone', error: 'cancelled: [Operation Cancelled] Reason: User cancelled the operation.' });
    // Every call is a catalogued Gemini CLI tool or an attributed MCP tool.
    expect(rows.filter((r) => r['flags'] !== '').map((r) => r['call_id'])).toEqual([]);
    const sessions = await sink.queryRows<{ session_id: string }>('SELECT DISTINCT session_id FROM tool_calls FINAL ORDER BY session_id');
    expect(sessions.map((r) => r.session_id)).toEqual([S2, S1].sort());
  });

  it('keeps each raw input byte for byte as the file logged it', async () => {
    const rows = await sink.queryRows<{ call_id: string; raw_input: string; source: string }>('SELECT call_id, raw_input, source FROM tool_calls FINAL');
    expect(rows).toHaveLength(expected.calls.size);
    for (const r of rows) {
      const [file] = r.source.split(/:(?=\d+$)/);
      // JSONL lines are compact; the legacy document is pretty-printed, its slice kept as it is.
      const separator = file?.endsWith('.json') ? '"args": ' : '"args":';
      expect(readFileSync(file ?? '', 'utf8'), r.call_id).toContain(`${separator}${r.raw_input}`);
      expect(JSON.parse(r.raw_input), r.call_id).toEqual(expected.calls.get(r.call_id)?.args);
    }
  });

  it('accounts for every event and record: no dead letter, the skipped records listed in the README', async () => {
    const c = first.counts;
    expect(first.filesSeen).toBe(3);
    expect(first.eventsEmitted).toBe(expected.responses + expected.calls.size);
    expect(c.eventsRead).toBe(first.eventsEmitted);
    expect(c.deadLetters).toBe(0);
    expect(first.malformedRecords).toBe(0);
    expect(c.rowsWritten + c.deadLetters).toBe(c.eventsRead);
    expect(c.toolCallRows).toBe(expected.calls.size);
    expect(c.usageRows).toBe(expected.responses);
    expect(await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL')).toBe(0);
    expect(first.skippedRecords).toEqual({ metadata_update: 5, 'message:info': 1, rewind: 1, gemini_without_tokens: 1 });
    const jsonlLines = sessionFiles.filter((f) => f.endsWith('.jsonl')).reduce((n, f) => n + readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '').length, 0);
    expect(first.recordsRead).toBe(jsonlLines + finalMessages(LEGACY_FILE).length);
  });

  it('changes no count when the same folder is imported again', async () => {
    const again = await runImport(geminiCliImporter, [FIXTURES], sink);
    expect(again.filesUnchanged).toBe(3);
    expect(again.eventsEmitted).toBe(0);
    expect((await usageTotals())['responses']).toBe(expected.responses);
  });

  it('imports a growing session incrementally: only the events its new lines complete are written', async () => {
    const lines = readFileSync(MAIN_FILE, 'utf8').split('\n').filter((l) => l !== '');
    // Cut after line 8: g-2 holds write_file only; line 9 is g-2 again with run_shell_command merged in.
    const dir = join(tmp.dir, 'tmp', P1, 'chats');
    mkdirSync(dir, { recursive: true });
    const copy = join(dir, 'session-2026-04-29T21-39-7c1e4a2b.jsonl');
    writeFileSync(copy, lines.slice(0, 8).join('\n') + '\n' + (lines[8] ?? '').slice(0, 40));
    const grown1 = await runImport(geminiCliImporter, [tmp.dir], sink);
    expect(grown1.eventsEmitted).toBe(2 + 3); // g-1, g-2 usage; read_file, replace, write_file
    expect(grown1.counts.duplicatesSkipped).toBe(5); // the same ids as the fixture's
    appendFileSync(copy, (lines[8] ?? '').slice(40) + '\n' + lines.slice(9).join('\n') + '\n');
    const grown2 = await runImport(geminiCliImporter, [tmp.dir], sink);
    expect(grown2.eventsAlreadyImported).toBe(5);
    expect(grown2.eventsEmitted).toBe(first.eventsEmitted - expectedFigures([SUB_FILE, LEGACY_FILE]).responses - expectedFigures([SUB_FILE, LEGACY_FILE]).calls.size - 5);
    expect(grown2.counts.deadLetters).toBe(0);
    expect(await usageTotals()).toMatchObject({ responses: expected.responses, input: expected.input });
  });
});

describe('the shared Gemini CLI sample', () => {
  const samples = corpusOrSkip('samples/gemini_cli', 'the Gemini CLI sample test (test/importers/gemini-cli.test.ts)');
  it.skipIf(samples === null)('yields its two responses and its one call with the logged figures', () => {
    const file = join(samples ?? '', 'jazzyalex-agent-sessions__stage0_gemini_jsonl_v040.jsonl');
    const parsed = geminiCliImporter.parseFile(file, readFileSync(file));
    expect(parsed.malformed).toEqual([]);
    const events = parsed.events.map((e) => JSON.parse(e.envelope.text) as Obj);
    expect(events.filter((e) => e['type'] === 'usage').map((e) => [e['input_tokens'], e['cache_read_tokens'], e['output_tokens'], e['reasoning_tokens']])).toEqual([
      [11855, 0, 81, 0],
      [12069, 11502, 147, 0],
    ]);
    expect(events.filter((e) => e['type'] === 'tool_call')).toMatchObject([
      { session_id: 'gemini_stage0_jsonl', turn_id: 'g-user-1', tool: 'run_shell_command', status: 'ok', call_id: 'run_shell_command_stage0', input: { command: 'ls -F', description: 'List files in the current directory.' } },
    ]);
    expect(parsed.skipped).toEqual({ metadata_update: 1 });
  });
});
