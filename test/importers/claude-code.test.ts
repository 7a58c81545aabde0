// The Claude Code importer: parser units on inline records, then the real corpus imported into a
// real embedded ClickHouse, checked against the reference figures of ../shared/corpus/README.md
// (skipped loudly without the corpus, a failure under CI=true: see test/helpers/corpus.ts).
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodeImporter } from '../../src/importers/claude-code/index.ts';
import { MAX_EMITTED_EVENT_BYTES, parseTranscript } from '../../src/importers/claude-code/parser.ts';
import { defaultProjectsDirs, fallbackSessionId, listTranscriptFiles } from '../../src/importers/claude-code/paths.ts';
import { stableEventId } from '../../src/importers/envelope.ts';
import { splitCompleteLines } from '../../src/importers/lines.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const CORPUS_DIR = corpusOrSkip('claude-code', 'the Claude Code corpus tests (test/importers/claude-code.test.ts)');
/** The corpus folder; read only by tests that are skipped when it is absent. */
const CORPUS = CORPUS_DIR ?? '';
const SESSION = 'sess-1';

// ---------------------------------------------------------------------------------------------
// Inline records, shaped like Claude Code 2.1.x lines (members the parser ignores left out).

interface Line {
  readonly [key: string]: unknown;
}

function prompt(uuid: string, content: unknown = 'do the thing', extra: Line = {}): Line {
  return { type: 'user', uuid, sessionId: SESSION, timestamp: '2026-02-10T21:00:00.000Z', message: { role: 'user', content }, ...extra };
}

function assistant(uuid: string, ts: string, msgId: string, reqId: string, block: unknown, outputTokens: number, extra: Line = {}): Line {
  return {
    type: 'assistant',
    uuid,
    sessionId: SESSION,
    timestamp: ts,
    requestId: reqId,
    message: {
      model: 'claude-opus-4-6',
      id: msgId,
      type: 'message',
      role: 'assistant',
      content: [block],
      usage: { input_tokens: 3, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: outputTokens },
    },
    ...extra,
  };
}

function toolUse(id: string, name: string, input: unknown = { command: 'ls' }): Line {
  return { type: 'tool_use', id, name, input };
}

function toolResult(uuid: string, ts: string, toolUseId: string, content: unknown, isError?: boolean): Line {
  const block = { type: 'tool_result', tool_use_id: toolUseId, content, ...(isError === undefined ? {} : { is_error: isError }) };
  return { type: 'user', uuid, sessionId: SESSION, timestamp: ts, message: { role: 'user', content: [block] } };
}

function parseLines(records: readonly (Line | string)[], path = '/p/sess-1.jsonl') {
  const text = records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
  const data = Buffer.from(text, 'utf8');
  const { lines } = splitCompleteLines(data);
  const parsed = parseTranscript(lines, { path, fallbackSessionId: fallbackSessionId(path) });
  return { ...parsed, lines, parsedEvents: parsed.events.map((e) => JSON.parse(e.envelope.text) as Record<string, unknown>) };
}

describe('parseTranscript (inline records)', () => {
  it('keeps one usage per streamed response, with the final output count, completed by its last line', () => {
    const r = parseLines([
      prompt('p1'),
      assistant('a1', '2026-02-10T21:00:01.000Z', 'msg_1', 'req_1', { type: 'thinking', thinking: '…' }, 1),
      assistant('a2', '2026-02-10T21:00:02.000Z', 'msg_1', 'req_1', { type: 'text', text: 'Running it.' }, 9),
      assistant('a3', '2026-02-10T21:00:03.000Z', 'msg_1', 'req_1', toolUse('toolu_1', 'Bash'), 120),
      toolResult('u1', '2026-02-10T21:00:04.250Z', 'toolu_1', 'file-a\nfile-b'),
    ]);
    const usage = r.parsedEvents.filter((e) => e['type'] === 'usage');
    expect(usage).toEqual([
      {
        schema: 'toolcanon.event/v1',
        type: 'usage',
        event_id: stableEventId('claude_code', SESSION, 'usage', 'req_1'),
        ts: '2026-02-10T21:00:01.000Z',
        harness: 'claude_code',
        session_id: SESSION,
        turn_id: 'p1',
        model: 'claude-opus-4-6',
        request_id: 'req_1',
        input_tokens: 3,
        output_tokens: 120,
        cache_read_tokens: 2000,
        cache_write_tokens: 100,
      },
    ]);
    const usageEvent = r.events[r.parsedEvents.indexOf(usage[0] as Record<string, unknown>)];
    expect(usageEvent?.source).toBe('/p/sess-1.jsonl:4');
    expect(usageEvent?.endOffset).toBe(r.lines[3]?.endOffset);
    // Usage first (the request), then its tool call (completed later by the result line).
    expect(r.parsedEvents.map((e) => e['type'])).toEqual(['usage', 'tool_call']);
    expect(r.parsedEvents[1]).toMatchObject({ tool: 'Bash', status: 'ok', output: 'file-a\nfile-b', duration_ms: 1250, turn_id: 'p1', call_id: 'toolu_1' });
    expect(r.events[1]?.source).toBe('/p/sess-1.jsonl:5');
  });

  it('keeps the largest output count when a later line of a response carries a smaller one', () => {
    const r = parseLines([
      assistant('a1', '2026-02-10T21:00:01.000Z', 'msg_1', 'req_1', { type: 'text', text: 'x' }, 300),
      assistant('a2', '2026-02-10T21:00:02.000Z', 'msg_1', 'req_1', { type: 'text', text: 'y' }, 7),
      assistant('a3', '2026-02-10T21:00:03.000Z', 'msg_2', 'req_2', { type: 'text', text: 'z' }, 5),
    ]);
    expect(r.parsedEvents.map((e) => [e['request_id'], e['output_tokens']])).toEqual([
      ['req_1', 300],
      ['req_2', 5],
    ]);
    expect(r.events[0]?.source).toBe('/p/sess-1.jsonl:2');
  });

  it('ignores progress lines, which embed copies of subagent messages', () => {
    const embedded = assistant('s1', '2026-02-10T21:00:01.000Z', 'msg_sub', 'req_sub', toolUse('toolu_sub', 'Read', { file_path: 'a' }), 50, { isSidechain: true, agentId: 'a12' });
    const r = parseLines([
      prompt('p1'),
      { type: 'progress', sessionId: SESSION, timestamp: '2026-02-10T21:00:01.000Z', uuid: 'g1', data: { type: 'agent_progress', message: embedded } },
      { type: 'progress', sessionId: SESSION, timestamp: '2026-02-10T21:00:02.000Z', uuid: 'g2', data: { type: 'agent_progress', message: toolResult('s2', '2026-02-10T21:00:02.000Z', 'toolu_sub', 'ok') } },
    ]);
    expect(r.events).toEqual([]);
    expect(r.skipped).toEqual({ progress: 2 });
  });

  it('turns an error tool_result with blocks into status error, text output, image count and first-line error', () => {
    const r = parseLines([
      prompt('p1'),
      assistant('a1', '2026-02-10T21:00:01.000Z', 'msg_1', 'req_1', toolUse('toolu_1', 'mcp__playwright__browser_take_screenshot', {}), 40),
      toolResult('u1', '2026-02-10T21:00:03.000Z', 'toolu_1', [
        { type: 'text', text: 'Exit code 1\nboom' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'text', text: 'more' },
      ], true),
    ]);
    expect(r.parsedEvents[1]).toEqual({
      schema: 'toolcanon.event/v1',
      type: 'tool_call',
      event_id: stableEventId('claude_code', SESSION, 'toolu_1'),
      ts: '2026-02-10T21:00:01.000Z',
      harness: 'claude_code',
      session_id: SESSION,
      turn_id: 'p1',
      call_id: 'toolu_1',
      model: 'claude-opus-4-6',
      tool: 'mcp__playwright__browser_take_screenshot',
      status: 'error',
      output: 'Exit code 1\nboom\nmore',
      error: 'Exit code 1',
      duration_ms: 2000,
      images: 1,
      input: {},
    });
  });

  it('emits an unanswered tool_use as pending, completed by its own line', () => {
    const r = parseLines([prompt('p1'), assistant('a1', '2026-02-10T21:00:01.000Z', 'msg_1', 'req_1', toolUse('toolu_1', 'Read', { file_path: 'x' }), 4)]);
    const call = r.parsedEvents.find((e) => e['type'] === 'tool_call');
    expect(call).toMatchObject({ status: 'pending', call_id: 'toolu_1' });
    expect(call).not.toHaveProperty('output');
    expect(call).not.toHaveProperty('duration_ms');
    expect(r.events[1]?.source).toBe('/p/sess-1.jsonl:2');
  });

  it('splices the raw input verbatim: big integers, escapes and key order survive', () => {
    const line = `{"type":"assistant","uuid":"a1","sessionId":"${SESSION}","timestamp":"2026-02-10T21:00:01.000Z","requestId":"req_1","message":{"model":"m","id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"offset":12345678901234567890,"file_path":"caf\\u00e9 \\"q\\".txt","limit":-0}}],"usage":{"input_tokens":1,"output_tokens":2}}}`;
    const r = parseLines([line]);
    expect(r.events[1]?.envelope.text).toContain('"input":{"offset":12345678901234567890,"file_path":"caf\\u00e9 \\"q\\".txt","limit":-0}}');
  });

  it('starts turns at prompts only: tool results, meta lines, compaction summaries and interrupts keep the turn', () => {
    const r = parseLines([
      prompt('p1'),
      assistant('a1', '2026-02-10T21:00:01.000Z', 'msg_1', 'req_1', toolUse('toolu_1', 'Bash'), 4),
      toolResult('u1', '2026-02-10T21:00:02.000Z', 'toolu_1', 'ok'),
      prompt('m1', '<system-reminder>x</system-reminder>', { isMeta: true }),
      prompt('c1', 'This session is being continued…', { isCompactSummary: true }),
      assistant('a2', '2026-02-10T21:00:03.000Z', 'msg_2', 'req_2', toolUse('toolu_2', 'Bash'), 4),
      prompt('i1', [{ type: 'text', text: '[Request interrupted by user for tool use]' }]),
      assistant('a3', '2026-02-10T21:00:04.000Z', 'msg_3', 'req_3', toolUse('toolu_3', 'Bash'), 4),
      prompt('p2', [{ type: 'text', text: 'now this' }]),
      assistant('a4', '2026-02-10T21:00:05.000Z', 'msg_4', 'req_4', toolUse('toolu_4', 'Bash'), 4),
    ]);
    const turnOf = (id: string) => r.parsedEvents.find((e) => e['call_id'] === id)?.['turn_id'];
    expect([turnOf('toolu_1'), turnOf('toolu_2'), turnOf('toolu_3'), turnOf('toolu_4')]).toEqual(['p1', 'p1', 'p1', 'p2']);
  });

  it('returns unreadable lines as malformed (line, bytes), counts skipped record types, never throws', () => {
    const records: (Line | string)[] = [
      '{"type":"assistant", not json',
      '[1,2,3]',
      '{"no_type":true}',
      '{"type":"assistant","message":"not an object"}',
      '{"type":"hologram","payload":{}}',
      '{"type":"file-history-snapshot","messageId":"x"}',
      assistant('a1', 'yesterday-ish', 'msg_1', 'req_1', toolUse('toolu_1', 'Bash'), 4),
      assistant('a2', '2026-02-10T21:00:01.000Z', 'msg_2', 'req_2', { type: 'text', text: 'x' }, 4, { message: { model: '<synthetic>', id: 'msg_2', content: [], usage: { input_tokens: 0, output_tokens: 0 } } }),
      toolResult('u1', '2026-02-10T21:00:02.000Z', 'toolu_elsewhere', 'ok'),
      { type: 'user', sessionId: SESSION, message: { role: 'user', content: 42 } },
      assistant('a3', '2026-02-10T21:00:03.000Z', 'msg_3', 'req_3', { type: 'tool_use', name: 'Bash', input: {} }, 4),
      assistant('a4', '2026-02-10T21:00:04.000Z', 'msg_4', 'req_4', { type: 'text', text: 'y' }, 4, { message: { model: 'm', id: 'msg_4', content: [], usage: { input_tokens: -1, output_tokens: 2 } } }),
    ];
    const r = parseLines(records);
    // Line 11's usage is fine: only its tool_use block without an id is malformed.
    expect(r.parsedEvents.map((e) => [e['type'], e['request_id']])).toEqual([['usage', 'req_3']]);
    const texts = records.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
    expect(r.malformed.map((m) => [m.line, m.problem])).toEqual([
      [1, 'invalid_json'],
      [2, 'not_an_object'],
      [3, 'malformed_record'],
      [4, 'malformed_assistant'],
      [7, 'bad_timestamp'],
      [10, 'malformed_user'],
      [11, 'malformed_tool_use'],
      [12, 'bad_usage'],
    ]);
    // Each carries its line's bytes as read and ends where its line ends, like an event.
    for (const m of r.malformed) {
      expect(m.raw).toBe(texts[m.line - 1]);
      expect(m.endOffset).toBe(r.lines.find((l) => l.lineNo === m.line)?.endOffset);
    }
    expect(r.malformed.map((m) => m.detail)).toEqual([
      expect.stringMatching(/^The record is not valid JSON \(.+\)\.$/),
      'The record is JSON but an array, not an object.',
      '`type` is missing, not a string.',
      '`message` is the string "not an object", not an object.',
      '`timestamp` is the string "yesterday-ish", not an ISO 8601 time.',
      '`message.content` is the number 42, not a string or an array.',
      "A tool_use block's `id` is missing, not a non-empty string.",
      '`message.usage.input_tokens` is the number -1, not a non-negative integer.',
    ]);
    // Only the record types skipped on purpose are counters now.
    expect(r.skipped).toEqual({
      'unknown_type:hologram': 1,
      'file-history-snapshot': 1,
      synthetic_usage: 1,
      tool_result_without_tool_use: 1,
    });
  });

  it('returns a usage without message.id as malformed but still reads the tool calls of its line', () => {
    const line = assistant('a1', '2026-02-10T21:00:01.000Z', 'msg_1', 'req_1', toolUse('toolu_1', 'Read', { file_path: 'a' }), 4);
    const r = parseLines([{ ...line, message: { ...(line['message'] as Line), id: undefined } }]);
    expect(r.malformed.map((m) => [m.line, m.problem])).toEqual([[1, 'usage_without_message_id']]);
    expect(r.parsedEvents.map((e) => [e['type'], e['call_id']])).toEqual([['tool_call', 'toolu_1']]);
    expect(r.skipped).toEqual({});
  });

  it.each([
    ['two-byte characters', 'é'.repeat(2 * 1024 * 1024)],
    ['a mix of escapes, emoji and ASCII', 'a"\\\n\u0001é€😀'.repeat(300_000)],
  ])('truncates an output that would make the event too large, and counts it (%s)', (_name, big) => {
    const r = parseLines([
      assistant('a1', '2026-02-10T21:00:01.000Z', 'msg_1', 'req_1', toolUse('toolu_1', 'Read', { file_path: 'big.txt' }), 4),
      toolResult('u1', '2026-02-10T21:00:02.000Z', 'toolu_1', big),
    ]);
    const line = r.events[1]?.envelope.text ?? '';
    const bytes = Buffer.byteLength(line, 'utf8');
    expect(bytes).toBeLessThanOrEqual(MAX_EMITTED_EVENT_BYTES);
    expect(bytes).toBeGreaterThan(MAX_EMITTED_EVENT_BYTES - 8);
    const output = (JSON.parse(line) as { output: string }).output;
    expect(output).toBe(big.slice(0, output.length));
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(output)).toBe(false); // no split pair
    expect(r.skipped).toEqual({ output_truncated: 1 });
  });

  it('keeps a large output that fits whole', () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    const r = parseLines([
      assistant('a1', '2026-02-10T21:00:01.000Z', 'msg_1', 'req_1', toolUse('toolu_1', 'Read', { file_path: 'big.txt' }), 4),
      toolResult('u1', '2026-02-10T21:00:02.000Z', 'toolu_1', big),
    ]);
    expect((JSON.parse(r.events[1]?.envelope.text ?? '') as { output: string }).output).toBe(big);
    expect(r.skipped).toEqual({});
  });

  it('gives a subagent transcript the parent session, and finds transcripts under $CLAUDE_CONFIG_DIR', () => {
    expect(fallbackSessionId('/x/projects/p/abc-123/subagents/agent-a1.jsonl')).toBe('abc-123');
    expect(fallbackSessionId('/x/projects/p/abc-123.jsonl')).toBe('abc-123');
    const r = parseLines([{ ...prompt('p1'), sessionId: undefined }, { ...assistant('a1', '2026-02-10T21:00:01.000Z', 'msg_1', 'req_1', toolUse('toolu_1', 'Bash'), 4), sessionId: undefined }], '/x/p/parent-9/subagents/agent-a1.jsonl');
    expect(r.parsedEvents.map((e) => e['session_id'])).toEqual(['parent-9', 'parent-9']);
    expect(defaultProjectsDirs({ CLAUDE_CONFIG_DIR: '/opt/claude' }, '/home/u')).toEqual(['/opt/claude/projects']);
    expect(defaultProjectsDirs({}, '/home/u', () => false)).toEqual(['/home/u/.claude/projects']);
    expect(defaultProjectsDirs({}, '/home/u', (p) => p === '/home/u/.config/claude/projects')).toEqual(['/home/u/.config/claude/projects']);
    expect(defaultProjectsDirs({}, '/home/u', () => true)).toEqual(['/home/u/.claude/projects', '/home/u/.config/claude/projects']);
  });

  it.skipIf(!CORPUS_DIR)('lists every transcript of the corpus, subagent files included, sorted', () => {
    const files = listTranscriptFiles([CORPUS]).map((f) => f.slice(CORPUS.length + 1));
    expect(files).toEqual([
      'projects/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl',
      'projects/spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl',
      'projects/spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl',
      'projects/spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl',
      'projects/spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl',
      'projects/spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl',
      'projects/spotter/short.jsonl',
      'projects/spotter/tool_heavy.jsonl',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// The corpus, imported for real.

/** What a transcript (or a prefix of it) holds, counted naively from the raw lines. */
function scanRaw(lines: readonly string[]): { toolUses: Set<string>; responses: Set<string> } {
  const toolUses = new Set<string>();
  const responses = new Set<string>();
  for (const text of lines) {
    if (text.trim() === '') continue;
    const o = JSON.parse(text) as { type?: string; requestId?: string; message?: { id?: string; usage?: unknown; content?: { type?: string; id?: string }[] } };
    if (o.type !== 'assistant' || !o.message) continue;
    if (o.message.usage) responses.add(`${o.message.id}/${o.requestId}`);
    for (const b of o.message.content ?? []) if (b.type === 'tool_use' && b.id) toolUses.add(b.id);
  }
  return { toolUses, responses };
}

describe.skipIf(!CORPUS_DIR)('claude-code import of the corpus into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let first: ImportSummary;
  let tmp: ReturnType<typeof makeTempDir>;

  beforeAll(async () => {
    tmp = makeTempDir('claude-import');
    ({ sink, cleanup } = await openTempSink('claude-code'));
    first = await runImport(claudeCodeImporter, [CORPUS], sink);
  });
  afterAll(async () => {
    await cleanup?.();
    tmp?.cleanup();
  });

  async function usageTotals(): Promise<Record<string, number>> {
    const [row] = await sink.queryRows<Record<string, string>>(
      `SELECT count() AS responses, sum(input_tokens) AS input, sum(output_tokens) AS output,
              sum(cache_write_tokens) AS cache_write, sum(cache_read_tokens) AS cache_read
       FROM token_usage FINAL WHERE source = 'observed' AND harness = 'claude_code'`,
    );
    return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
  }

  async function toolsByName(): Promise<Record<string, number>> {
    const rows = await sink.queryRows<{ tool_name: string; n: string }>('SELECT tool_name, count() AS n FROM tool_calls FINAL GROUP BY tool_name');
    return Object.fromEntries(rows.map((r) => [r.tool_name, Number(r.n)]));
  }

  const REFERENCE_USAGE = { responses: 313, input: 488, output: 68_032, cache_write: 985_143, cache_read: 27_459_833 };
  const REFERENCE_TOOLS = { Bash: 154, Read: 90, Edit: 67, Write: 20, Glob: 20, Grep: 17, TaskOutput: 4, WebFetch: 3, Task: 2, AskUserQuestion: 1, WebSearch: 1 };

  it('stores 313 distinct API responses with the reference token sums', async () => {
    expect(await usageTotals()).toEqual(REFERENCE_USAGE);
    // One row per (message.id, requestId): a duplicate would show as a repeated request id.
    expect(await countOf(sink, "SELECT uniqExact(request_id) AS n FROM token_usage FINAL WHERE source = 'observed'")).toBe(313);
  });

  it('stores 379 tool calls, each joined with its result, per tool as in the reference', async () => {
    expect(await toolsByName()).toEqual(REFERENCE_TOOLS);
    expect(await countOf(sink, 'SELECT uniqExact(call_id) AS n FROM tool_calls FINAL')).toBe(379);
    const byStatus = await sink.queryRows<{ status: string; n: string }>('SELECT status, count() AS n FROM tool_calls FINAL GROUP BY status ORDER BY status');
    expect(Object.fromEntries(byStatus.map((r) => [r.status, Number(r.n)]))).toEqual({ error: 22, ok: 357 });
    // Subagent work belongs to the parent session: no session is named after an agent file.
    const sessions = await sink.queryRows<{ session_id: string }>('SELECT DISTINCT session_id FROM tool_calls FINAL ORDER BY session_id');
    expect(sessions.map((r) => r.session_id)).toEqual(['258c7280-ae70-4798-800f-63464d01a85d', '4d5611e5-241a-462a-8d15-5122611a9569', '55604662-cf2a-4331-851a-ec234028f8ca', 'd6e0bada-1959-4eec-a9d2-0bfade768d8f']);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE turn_id = '' OR model = '' OR duration_ms IS NULL")).toBe(0);
  });

  it('accounts for every event: events in = rows out + dead letters, and no dead letters', async () => {
    const c = first.counts;
    expect(first.filesRead).toBe(8);
    expect(first.eventsEmitted).toBe(313 + 379);
    expect(c.eventsRead).toBe(first.eventsEmitted);
    expect(c.deadLetters).toBe(0);
    expect(c.rowsWritten + c.deadLetters).toBe(c.eventsRead);
    expect(c.toolCallRows).toBe(379);
    expect(c.usageRows).toBe(313);
    expect(await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL')).toBe(0);
    expect(first.skippedRecords).toEqual({ progress: 2501, system: 15, 'file-history-snapshot': 46, 'queue-operation': 9 });
    const lines = listTranscriptFiles([CORPUS]).reduce((n, f) => n + readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '').length, 0);
    expect(first.recordsRead).toBe(lines);
  });

  it('keeps each raw input byte for byte as the transcript logged it', async () => {
    const [sample] = await sink.queryRows<{ raw_input: string; source: string }>("SELECT raw_input, source FROM tool_calls FINAL WHERE call_id = 'toolu_0116Hyi5v8ut7Ffb7d8qV1Sc'");
    expect(sample?.raw_input).toBe('{"command":"mix phx.server 2>&1 | head -80","timeout":30000}');
    expect(sample?.source).toBe(`${CORPUS}/projects/spotter/short.jsonl:11`);
    const shortLine8 = readFileSync(join(CORPUS, 'projects/spotter/short.jsonl'), 'utf8').split('\n')[7] ?? '';
    expect(shortLine8).toContain(`"input":${sample?.raw_input ?? 'missing'},"caller"`);
    // Every call: the logged block text `"id":…,"name":…,"input":<raw_input>` exists verbatim.
    const corpusText = listTranscriptFiles([CORPUS]).map((f) => readFileSync(f, 'utf8')).join('\n');
    const rows = await sink.queryRows<{ call_id: string; tool_name: string; raw_input: string }>('SELECT call_id, tool_name, raw_input FROM tool_calls FINAL');
    expect(rows).toHaveLength(379);
    const missing = rows.filter((r) => !corpusText.includes(`"id":"${r.call_id}","name":"${r.tool_name}","input":${r.raw_input}`));
    expect(missing.map((r) => r.call_id)).toEqual([]);
  });

  it('changes no count when the same directory is imported again', async () => {
    const again = await runImport(claudeCodeImporter, [CORPUS], sink);
    expect(again.filesUnchanged).toBe(8);
    expect(again.eventsEmitted).toBe(0);
    expect(await usageTotals()).toEqual(REFERENCE_USAGE);
    expect(await toolsByName()).toEqual(REFERENCE_TOOLS);
  });

  it('imports a growing copy incrementally: a truncated last line waits, only new events are written', async () => {
    const name = '4d5611e5-241a-462a-8d15-5122611a9569.jsonl';
    const original = readFileSync(join(CORPUS, 'projects/spotter', name), 'utf8');
    const lines = original.split('\n');
    // Cut inside a streamed response: line k is not its last line and a later line of the same
    // response carries a larger output count, so the first import sees a partial usage.
    const parsedLines = lines.map((l) => (l.trim() === '' ? undefined : (JSON.parse(l) as { type?: string; requestId?: string; message?: { id?: string; usage?: { output_tokens?: number } } })));
    const k = parsedLines.findIndex((o, i) => {
      const next = parsedLines[i + 1];
      return i > lines.length / 2 && o?.type === 'assistant' && next?.type === 'assistant' && next.message?.id === o.message?.id && (next.message?.usage?.output_tokens ?? 0) > (o.message?.usage?.output_tokens ?? 0);
    });
    expect(k).toBeGreaterThan(0);
    const cut = parsedLines[k];
    const partialOutput = cut?.message?.usage?.output_tokens;
    const completePart = lines.slice(0, k + 1).join('\n') + '\n';
    const nextLine = lines[k + 1] ?? '';
    const prefix = completePart + nextLine.slice(0, Math.floor(nextLine.length / 2));

    const dir = join(tmp.dir, 'projects', 'spotter');
    mkdirSync(dir, { recursive: true });
    const copy = join(dir, name);
    writeFileSync(copy, prefix);
    const fromCopy = (table: string, column: string) => `${column} LIKE '${copy.replaceAll("'", "\\'")}:%' AND ${table === 'token_usage' ? "source = 'observed'" : '1'}`;

    const grown1 = await runImport(claudeCodeImporter, [tmp.dir], sink);
    const expected1 = scanRaw(lines.slice(0, k + 1));
    expect(grown1.filesRead).toBe(1);
    expect(grown1.eventsAlreadyImported).toBe(0);
    expect(grown1.eventsEmitted).toBe(expected1.toolUses.size + expected1.responses.size);
    // The copy's calls say what the original's stored rows say (only where they were read
    // differs): none is written again, so plain SQL still counts each call once (issue 29 item 1).
    const ofCalls = (ids: Set<string>): string => `call_id IN (${[...ids].map((id) => `'${id}'`).join(', ')})`;
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls WHERE ${fromCopy('tool_calls', 'source')}`)).toBe(0);
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls WHERE ${ofCalls(expected1.toolUses)}`)).toBe(expected1.toolUses.size);
    // The copy carries the original's ids: its usage is applied again only where its figures
    // differ (the response cut mid-stream, seen with its partial output); the rest are duplicates.
    expect(await countOf(sink, `SELECT count() AS n FROM token_usage FINAL WHERE ${fromCopy('token_usage', 'origin')}`)).toBe(1);
    expect(grown1.counts.duplicatesSkipped).toBeGreaterThanOrEqual(expected1.responses.size - 1);
    // The truncated line is left for the next import.
    const [state] = await sink.queryRows<{ complete_bytes: string }>({ query: 'SELECT complete_bytes FROM import_files FINAL WHERE path = {p:String}', query_params: { p: copy } });
    expect(Number(state?.complete_bytes)).toBe(Buffer.byteLength(completePart, 'utf8'));
    const requestId = cut?.requestId ?? '';
    const partial = () => countOf(sink, `SELECT output_tokens AS n FROM token_usage FINAL WHERE source = 'observed' AND request_id = '${requestId}'`);
    expect(await partial()).toBe(partialOutput);

    // The file grows to its full content: the rest of the half line, then every later line.
    appendFileSync(copy, original.slice(prefix.length));
    const grown2 = await runImport(claudeCodeImporter, [tmp.dir], sink);
    const expected2 = scanRaw(lines);
    expect(grown2.eventsAlreadyImported).toBeGreaterThan(0);
    expect(grown2.eventsAlreadyImported + grown2.eventsEmitted).toBe(expected2.toolUses.size + expected2.responses.size);
    expect(grown2.counts.deadLetters).toBe(0);
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls WHERE ${fromCopy('tool_calls', 'source')}`)).toBe(0);
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls WHERE ${ofCalls(expected2.toolUses)}`)).toBe(expected2.toolUses.size);
    // Only the response that grew back to its final output is applied again.
    expect(await countOf(sink, `SELECT count() AS n FROM token_usage FINAL WHERE ${fromCopy('token_usage', 'origin')}`)).toBe(1);
    expect(await partial()).toBeGreaterThan(partialOutput ?? Infinity);
    // The copy carries the same ids as the original: the tables still hold the reference figures.
    expect(await usageTotals()).toEqual(REFERENCE_USAGE);
    expect(await toolsByName()).toEqual(REFERENCE_TOOLS);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE status = 'pending'")).toBe(0);
  });
});
