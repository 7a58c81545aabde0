// The Qwen Code importer: parser units on inline records, then the fixture folder (a real
// ~/.qwen/projects layout) imported into a real embedded ClickHouse and checked against figures
// computed here from the same files by a small reference reader (plain JSON.parse), and by hand.
import { appendFileSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qwenCodeImporter } from '../../src/importers/qwen-code/index.ts';
import { callOutcome, parseQwenFile } from '../../src/importers/qwen-code/parser.ts';
import { defaultQwenPaths, isChatRecording, listQwenFiles } from '../../src/importers/qwen-code/paths.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURES = new URL('./fixtures-qwen-code/', import.meta.url).pathname;
// Rows of the fixture folder's import: the tests that import files of their own (a damaged line,
// redaction) add rows beside them, and the tests pass in any order.
const OF_FIXTURES = `startsWith(source, '${FIXTURES}')`;
const USAGE_OF_FIXTURES = `startsWith(origin, '${FIXTURES}')`;
const S1 = '5b0c1e8a-3f4d-4c2a-9e71-8d2f6a4b3c10';
const FORK = 'c2a9e4d1-7b36-4f05-a8e2-6d1f0b9c5e47';
const CHATS = join(FIXTURES, 'projects', '-home-mei-src-ledger', 'chats');
const MAIN_FILE = join(CHATS, `${S1}.jsonl`);
const FORK_FILE = join(CHATS, `${FORK}.jsonl`);

type Obj = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Inline records, shaped like Qwen Code 0.24 ChatRecords (members the parser ignores left out).

const BASE = { sessionId: 'sess-1', cwd: '/w/app', version: '0.24.7', gitBranch: 'main' };

function user(uuid: string, extra: Obj = {}): Obj {
  return { uuid, parentUuid: null, ...BASE, timestamp: '2026-05-01T10:00:00.000Z', type: 'user', message: { role: 'user', parts: [{ text: 'run the tests' }] }, ...extra };
}

function assistant(uuid: string, parts: unknown[], usage?: unknown, extra: Obj = {}): Obj {
  return { uuid, parentUuid: null, ...BASE, timestamp: '2026-05-01T10:00:02.000Z', type: 'assistant', model: 'qwen3-coder-plus', message: { role: 'model', parts }, ...(usage === undefined ? {} : { usageMetadata: usage }), ...extra };
}

function fc(id: string, name: string, args: unknown = { command: 'npm test' }): Obj {
  return { functionCall: { id, name, args } };
}

function result(callId: string, status: string | undefined, response: Obj, extra: Obj = {}): Obj {
  return {
    uuid: `r-${callId}`,
    parentUuid: null,
    ...BASE,
    timestamp: '2026-05-01T10:00:05.500Z',
    type: 'tool_result',
    message: { role: 'user', parts: [{ functionResponse: { id: callId, name: 'run_shell_command', response } }] },
    ...(status === undefined ? {} : { toolCallResult: { callId, status, resultDisplay: '', errorType: null } }),
    ...extra,
  };
}

const OPENAI_USAGE = { promptTokenCount: 1000, candidatesTokenCount: 150, cachedContentTokenCount: 600, thoughtsTokenCount: 50, totalTokenCount: 1150 };

function parse(records: readonly (Obj | string)[], path = '/home/u/.qwen/projects/-w-app/chats/sess-1.jsonl') {
  const text = records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
  const parsed = parseQwenFile(path, Buffer.from(text, 'utf8'));
  return { ...parsed, malformed: parsed.malformed ?? [], text, parsedEvents: parsed.events.map((e) => JSON.parse(e.envelope.text) as Obj) };
}

describe('qwen-code paths', () => {
  it('defaults to ~/.qwen, or $QWEN_RUNTIME_DIR', () => {
    expect(defaultQwenPaths({}, '/home/u')).toEqual(['/home/u/.qwen']);
    expect(defaultQwenPaths({ QWEN_RUNTIME_DIR: '/data/qwen' }, '/home/u')).toEqual(['/data/qwen']);
    expect(defaultQwenPaths({ QWEN_RUNTIME_DIR: '~/rt' }, '/home/u')).toEqual(['/home/u/rt']);
  });
  it('reads the .jsonl files directly in a chats/ folder, under projects/ and the older tmp/', () => {
    expect(isChatRecording('/h/.qwen/projects/-w-app/chats/abc.jsonl')).toBe(true);
    expect(isChatRecording('/h/.qwen/tmp/9f2e/chats/abc.jsonl')).toBe(true);
    expect(isChatRecording('/h/.qwen/projects/-w-app/abc.jsonl')).toBe(false);
    expect(isChatRecording('/h/.qwen/projects/-w-app/chats/abc.json')).toBe(false);
    expect(listQwenFiles([FIXTURES])).toEqual([MAIN_FILE, FORK_FILE].sort());
  });
});

describe('qwen-code parser', () => {
  it('reads usage as the OpenAI-compatible path logs it: prompt includes cached, candidates include thoughts', () => {
    const p = parse([user('u1'), assistant('a1', [{ text: 'ok' }], OPENAI_USAGE, { contextWindowSize: 131072 })]);
    expect(p.malformed).toEqual([]);
    expect(p.parsedEvents).toEqual([
      {
        schema: 'toolcanon.event/v1',
        type: 'usage',
        event_id: expect.any(String),
        ts: '2026-05-01T10:00:02.000Z',
        harness: 'qwen_code',
        session_id: 'sess-1',
        turn_id: 'u1',
        model: 'qwen3-coder-plus',
        request_id: 'a1',
        input_tokens: 1000,
        output_tokens: 150,
        cache_read_tokens: 600,
        reasoning_tokens: 50,
        context_window_tokens: 131072,
      },
    ]);
  });

  it('adds the thoughts to the output when the figures show them apart (the Gemini path: total = prompt + candidates + thoughts + tool)', () => {
    const gemini = { promptTokenCount: 9000, candidatesTokenCount: 150, cachedContentTokenCount: 0, thoughtsTokenCount: 50, toolUsePromptTokenCount: 20, totalTokenCount: 9220 };
    const [u] = parse([assistant('a1', [], gemini)]).parsedEvents;
    expect(u).toMatchObject({ input_tokens: 9020, output_tokens: 200, reasoning_tokens: 50, cache_read_tokens: 0 });
    // The same figures with an OpenAI total (prompt + completion) keep the thoughts inside.
    const [v] = parse([assistant('a1', [], { ...gemini, toolUsePromptTokenCount: 0, totalTokenCount: 9150 })]).parsedEvents;
    expect(v).toMatchObject({ input_tokens: 9000, output_tokens: 150, reasoning_tokens: 50 });
  });

  it('counts a usage with only a total, and dead-letters figures that are no counts or contradict each other', () => {
    const p = parse([
      assistant('a1', [], { totalTokenCount: 500 }),
      assistant('a2', [], { promptTokenCount: 10, candidatesTokenCount: -1 }),
      assistant('a3', [], { promptTokenCount: 10, candidatesTokenCount: 1, cachedContentTokenCount: 11 }),
      assistant('a4', [], 'lots'),
    ]);
    expect(p.events).toEqual([]);
    expect(p.skipped).toEqual({ usage_without_breakdown: 1 });
    expect(p.malformed.map((m) => [m.line, m.problem])).toEqual([
      [2, 'malformed:usage'],
      [3, 'malformed:usage'],
      [4, 'malformed:usage'],
    ]);
    expect(p.malformed[0]?.detail).toContain('candidatesTokenCount');
    expect(p.malformed[1]?.detail).toContain('exceeds');
  });

  it('joins each functionCall to its tool_result: status, output, error, duration from the two records', () => {
    const p = parse([
      user('u1'),
      assistant('a1', [fc('c1', 'run_shell_command'), fc('c2', 'read_file', { file_path: '/w/app/a.ts' }), fc('c3', 'edit', { file_path: '/w/app/a.ts' })]),
      result('c1', 'error', { error: 'Command: npm test\nExit Code: 1' }),
      result('c2', 'success', { output: 'line 1\nline 2' }),
      result('c3', 'cancelled', { error: '[Operation Cancelled] Reason: User did not allow tool call' }),
    ]);
    expect(p.malformed).toEqual([]);
    expect(p.parsedEvents.map((e) => [e['call_id'], e['tool'], e['status'], e['error'], e['output'], e['duration_ms'], e['turn_id'], p.events[p.parsedEvents.indexOf(e)]?.source.split(':').pop()])).toEqual([
      ['c1', 'run_shell_command', 'error', 'Command: npm test', 'Command: npm test\nExit Code: 1', 3500, 'u1', '3'],
      ['c2', 'read_file', 'ok', undefined, 'line 1\nline 2', 3500, 'u1', '4'],
      ['c3', 'edit', 'error', 'cancelled: [Operation Cancelled] Reason: User did not allow tool call', '[Operation Cancelled] Reason: User did not allow tool call', 3500, 'u1', '5'],
    ]);
  });

  it('keeps the raw args byte for byte (key order, big integers, escapes)', () => {
    const raw = `{"uuid":"a1","sessionId":"sess-1","timestamp":"2026-05-01T10:00:02.000Z","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"read_file","args":{"limit":18446744073709551617,"file_path":"caf\\u00e9.ts"}}}]}}`;
    const p = parse([raw, result('c1', 'success', { output: 'x' })]);
    expect(p.events[0]?.envelope.text.endsWith(',"input":{"limit":18446744073709551617,"file_path":"caf\\u00e9.ts"}}')).toBe(true);
  });

  it('refuses args nested deeper than an event may be (the decoder\'s default --max-depth) as one malformed record', () => {
    const deep = '['.repeat(200) + ']'.repeat(200);
    const raw = `{"uuid":"a1","sessionId":"sess-1","timestamp":"2026-05-01T10:00:02.000Z","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"glob","args":{"pattern":${deep}}}}]}}`;
    const p = parse([raw]);
    expect(p.events).toEqual([]);
    expect(p.malformed.map((m) => [m.line, m.problem, m.raw])).toEqual([[1, 'too_deep', raw]]);
  });

  it('hands out a call still without a result at the end as pending, completed by its own line', () => {
    const p = parse([assistant('a1', [fc('c1', 'web_fetch', { url: 'https://x.example' })])]);
    expect(p.parsedEvents).toMatchObject([{ call_id: 'c1', status: 'pending', input: { url: 'https://x.example' } }]);
    expect(p.parsedEvents[0]).not.toHaveProperty('output');
    expect(p.events[0]?.source.endsWith(':1')).toBe(true);
    expect(p.skipped).toEqual({});
  });

  it('reads a result without toolCallResult from its functionResponse, and a running status as pending', () => {
    expect(callOutcome({ status: undefined, error: undefined })).toEqual({ status: 'ok' });
    expect(callOutcome({ status: undefined, error: 'boom\nmore' })).toEqual({ status: 'error', error: 'boom' });
    expect(callOutcome({ status: 'executing', error: undefined })).toEqual({ status: 'pending' });
    const p = parse([assistant('a1', [fc('c1', 'glob', { pattern: '*.ts' })]), result('c1', undefined, { error: 'No files found' })]);
    expect(p.parsedEvents).toMatchObject([{ status: 'error', error: 'No files found' }]);
  });

  it('counts results without a call, repeated calls and repeated results; reads an MCP name as Qwen Code registers it', () => {
    const p = parse([
      result('ghost', 'success', { output: 'x' }),
      assistant('a1', [fc('c1', 'mcp__github__get_issue', { owner: 'o', repo: 'r', issue_number: 1 })]),
      assistant('a2', [fc('c1', 'mcp__github__get_issue')]),
      result('c1', 'success', { output: '#1' }),
      result('c1', 'success', { output: '#1' }),
    ]);
    expect(p.skipped).toEqual({ tool_result_without_call: 1, repeated_call: 1, repeated_tool_result: 1 });
    expect(p.parsedEvents).toMatchObject([{ call_id: 'c1', tool: 'mcp__github__get_issue', status: 'ok', output: '#1' }]);
  });

  it('gives subagent records their agent id and the main turn, and skips the copies /branch made', () => {
    const p = parse([
      user('u1'),
      assistant('a1', [fc('c1', 'glob', { pattern: '*.md' })], OPENAI_USAGE, { agentId: 'explore-7f3c', isSidechain: true }),
      result('c1', 'success', { output: 'README.md' }, { agentId: 'explore-7f3c' }),
      assistant('a0', [], OPENAI_USAGE, { forkedFrom: { sessionId: 'parent', messageUuid: 'a0' } }),
      user('u2', { subtype: 'notification' }),
      assistant('a2', [], OPENAI_USAGE),
    ]);
    expect(p.parsedEvents.map((e) => [e['type'], e['agent_id'], e['turn_id']])).toEqual([
      ['usage', 'explore-7f3c', 'u1'],
      ['tool_call', 'explore-7f3c', 'u1'],
      ['usage', undefined, 'u1'],
    ]);
    expect(p.skipped).toEqual({ forked_copy: 1 });
  });

  it('makes each unreadable record a malformed record with its line and bytes, and counts what it skips on purpose', () => {
    const p = parse([
      '{"uuid":"x","type":"assistant",',
      '[1,2]',
      { uuid: 'y', sessionId: 'sess-1' },
      { uuid: 'z', type: 'summary', sessionId: 'sess-1' },
      { uuid: 's', type: 'system', subtype: 'ui_telemetry', sessionId: 'sess-1' },
      assistant('a1', [{ text: 'only text' }]),
      assistant('a2', [fc('c1', 'glob')], OPENAI_USAGE, { timestamp: 'yesterday' }),
      assistant('a3', [{ functionCall: { name: 'glob', args: {} } }, { functionCall: { id: 'c9', name: 'glob', args: 'a string' } }]),
      assistant('a4', [], OPENAI_USAGE, { sessionId: 42 }),
      { ...result('c5', 'done', { output: '' }) },
    ]);
    expect(p.malformed.map((m) => [m.line, m.problem])).toEqual([
      [1, 'invalid_json'],
      [2, 'not_an_object'],
      [3, 'malformed:record'],
      [7, 'bad_timestamp'],
      // Two bad parts of one line are one dead letter (its bytes are the line's).
      [8, 'malformed:function_call'],
      [9, 'malformed:session_id'],
      [10, 'malformed:tool_result'],
    ]);
    const lines = p.text.split('\n');
    for (const m of p.malformed) expect(m.raw).toBe(lines[m.line - 1]);
    expect(p.skipped).toEqual({ 'unknown_type:summary': 1, 'system:ui_telemetry': 1, assistant_without_usage_or_calls: 1 });
    expect(p.events).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// The fixture folder. The reference below reads the files with JSON.parse and the rules of the
// importer's README, independently of its parser.

interface Expected {
  responses: number;
  input: number;
  output: number;
  cacheRead: number;
  reasoning: number;
  calls: Map<string, { name: string; status: string; session: string; args: unknown }>;
  perSession: Map<string, { input: number; output: number }>;
}

function expectedFigures(files: readonly string[]): Expected {
  const e: Expected = { responses: 0, input: 0, output: 0, cacheRead: 0, reasoning: 0, calls: new Map(), perSession: new Map() };
  for (const file of files) {
    const records = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Obj);
    const statusOf = new Map<string, string>();
    for (const r of records) {
      const tcr = r['toolCallResult'] as Obj | undefined;
      if (r['type'] === 'tool_result' && tcr) statusOf.set(String(tcr['callId']), String(tcr['status']));
    }
    for (const r of records) {
      if (r['type'] !== 'assistant' || r['forkedFrom'] !== undefined) continue;
      const session = String(r['sessionId']);
      const u = r['usageMetadata'] as Record<string, number> | undefined;
      if (u) {
        const prompt = u['promptTokenCount'] ?? 0;
        const cand = u['candidatesTokenCount'] ?? 0;
        const thoughts = u['thoughtsTokenCount'] ?? 0;
        const tool = u['toolUsePromptTokenCount'] ?? 0;
        const apart = thoughts > 0 && u['totalTokenCount'] === prompt + cand + thoughts + tool;
        const input = prompt + tool;
        const output = cand + (apart ? thoughts : 0);
        e.responses++;
        e.input += input;
        e.output += output;
        e.cacheRead += u['cachedContentTokenCount'] ?? 0;
        e.reasoning += thoughts;
        const s = e.perSession.get(session) ?? { input: 0, output: 0 };
        e.perSession.set(session, { input: s.input + input, output: s.output + output });
      }
      const parts = ((r['message'] as Obj | undefined)?.['parts'] ?? []) as Obj[];
      for (const p of parts) {
        const call = p['functionCall'] as Obj | undefined;
        if (!call) continue;
        const st = statusOf.get(String(call['id']));
        const status = st === undefined ? 'pending' : st === 'success' ? 'ok' : 'error';
        e.calls.set(String(call['id']), { name: String(call['name']), status, session, args: call['args'] });
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

describe('qwen-code import of the fixture folder into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let first: ImportSummary;
  const files = walk(FIXTURES).filter((p) => p.includes('/chats/'));
  const expected = expectedFigures(files);
  const tmp = makeTempDir('qwen-import');

  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('qwen-code'));
    first = await runImport(qwenCodeImporter, [FIXTURES], sink);
  });
  afterAll(async () => {
    await cleanup?.();
    tmp.cleanup();
  });

  async function usageTotals(): Promise<Record<string, number>> {
    const [row] = await sink.queryRows<Record<string, string>>(
      `SELECT count() AS responses, sum(input_tokens) AS input, sum(output_tokens) AS output, sum(cache_read_tokens) AS cacheRead, sum(reasoning_tokens) AS reasoning
       FROM token_usage FINAL WHERE source = 'observed' AND harness = 'qwen_code' AND ${USAGE_OF_FIXTURES}`,
    );
    return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
  }

  it('the independent figures are what the fixture was made to hold (summed by hand in the fixture README)', () => {
    expect(files.map((f) => f.split('/').pop())).toEqual([`${S1}.jsonl`, `${FORK}.jsonl`]);
    const { calls, perSession, ...sums } = expected;
    expect(sums).toEqual({ responses: 8, input: 86_290, output: 1_038, cacheRead: 68_736, reasoning: 234 });
    expect(Object.fromEntries(perSession)).toEqual({ [S1]: { input: 72_990, output: 1_010 }, [FORK]: { input: 13_300, output: 28 } });
    expect(calls.size).toBe(8);
  });

  it('stores one usage row per response with the token sums computed from the files, per session too', async () => {
    const { calls: _calls, perSession, ...sums } = expected;
    expect(await usageTotals()).toEqual(sums);
    const rows = await sink.queryRows<{ session_id: string; input: string; output: string }>(
      `SELECT session_id, sum(input_tokens) AS input, sum(output_tokens) AS output FROM token_usage FINAL WHERE source = 'observed' AND ${USAGE_OF_FIXTURES} GROUP BY session_id ORDER BY session_id`,
    );
    expect(Object.fromEntries(rows.map((r) => [r.session_id, { input: Number(r.input), output: Number(r.output) }]))).toEqual(Object.fromEntries(perSession));
    // The convention (input includes cached, output includes reasoning): context = input + output.
    const [a1] = await sink.queryRows<{ context_tokens: string; context_window_tokens: string }>(
      "SELECT context_tokens, context_window_tokens FROM token_usage FINAL WHERE source = 'observed' AND request_id = '0f7d2c1a-1111-4a00-8000-000000000003'",
    );
    expect(a1).toEqual({ context_tokens: String(12_840 + 212), context_window_tokens: '1000000' });
  });

  it('stores every tool call once, with the status, namespace and projection the files give', async () => {
    const statuses = await sink.queryRows<{ status: string; n: string }>(`SELECT status, count() AS n FROM tool_calls FINAL WHERE harness = 'qwen_code' AND ${OF_FIXTURES} GROUP BY status ORDER BY status`);
    const want: Record<string, number> = {};
    for (const c of expected.calls.values()) want[c.status] = (want[c.status] ?? 0) + 1;
    expect(Object.fromEntries(statuses.map((r) => [r.status, Number(r.n)]))).toEqual(want);
    expect(want).toEqual({ ok: 5, error: 2, pending: 1 });
    const rows = await sink.queryRows<Record<string, string | null>>(
      `SELECT call_id, namespace, tool_name, kind, mcp_server, mcp_tool, path, \`offset\`, \`limit\`, command, description, directory, pattern, arrayStringConcat(flags, ',') AS flags, session_id, agent_id, error, duration_ms FROM tool_calls FINAL WHERE ${OF_FIXTURES} ORDER BY call_id`,
    );
    const byCall = Object.fromEntries(rows.map((r) => [r['call_id'], r]));
    expect(byCall['call_8f3a0c2e61d94b7a']).toMatchObject({ namespace: 'qwen_code', kind: 'read', path: '/home/mei/src/ledger/src/money.ts', offset: '0', limit: '200', duration_ms: '81' });
    expect(byCall['call_5d0e6a9b3c2f4e71']).toMatchObject({ kind: 'execute', command: 'npm test -- --run import', description: 'Run the import tests', error: 'Command: npm test -- --run import' });
    expect(byCall['call_a7c4f1e93b8d4026']).toMatchObject({ kind: 'edit', path: '/home/mei/src/ledger/src/import/csv.ts', error: 'cancelled: [Operation Cancelled] Reason: User did not allow tool call' });
    expect(byCall['mcp__github__get_issue-1764494146511-0']).toMatchObject({ namespace: 'mcp', mcp_server: 'github', mcp_tool: 'get_issue', flags: '' });
    expect(byCall['call_e1d2c3b4a5964f80']).toMatchObject({ tool_name: 'glob', pattern: '**/*cents*.ts', agent_id: 'explore-7f3c', session_id: S1 });
    expect(byCall['call_4e3d2c1b0a994f8e']).toMatchObject({ tool_name: 'list_directory', directory: '/home/mei/src/ledger/src/import', session_id: FORK });
    expect(rows.filter((r) => r['flags'] !== '').map((r) => r['call_id'])).toEqual([]);
  });

  it('keeps each raw input byte for byte as the file logged it', async () => {
    const rows = await sink.queryRows<{ call_id: string; raw_input: string; source: string }>(`SELECT call_id, raw_input, source FROM tool_calls FINAL WHERE ${OF_FIXTURES}`);
    expect(rows).toHaveLength(expected.calls.size);
    for (const r of rows) {
      const [file] = r.source.split(/:(?=\d+$)/);
      expect(readFileSync(file ?? '', 'utf8'), r.call_id).toContain(`"args":${r.raw_input}`);
      expect(JSON.parse(r.raw_input), r.call_id).toEqual(expected.calls.get(r.call_id)?.args);
    }
  });

  it('accounts for every event and record: no dead letter, the skipped records listed in the README', async () => {
    const c = first.counts;
    expect(first.filesSeen).toBe(2);
    expect(first.eventsEmitted).toBe(expected.responses + expected.calls.size);
    expect(c.eventsRead).toBe(first.eventsEmitted);
    expect(c.rowsWritten + c.deadLetters).toBe(c.eventsRead);
    expect(c.deadLetters).toBe(0);
    expect(first.malformedRecords).toBe(0);
    expect(c.toolCallRows).toBe(expected.calls.size);
    expect(c.usageRows).toBe(expected.responses);
    expect(await countOf(sink, `SELECT count() AS n FROM dead_letters FINAL WHERE ${OF_FIXTURES}`)).toBe(0);
    expect(first.skippedRecords).toEqual({ 'system:session_source': 1, 'system:ui_telemetry': 1, 'system:custom_title': 1, forked_copy: 4 });
    const lines = files.reduce((n, f) => n + readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '').length, 0);
    expect(first.recordsRead).toBe(lines);
  });

  it('changes no count when the same folder is imported again', async () => {
    const again = await runImport(qwenCodeImporter, [FIXTURES], sink);
    expect(again.filesUnchanged).toBe(2);
    expect(again.eventsEmitted).toBe(0);
    expect((await usageTotals())['responses']).toBe(expected.responses);
  });

  it('writes a damaged line as one dead letter with its bytes and file:line, beside the records that still read', async () => {
    const dir = join(tmp.dir, 'damaged', 'chats');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'd1a2m3a4-0000-4000-8000-000000000001.jsonl');
    // A session of its own: under the fork's id its rows would replace the fixture's (same ids).
    const good = readFileSync(FORK_FILE, 'utf8').replaceAll(FORK, 'd1a2m3a4-0000-4000-8000-000000000001').split('\n').filter((l) => l !== '');
    const junk = '{"uuid":"9e8d","type":"assistant","usageMetadata":{"promptTokenCount":';
    writeFileSync(file, [...good.slice(0, 5), junk, ...good.slice(5)].join('\n') + '\n');
    const s = await runImport(qwenCodeImporter, [file], sink);
    expect(s.malformedRecords).toBe(1);
    const [dl] = await sink.queryRows<{ reason: string; source: string; raw: string }>(`SELECT reason, source, raw FROM dead_letters FINAL WHERE source = '${file}:6'`);
    expect(dl).toMatchObject({ reason: 'import_malformed', raw: junk });
    // The fork's one request and one call are still read.
    expect(s.eventsEmitted).toBe(2);
    expect(s.counts.deadLetters).toBe(1);
    expect(s.skippedRecords).toEqual({ forked_copy: 4 });
  });

  it('redacts secrets on the import path: in a call\'s raw input and output, and in a dead letter\'s bytes', async () => {
    const key = 'sk-ant-api03-dozKV6hsDOZalwHS3epALW7itEP0bmxIT4fqBMX8juFQ1cnyJU5grCNY9kvGR2dozKV6hsDOZalwHS3epALW7itEP0bmxAA';
    const dir = join(tmp.dir, 'secret', 'chats');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'sec-0000-4000-8000-000000000001.jsonl');
    const lines = [
      assistant('sec-a1', [fc('sec-c1', 'run_shell_command', { command: `curl -H "x-api-key: ${key}" https://api.anthropic.com`, description: 'Call the API' })]),
      result('sec-c1', 'success', { output: `echoed ${key}` }),
      `{"uuid":"sec-bad","type":"assistant","model":"${key}`,
    ].map((r) => (typeof r === 'string' ? r : JSON.stringify(r)));
    writeFileSync(file, lines.join('\n') + '\n');
    const s = await runImport(qwenCodeImporter, [file], sink);
    expect(s.malformedRecords).toBe(1);
    const [row] = await sink.queryRows<{ raw_input: string; command: string }>("SELECT raw_input, command FROM tool_calls FINAL WHERE call_id = 'sec-c1'");
    expect(row?.raw_input).toContain('[REDACTED:anthropic_key');
    expect(row?.command).toContain('[REDACTED:anthropic_key');
    const [dl] = await sink.queryRows<{ raw: string }>(`SELECT raw FROM dead_letters FINAL WHERE source = '${file}:3'`);
    expect(dl?.raw).toContain('[REDACTED:anthropic_key');
    const all = await sink.queryRows<{ n: string }>(`SELECT count() AS n FROM tool_calls FINAL WHERE position(raw_input, '${key}') > 0 OR position(command, '${key}') > 0`);
    expect(all[0]?.n).toBe('0');
    expect(await countOf(sink, `SELECT count() AS n FROM dead_letters FINAL WHERE position(raw, '${key}') > 0`)).toBe(0);
  });
});

describe('qwen-code incremental import of a growing recording', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  const expected = expectedFigures([MAIN_FILE]);
  const tmp = makeTempDir('qwen-grow');

  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('qwen-grow'));
  });
  afterAll(async () => {
    await cleanup?.();
    tmp.cleanup();
  });

  async function usageTotals(): Promise<Record<string, number>> {
    const [row] = await sink.queryRows<Record<string, string>>(
      `SELECT count() AS responses, sum(input_tokens) AS input, sum(output_tokens) AS output, sum(cache_read_tokens) AS cacheRead, sum(reasoning_tokens) AS reasoning
       FROM token_usage FINAL WHERE source = 'observed' AND harness = 'qwen_code'`,
    );
    return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
  }

  it('imports a growing recording incrementally: a pending call becomes its result, nothing doubles', async () => {
    const lines = readFileSync(MAIN_FILE, 'utf8').split('\n').filter((l) => l !== '');
    const dir = join(tmp.dir, 'projects', '-home-mei-src-ledger', 'chats');
    mkdirSync(dir, { recursive: true });
    const copy = join(dir, `${S1}.jsonl`);
    // Cut after line 7 (run_shell_command asked for) and in the middle of line 8 (its result).
    writeFileSync(copy, lines.slice(0, 7).join('\n') + '\n' + (lines[7] ?? '').slice(0, 50));
    const grown1 = await runImport(qwenCodeImporter, [tmp.dir], sink);
    // a1, a2 usage; read_file, grep_search; run_shell_command still pending.
    expect(grown1.eventsEmitted).toBe(5);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE call_id = 'call_5d0e6a9b3c2f4e71' AND status = 'pending'")).toBe(1);
    appendFileSync(copy, (lines[7] ?? '').slice(50) + '\n' + lines.slice(8).join('\n') + '\n');
    const grown2 = await runImport(qwenCodeImporter, [tmp.dir], sink);
    expect(grown2.eventsAlreadyImported).toBe(4);
    expect(grown2.counts.deadLetters).toBe(0);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE call_id = 'call_5d0e6a9b3c2f4e71'")).toBe(1);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE call_id = 'call_5d0e6a9b3c2f4e71' AND status = 'error'")).toBe(1);
    const { calls: _c, perSession: _p, ...sums } = expected;
    expect(await usageTotals()).toEqual(sums);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE harness = 'qwen_code'")).toBe(expected.calls.size);
  });

});
