// The opencode importer on the corpus samples (read in place), on a storage layout rebuilt from
// them, and end to end into embedded ClickHouse. The suites that read the samples are skipped
// loudly without the corpus (a failure under CI=true: see test/helpers/corpus.ts); the inline
// records run regardless.
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opencodeImporter } from '../../src/importers/opencode/index.ts';
import { parseOpencodeFile } from '../../src/importers/opencode/parser.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ParsedFile } from '../../src/importers/types.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const SAMPLES_DIR = corpusOrSkip('samples/opencode', 'the opencode sample tests (test/importers/opencode.test.ts)');
/** The samples folder; read only by suites that are skipped when it is absent. */
const SAMPLES = SAMPLES_DIR ?? '';
const NO_SAMPLES = SAMPLES_DIR === null;
const STORAGE_DUMP = join(SAMPLES, 'jazzyalex-agent-sessions__stage0_opencode_storage_v2_selected.jsonl');
const RUN_CAPTURE = join(SAMPLES, 'rickywo-Formic__docs_OPENCODE_INTEGRATION_PLAN_run_format_json.jsonl');
const RUN_STEPS = join(SAMPLES, 'rickywo-Formic__test_fixtures_opencode-t156-execute.jsonl');

type Event = Record<string, unknown> & { type: string; event_id: string };

function parse(path: string): ParsedFile & { parsed: Event[] } {
  const result = opencodeImporter.parseFile(path, readFileSync(path));
  return { ...result, parsed: result.events.map((e) => JSON.parse(e.envelope.text) as Event) };
}

const toolCalls = (events: Event[]): Event[] => events.filter((e) => e.type === 'tool_call');
const usage = (events: Event[]): Event[] => events.filter((e) => e.type === 'usage');
const sum = (events: Event[], field: string): number => events.reduce((n, e) => n + (typeof e[field] === 'number' ? e[field] : 0), 0);
/** Line `n` (1-based) of a sample file, as text. */
const sampleLine = (path: string, n: number): string => readFileSync(path, 'utf8').split('\n')[n - 1] ?? '';

describe.skipIf(NO_SAMPLES)('opencode storage objects dumped as JSONL (jazzyalex stage0 fixture)', () => {
  // Parsed in beforeAll: a skipped suite's body still runs to list its tests.
  let r: ReturnType<typeof parse>;
  beforeAll(() => {
    r = parse(STORAGE_DUMP);
  });

  it('reads 5 records: 2 bash calls, 1 usage; the user message and the duplicate step-finish are counted', () => {
    expect(r.recordsRead).toBe(5);
    expect(r.events).toHaveLength(3);
    expect(toolCalls(r.parsed).map((e) => [e['tool'], e['status']])).toEqual([['bash', 'ok'], ['bash', 'ok']]);
    expect(r.skipped).toEqual({ 'message:user': 1, 'step-finish:covered_by_message': 1 });
    expect(r.completeBytes).toBe(readFileSync(STORAGE_DUMP).length);
  });

  it('takes usage from the assistant message: 120 in, 16 out, no cache or reasoning figures', () => {
    const [u, ...rest] = usage(r.parsed);
    expect(rest).toHaveLength(0);
    expect(u).toMatchObject({
      harness: 'opencode',
      session_id: 's_stage0_large',
      turn_id: 'm_user_large_1',
      model: 'openai/gpt-4o-mini',
      request_id: 'm_assistant_large_1',
      input_tokens: 120,
      output_tokens: 16,
      ts: '2024-10-27T03:35:02.000Z',
    });
    expect(u).not.toHaveProperty('cache_read_tokens');
    expect(u).not.toHaveProperty('reasoning_tokens');
    expect(r.events.find((e) => e.envelope.text.includes('"usage"'))?.source).toBe(`${STORAGE_DUMP}:2`);
  });

  it('joins a tool part to its message (model, turn) and keeps the input verbatim', () => {
    const [large, small] = toolCalls(r.parsed);
    expect(large).toMatchObject({
      call_id: 'call_large_1',
      session_id: 's_stage0_large',
      turn_id: 'm_user_large_1',
      model: 'openai/gpt-4o-mini',
      ts: '2024-10-27T03:35:02.500Z',
      duration_ms: 500,
      output: 'ls: /non-existent-directory: No such file or directory\n',
    });
    // A non-zero exit keeps status "completed": stored as ok, as opencode reported it.
    expect(large?.['status']).toBe('ok');
    expect(r.events[1]?.envelope.text).toContain(',"input":{"command":"ls /non-existent-directory","cwd":"/tmp/large"}}');
    expect(sampleLine(STORAGE_DUMP, 3)).toContain('"input":{"command":"ls /non-existent-directory","cwd":"/tmp/large"}');
    // Its message is not in the file: no model, no turn.
    expect(small).toMatchObject({ call_id: 'call_1', session_id: 's_stage0_small', model: '', turn_id: '', ts: '2024-10-27T03:33:22.500Z', duration_ms: 500 });
  });
});

describe.skipIf(NO_SAMPLES)('opencode run --format json capture (rickywo/Formic, opencode 1.17.18)', () => {
  let r: ReturnType<typeof parse>;
  beforeAll(() => {
    r = parse(RUN_CAPTURE);
  });

  it('reads 7 lines: read and apply_patch completed; step_start and text lines are counted', () => {
    expect(r.recordsRead).toBe(7);
    expect(toolCalls(r.parsed).map((e) => [e['tool'], e['status'], e['duration_ms'], e['ts']])).toEqual([
      ['read', 'ok', 12, '2026-07-10T09:03:34.095Z'],
      ['apply_patch', 'ok', 11, '2026-07-10T09:03:38.162Z'],
    ]);
    expect(r.skipped).toEqual({ 'run:step_start': 1, 'run:text': 2 });
    for (const e of toolCalls(r.parsed)) expect(e).toMatchObject({ session_id: 'ses_0b4bb7fa6ffet9zjs1NzqJsZKQ', model: '', turn_id: '' });
  });

  it('one usage event per step_finish: input 6316 + 412, output 55 + 17, reasoning 12, cache read 6144', () => {
    const u = usage(r.parsed);
    expect(u.map((e) => e['request_id'])).toEqual(['msg_f4b448107001zAtt9MmhpwMiah', 'msg_f4b44a723001TUjLLMFE0dqYiN']);
    expect(sum(u, 'input_tokens')).toBe(6728);
    expect(sum(u, 'output_tokens')).toBe(72);
    expect(sum(u, 'reasoning_tokens')).toBe(12);
    expect(sum(u, 'cache_read_tokens')).toBe(6144);
    expect(sum(u, 'cache_write_tokens')).toBe(0);
    expect(u.map((e) => e['ts'])).toEqual(['2026-07-10T09:03:34.164Z', '2026-07-10T09:03:40.354Z']);
  });

  it('keeps the raw input byte for byte (the patch text with its escapes)', () => {
    const line = sampleLine(RUN_CAPTURE, 5);
    const raw = line.slice(line.indexOf('"input":') + 8, line.indexOf(',"output":'));
    expect(raw.startsWith('{"patchText":"*** Begin Patch\\n')).toBe(true);
    expect(r.events[2]?.envelope.text.endsWith(`,"input":${raw}}`)).toBe(true);
  });

  it('the derived step fixture yields the same usage event ids (deduplicated across files)', () => {
    const steps = parse(RUN_STEPS);
    expect(steps.events).toHaveLength(2);
    expect(usage(steps.parsed).map((e) => e.event_id)).toEqual(usage(r.parsed).map((e) => e.event_id));
  });
});

describe('opencode records the importer does not turn into events', () => {
  it('returns broken lines as malformed, counts unknown ones, keeps the finished state of a bus-updated part, never throws', () => {
    const part = (status: string, extra: string) =>
      `{"type":"message.part.updated","properties":{"part":{"id":"prt_1","sessionID":"ses_x","messageID":"msg_1","type":"tool","callID":"call_9","tool":"grep","state":{"status":"${status}","input":{"pattern":"TODO","path":"src"}${extra}}}}}`;
    const text = [
      'not json',
      '{"foo":1}',
      '{"type":"session.idle","properties":{"sessionID":"ses_x"}}',
      part('running', ',"time":{"start":1783674214000}'),
      part('error', ',"error":"rg: src: No such file or directory","time":{"start":1783674214000,"end":1783674214250}'),
      part('running', ',"time":{"start":1783674214000}'),
      '{"type":"tool_use","timestamp":1783674214000,"sessionID":"ses_x","part":{"type":"tool","tool":"bash","callID":"call_8","state":{"status":"pending","input":{},"raw":"{\\"comm"}}}',
      '{"type":"step_finish","timestamp":1783674215000,"sessionID":"ses_x","part":{"type":"step-finish","messageID":"msg_1","tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}}',
      '{"type":"tool_use","sessionID":"ses_x","part":{"type":"tool","tool":"bash","callID":"call_7","state":{"status":"completed","input":{}}}}',
    ].join('\n');
    const r = parseOpencodeFile('/tmp/bus.jsonl', Buffer.from(`${text}\n{"type":"text","part":{`));
    expect(r.recordsRead).toBe(9);
    expect(r.completeBytes).toBe(Buffer.byteLength(text) + 1);
    expect(r.skipped).toEqual({ unknown: 1, 'bus:session.idle': 1, 'step-finish:no_usage': 1 });
    // The torn last line is no malformed record: it waits for the next import.
    const lines = text.split('\n');
    expect(r.malformed?.map((m) => [m.line, m.problem, m.raw])).toEqual([
      [1, 'invalid_json', lines[0]],
      [9, 'tool:no_time', lines[8]],
    ]);
    expect(r.malformed?.[1]?.endOffset).toBe(Buffer.byteLength(text) + 1);
    const events = r.events.map((e) => JSON.parse(e.envelope.text) as Event);
    expect(events.map((e) => [e['call_id'], e['status'], e['error'] ?? null, e['duration_ms'] ?? null])).toEqual([
      ['call_9', 'error', 'rg: src: No such file or directory', 250],
      ['call_8', 'pending', null, null],
    ]);
    // The pending part's streamed arguments are its raw input (as a string).
    expect(events[1]?.['input']).toBe('{"comm');
    expect(r.events[0]?.source).toBe('/tmp/bus.jsonl:5');
  });

  it('leaves a storage file that does not parse (being rewritten) for the next import', () => {
    const r = parseOpencodeFile('/s/part/msg_1/prt_1.json', Buffer.from('{"id":"prt_1","type":"to'));
    expect(r).toMatchObject({ events: [], malformed: [], completeBytes: 0, skipped: { incomplete_document: 1 } });
  });

  it('returns malformed records of an export document with their own text and the line they start on', () => {
    // A tool part without its `tool`, an assistant message whose tokens are no counts.
    const part = { type: 'tool', callID: 'call_1', messageID: 'msg_1', sessionID: 'ses_1', state: { status: 'completed' } };
    const info = { id: 'msg_1', sessionID: 'ses_1', role: 'assistant', time: { created: 1783674214000 }, tokens: { input: 'many', output: 2 } };
    const doc = { info: { id: 'ses_1' }, messages: ['not a message', { info, parts: [part] }] };
    const text = JSON.stringify(doc, null, 2);
    const r = parseOpencodeFile('/x/ses_1.json', Buffer.from(text));
    expect(r.events).toEqual([]);
    const lineOf = (needle: string): number => text.slice(0, text.indexOf(needle)).split('\n').length;
    expect(r.malformed?.map((m) => [m.problem, m.line])).toEqual([
      ['not_an_object', lineOf('"not a message"')],
      ['part:tool:malformed', lineOf('"type": "tool"') - 1],
      ['message:bad_tokens', lineOf('"id": "msg_1"') - 1],
    ]);
    expect(r.malformed?.[0]?.raw).toBe('"not a message"');
    expect(JSON.parse(String(r.malformed?.[1]?.raw))).toEqual(part);
    expect(JSON.parse(String(r.malformed?.[2]?.raw))).toEqual(info);
    expect(r.malformed?.[2]?.detail).toBe('`tokens.input` is the string "many", not a non-negative integer.');
    // A whole document is re-read when it changes: its records end at the file's end.
    expect(new Set(r.malformed?.map((m) => m.endOffset))).toEqual(new Set([Buffer.byteLength(text)]));
  });
});

/**
 * The storage layout the jazzyalex sample lines came from (their provenance names the files),
 * rebuilt in a temp folder and pretty-printed as opencode writes it.
 */
function writeStorageLayout(root: string): string {
  const files = [
    'message/s_stage0_large/msg_0001.json',
    'message/s_stage0_large/msg_0002.json',
    'part/m_assistant_large_1/001.json',
    'part/m_assistant_large_1/006.json',
    'part/m_assistant_small/001.json',
  ];
  const lines = readFileSync(STORAGE_DUMP, 'utf8').split('\n').filter((l) => l.trim() !== '');
  files.forEach((file, i) => {
    const full = join(root, 'storage', file);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, JSON.stringify(JSON.parse(lines[i] ?? 'null'), null, 2));
  });
  mkdirSync(join(root, 'storage', 'session', 'global'), { recursive: true });
  writeFileSync(join(root, 'storage', 'session', 'global', 's_stage0_large.json'), '{"id":"s_stage0_large"}');
  return join(root, 'storage');
}

describe.skipIf(NO_SAMPLES)('opencode storage layout', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  afterAll(() => tmp?.cleanup());
  let storage: string;
  beforeAll(() => {
    tmp = makeTempDir('opencode-storage');
    storage = writeStorageLayout(tmp.dir);
  });

  it('lists message and part files only, and finds each part its message file', () => {
    const files = opencodeImporter.listFiles([storage]);
    expect(files.map((f) => f.slice(storage.length + 1))).toEqual([
      'message/s_stage0_large/msg_0001.json',
      'message/s_stage0_large/msg_0002.json',
      'part/m_assistant_large_1/001.json',
      'part/m_assistant_large_1/006.json',
      'part/m_assistant_small/001.json',
    ]);
    const results = files.map((f) => ({ f, ...parse(f) }));
    const all = results.flatMap((r) => r.parsed);
    const fromDump = parse(STORAGE_DUMP).parsed;
    // The same events as the JSONL dump of the same objects: same ids, same model and turn.
    expect(all.map((e) => e.event_id).sort()).toEqual(fromDump.map((e) => e.event_id).sort());
    const large = all.find((e) => e['call_id'] === 'call_large_1');
    expect(large).toMatchObject({ model: 'openai/gpt-4o-mini', turn_id: 'm_user_large_1', status: 'ok' });
    expect(results[3]?.skipped).toEqual({ 'part:step-finish:usage_from_message': 1 });
    expect(results[0]?.skipped).toEqual({ 'message:user': 1 });
    // A whole-file record: source file:#0, endOffset the file size.
    const partFile = results[2];
    expect(partFile?.events[0]?.source).toBe(`${partFile?.f}:#0`);
    expect(partFile?.events[0]?.endOffset).toBe(readFileSync(partFile?.f ?? '').length);
    // The pretty-printed input is kept as written, whitespace included.
    expect(partFile?.events[0]?.envelope.text).toContain('"input":{\n      "command": "ls /non-existent-directory",\n      "cwd": "/tmp/large"\n    }');
  });
});

describe.skipIf(NO_SAMPLES)('opencode export (`opencode export <sessionID>`: {info, messages: [{info, parts}]})', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeAll(() => {
    tmp = makeTempDir('opencode-export');
  });
  afterAll(() => tmp?.cleanup());

  it('reads messages and parts of the document, joined as in storage, with verbatim inputs', () => {
    // The large session of the jazzyalex sample, as `opencode export` would print it.
    const [user, assistant, tool, step] = readFileSync(STORAGE_DUMP, 'utf8').split('\n').map((l) => (l ? (JSON.parse(l) as unknown) : null));
    const file = join(tmp.dir, 's_stage0_large.json');
    const doc = { info: { id: 's_stage0_large', title: 'Step 1' }, messages: [{ info: user, parts: [] }, { info: assistant, parts: [tool, step] }] };
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const r = parse(file);
    expect(r.recordsRead).toBe(4);
    expect(r.skipped).toEqual({ 'message:user': 1, 'step-finish:covered_by_message': 1 });
    const fromDump = parse(STORAGE_DUMP).parsed.filter((e) => e['session_id'] === 's_stage0_large');
    expect(r.parsed.map((e) => e.event_id).sort()).toEqual(fromDump.map((e) => e.event_id).sort());
    expect(r.parsed.find((e) => e.type === 'tool_call')).toMatchObject({ model: 'openai/gpt-4o-mini', turn_id: 'm_user_large_1', status: 'ok' });
    expect(r.events.map((e) => e.source.slice(file.length))).toEqual([':#1', ':#2']);
    const indent = ' '.repeat(14);
    expect(r.events[1]?.envelope.text).toContain(`"input":{\n${indent}"command": "ls /non-existent-directory",\n${indent}"cwd": "/tmp/large"\n${' '.repeat(12)}}}`);
  });
});

describe.skipIf(NO_SAMPLES)('opencode import into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let first: ImportSummary;
  let tmp: ReturnType<typeof makeTempDir>;
  let storage: string;
  // What the first import stored, read before any test changes the files (tests run in any order).
  let stored: { calls: number; observed: number; input: number; byTool: unknown[]; read: unknown };

  beforeAll(async () => {
    tmp = makeTempDir('opencode-e2e');
    ({ sink, cleanup } = await openTempSink('opencode'));
    storage = writeStorageLayout(tmp.dir);
    first = await runImport(opencodeImporter, [SAMPLES, storage], sink);
    const byTool = await sink.queryRows<{ tool_name: string; kind: string; status: string; n: string }>(
      'SELECT tool_name, kind, status, count() AS n FROM tool_calls FINAL GROUP BY tool_name, kind, status ORDER BY tool_name',
    );
    stored = {
      calls: await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL'),
      observed: await countOf(sink, "SELECT count() AS n FROM token_usage FINAL WHERE source = 'observed'"),
      input: await countOf(sink, "SELECT sum(input_tokens) AS n FROM token_usage FINAL WHERE source = 'observed'"),
      byTool: byTool.map((r) => [r.tool_name, r.kind, r.status, Number(r.n)]),
      read: (await sink.queryRows<{ raw_input: string; path: string | null }>("SELECT raw_input, path FROM tool_calls FINAL WHERE tool_name = 'read'"))[0],
    };
  });
  afterAll(async () => {
    await cleanup?.();
    tmp?.cleanup();
  });

  it('accounts for every event: events in = rows + dead letters; duplicates collapse by event id', () => {
    expect(first.filesRead).toBe(8);
    // Dump 3 + run capture 4 + step fixture 2 + storage 3 (usage, 2 calls).
    expect(first.eventsEmitted).toBe(12);
    expect(first.counts.eventsRead).toBe(12);
    expect(first.counts.rowsWritten + first.counts.deadLetters).toBe(12);
    expect(first.counts.deadLetters).toBe(0);
    expect(first.counts.toolCallRows).toBe(6);
    expect(first.counts.usageRows).toBe(6);
    expect(stored.calls).toBe(4);
    expect(stored.observed).toBe(3);
    expect(stored.input).toBe(120 + 6316 + 412);
    expect(stored.byTool).toEqual([
      ['apply_patch', 'edit', 'ok', 1],
      ['bash', 'execute', 'ok', 2],
      ['read', 'read', 'ok', 1],
    ]);
    expect(stored.read).toEqual({ raw_input: '{"filePath":"/private/tmp/opencode-spike/README.md"}', path: '/private/tmp/opencode-spike/README.md' });
  });

  it('a second import changes no count', async () => {
    const second = await runImport(opencodeImporter, [SAMPLES, storage], sink);
    expect(second.filesUnchanged).toBe(8);
    expect(second.counts.eventsRead).toBe(0);
    expect(await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(4);
    expect(await countOf(sink, "SELECT count() AS n FROM token_usage FINAL WHERE source = 'observed'")).toBe(3);
    expect(await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL')).toBe(0);
  });

  it('regression: a storage part rewritten in place to the same size is imported again', async () => {
    const part = join(storage, 'part', 'm_assistant_small', '001.json');
    const original = readFileSync(part, 'utf8');
    // "completed" -> "error" padded with JSON whitespace: same size, new content.
    const changed = original.replace('"status": "completed"', '"status":     "error"');
    expect(changed).not.toBe(original);
    expect(Buffer.byteLength(changed)).toBe(Buffer.byteLength(original));
    writeFileSync(part, changed);
    utimesSync(part, new Date(Date.now() + 5_000), new Date(Date.now() + 5_000));
    const again = await runImport(opencodeImporter, [storage], sink);
    expect(again.filesRead).toBe(1);
    expect(again.eventsEmitted).toBe(1);
    expect((await sink.queryRows<{ status: string }>("SELECT status FROM tool_calls FINAL WHERE call_id = 'call_1'"))[0]?.status).toBe('error');
    expect(await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(4);
  });
});
