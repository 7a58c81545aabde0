// The OTLP importer on the corpus samples (read in place), on synthetic spans for the GenAI
// conventions the samples do not show, and end to end into embedded ClickHouse. What reads the
// samples is skipped loudly without the corpus (a failure under CI=true: see
// test/helpers/corpus.ts); the synthetic spans run regardless.
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpImporter } from '../../src/importers/otlp/index.ts';
import { harnessForService, parseOtlpFile, type OtlpParseOptions } from '../../src/importers/otlp/parser.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ParsedFile } from '../../src/importers/types.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const GENAI_DIR = corpusOrSkip('samples/otel_genai', 'the OTel GenAI sample tests (test/importers/otlp.test.ts)');
const CLAUDE_DIR = corpusOrSkip('samples/claude_code_otel', 'the Claude Code OTLP sample tests (test/importers/otlp.test.ts)');
/** The sample folders; read only by tests that are skipped when they are absent. */
const GENAI = GENAI_DIR ?? '';
const CLAUDE = CLAUDE_DIR ?? '';
const CLAUDE_PRETTY = join(CLAUDE, 'exequieldeferrari-axiom__internal_otlp_testdata_claude_logs.json');
const CLAUDE_COMPACT = join(CLAUDE, 'exequieldeferrari-axiom__claude_logs.compact.jsonl');
const fixture = (name: string): string => join(GENAI, `radotsvetkov-akmon__crates_akmon-otel_src_lib.rs__FIXTURE_${name}.jsonl`);

type Event = Record<string, unknown> & { type: string; event_id: string };

function parse(path: string, options?: OtlpParseOptions): ParsedFile & { parsed: Event[] } {
  const result = options ? parseOtlpFile(path, readFileSync(path), options) : otlpImporter.parseFile(path, readFileSync(path));
  return { ...result, parsed: result.events.map((e) => JSON.parse(e.envelope.text) as Event) };
}

function parseText(text: string, options?: OtlpParseOptions): ParsedFile & { parsed: Event[] } {
  const result = parseOtlpFile('/tmp/x.jsonl', Buffer.from(text), options);
  return { ...result, parsed: result.events.map((e) => JSON.parse(e.envelope.text) as Event) };
}

const sum = (events: Event[], field: string): number => events.reduce((n, e) => n + (typeof e[field] === 'number' ? e[field] : 0), 0);

describe.skipIf(!CLAUDE_DIR)('Claude Code OTLP logs (exequieldeferrari/axiom, Claude Code 2.1.226)', () => {
  // Parsed in beforeAll: a skipped suite's body still runs to list its tests.
  let pretty: ReturnType<typeof parse>;
  beforeAll(() => {
    pretty = parse(CLAUDE_PRETTY);
  });

  it('reads 5 log records: 2 api_request -> usage, 1 tool_result -> a Read call; 2 other events counted', () => {
    expect(pretty.recordsRead).toBe(5);
    expect(pretty.parsed.map((e) => e.type)).toEqual(['usage', 'usage', 'tool_call']);
    expect(pretty.skipped).toEqual({ 'log:claude_code.hook_registered': 1, 'log:claude_code.user_prompt': 1 });
    // Whole-file document: no prefix may be skipped by a later import (see the README).
    expect(pretty.completeBytes).toBe(0);
  });

  it('usage sums: input 2 + 6, output 93 + 308, cache read 0 + 117147, cache creation 35419 + 5722', () => {
    const usage = pretty.parsed.filter((e) => e.type === 'usage');
    expect(sum(usage, 'input_tokens')).toBe(8);
    expect(sum(usage, 'output_tokens')).toBe(401);
    expect(sum(usage, 'cache_read_tokens')).toBe(117147);
    expect(sum(usage, 'cache_write_tokens')).toBe(41141);
    expect(usage[0]).toMatchObject({
      harness: 'claude_code',
      session_id: '11111111-2222-3333-4444-555555555555',
      turn_id: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee',
      model: 'claude-sonnet-5',
      request_id: 'req_000000000000000000000',
      ts: '2026-08-11T00:14:55.795Z',
    });
  });

  it('the tool_result: Read, ok, 2 ms (stringValue numbers), the model of the request before it, no logged input', () => {
    const call = pretty.parsed.find((e) => e.type === 'tool_call');
    expect(call).toMatchObject({
      harness: 'claude_code',
      tool: 'Read',
      status: 'ok',
      duration_ms: 2,
      call_id: 'toolu_000000000000000000000',
      model: 'claude-sonnet-5',
      // Logged at 55.840 when the call ended: it started 2 ms before.
      ts: '2026-08-11T00:14:55.838Z',
      input: {},
    });
    expect(call).not.toHaveProperty('output');
  });

  it('whole-file sources are file:#index with the file size as endOffset; the one-line twin gives the same events at file:1', () => {
    expect(pretty.events.map((e) => e.source)).toEqual([`${CLAUDE_PRETTY}:#2`, `${CLAUDE_PRETTY}:#3`, `${CLAUDE_PRETTY}:#4`]);
    expect(new Set(pretty.events.map((e) => e.endOffset))).toEqual(new Set([readFileSync(CLAUDE_PRETTY).length]));
    const compact = parse(CLAUDE_COMPACT);
    expect(compact.events.map((e) => e.envelope.text)).toEqual(pretty.events.map((e) => e.envelope.text));
    expect(compact.events.map((e) => e.source)).toEqual([1, 1, 1].map((n) => `${CLAUDE_COMPACT}:${n}`));
    expect(compact.recordsRead).toBe(5);
  });
});

describe('OTel GenAI spans (radotsvetkov/akmon fixtures, synthetic)', () => {
  it.skipIf(!GENAI_DIR)('skips GenAI spans of a service that names no harness (agef-demo-agent) and counts them', () => {
    const a = parse(fixture('A'));
    expect(a.events).toHaveLength(0);
    expect(a.recordsRead).toBe(2);
    expect(a.skipped).toEqual({ 'span:unknown_service': 2 });
    expect(parse(fixture('LEGACY')).skipped).toEqual({ 'span:unknown_service': 1 });
  });

  it.skipIf(!GENAI_DIR)('maps them once the service is named: get_weather ok in 300 ms, usage 31 in / 19 out', () => {
    const options = { serviceHarness: { 'agef-demo-agent': 'codex' } } as const;
    const a = parse(fixture('A'), options);
    expect(a.skipped).toEqual({});
    const [usage, call] = a.parsed;
    expect(usage).toMatchObject({
      type: 'usage',
      harness: 'codex',
      session_id: 'conv-7f3a',
      turn_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      model: 'gpt-4o-2024-08-06',
      request_id: 'chatcmpl-Abc123',
      input_tokens: 31,
      output_tokens: 19,
      ts: '2025-05-23T11:33:21.500Z',
    });
    expect(call).toMatchObject({
      type: 'tool_call',
      harness: 'codex',
      tool: 'get_weather',
      call_id: 'call_x',
      status: 'ok',
      duration_ms: 300,
      output: 'rainy, 57F',
      // The tool span names no conversation: the trace's chat span does.
      session_id: 'conv-7f3a',
      model: 'gpt-4o-2024-08-06',
      input: '{"location":"Paris"}',
      ts: '2025-05-23T11:33:21.500Z',
    });
    // B (metadata only) and C (event-based content) are the same trace: same ids; B has no arguments.
    const b = parse(fixture('B'), options);
    const c = parse(fixture('C'), options);
    expect(b.parsed.map((e) => e.event_id)).toEqual(a.parsed.map((e) => e.event_id));
    expect(c.parsed.map((e) => e.event_id)).toEqual(a.parsed.map((e) => e.event_id));
    expect(b.parsed[1]).toMatchObject({ input: {} });
    expect(b.parsed[1]).not.toHaveProperty('output');
  });

  it.skipIf(!GENAI_DIR)('counts the official examples (no GenAI) instead of failing on them', () => {
    const trace = parse(join(GENAI, 'opentelemetry-proto__examples_trace.json'));
    const logs = parse(join(GENAI, 'opentelemetry-proto__examples_logs.json'));
    expect([trace.events.length, trace.recordsRead, trace.skipped]).toEqual([0, 1, { 'span:non_gen_ai': 1 }]);
    expect([logs.events.length, logs.recordsRead, logs.skipped]).toEqual([0, 1, { 'log:other': 1 }]);
  });

  it('picks harnesses by service.name', () => {
    expect(['claude-code', 'codex_cli_rs', 'codex-app-server', 'opencode', 'grok-build', 'my.service'].map((s) => harnessForService(s) ?? null)).toEqual([
      'claude_code',
      'codex',
      'codex',
      'opencode',
      'grok_build',
      null,
    ]);
  });
});

/** One span as OTLP/JSON, attributes given as key -> AnyValue. */
function span(fields: Record<string, unknown>, attributes: Record<string, unknown>): Record<string, unknown> {
  return {
    traceId: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    spanId: 'bbbbbbbbbbbbbbbb',
    startTimeUnixNano: '1786407295000000000',
    endTimeUnixNano: '1786407296250000000',
    ...fields,
    attributes: Object.entries(attributes).map(([key, value]) => ({ key, value })),
  };
}

function exportLine(service: string, spans: unknown[]): string {
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] }, scopeSpans: [{ spans }] }] });
}

describe('OTel GenAI conventions the samples do not show (synthetic spans)', () => {
  const chat = (extra: Record<string, unknown>) =>
    span({ spanId: 'c1c1c1c1c1c1c1c1', name: 'chat claude' }, {
      'gen_ai.operation.name': { stringValue: 'chat' },
      'gen_ai.conversation.id': { stringValue: 'sess-1' },
      'gen_ai.request.model': { stringValue: 'claude-sonnet-4-5' },
      'gen_ai.usage.input_tokens': { intValue: 1000 },
      'gen_ai.usage.output_tokens': { intValue: '250' },
      'gen_ai.usage.cache_read.input_tokens': { intValue: '800' },
      'gen_ai.usage.cache_creation.input_tokens': { intValue: '100' },
      'gen_ai.usage.reasoning.output_tokens': { intValue: '50' },
      ...extra,
    });

  it('takes cached tokens out of input for claude_code, cached and reasoning tokens out for opencode, none for codex', () => {
    const usageFor = (service: string): Event | undefined => parseText(exportLine(service, [chat({})])).parsed[0];
    expect(usageFor('claude-code')).toMatchObject({ harness: 'claude_code', input_tokens: 100, output_tokens: 250, cache_read_tokens: 800, cache_write_tokens: 100, reasoning_tokens: 50 });
    expect(usageFor('opencode')).toMatchObject({ harness: 'opencode', input_tokens: 100, output_tokens: 200, reasoning_tokens: 50 });
    expect(usageFor('codex_exec')).toMatchObject({ harness: 'codex', input_tokens: 1000, output_tokens: 250, cache_read_tokens: 800 });
    // A producer that did not include the cache in input: kept as sent.
    expect(parseText(exportLine('claude-code', [chat({ 'gen_ai.usage.input_tokens': { intValue: '12' } })])).parsed[0]).toMatchObject({ input_tokens: 12 });
  });

  it('reads errors, structured arguments, MCP spans and other operations', () => {
    const failed = span({ spanId: 'd1d1d1d1d1d1d1d1', parentSpanId: 'c1c1c1c1c1c1c1c1', name: 'execute_tool Bash', status: { code: 2, message: 'exit status 1' } }, {
      'gen_ai.operation.name': { stringValue: 'execute_tool' },
      'gen_ai.tool.call.id': { stringValue: 'toolu_01' },
      'gen_ai.tool.call.arguments': { kvlistValue: { values: [{ key: 'command', value: { stringValue: 'make test' } }, { key: 'timeout', value: { intValue: '60000' } }] } },
      'error.type': { stringValue: 'ShellError' },
    });
    const agent = span({ spanId: 'e1e1e1e1e1e1e1e1', name: 'invoke_agent' }, { 'gen_ai.operation.name': { stringValue: 'invoke_agent' }, 'gen_ai.usage.input_tokens': { intValue: '5000' } });
    const mcp = span({ spanId: 'f1f1f1f1f1f1f1f1', name: 'tools/call get-weather', startTimeUnixNano: 1786407297000000000 }, {
      'mcp.method.name': { stringValue: 'tools/call' },
      'gen_ai.operation.name': { stringValue: 'execute_tool' },
      'gen_ai.tool.name': { stringValue: 'weather__get-weather' },
      'mcp.session.id': { stringValue: 'm-1' },
    });
    const text = [
      exportLine('claude-code', [chat({}), failed, agent]),
      exportLine('weather-server', [mcp]),
      '{"resourceMetrics":[]}',
      'not json',
    ].join('\n');
    const r = parseText(`${text}\n{"resourceSpans":[`);
    expect(r.skipped).toEqual({ 'span:invoke_agent': 1, not_otlp: 1 });
    expect(r.malformed?.map((m) => [m.line, m.problem, m.raw])).toEqual([[4, 'invalid_json', 'not json']]);
    expect(r.recordsRead).toBe(6);
    expect(r.completeBytes).toBe(Buffer.byteLength(text) + 1);
    const [, bash, weather] = r.parsed;
    expect(bash).toMatchObject({
      harness: 'claude_code',
      tool: 'Bash',
      status: 'error',
      error: 'exit status 1',
      duration_ms: 1250,
      session_id: 'sess-1',
      model: 'claude-sonnet-4-5',
      input: { command: 'make test', timeout: 60000 },
    });
    expect(r.events[1]?.envelope.text).toContain('"input":{"command":"make test","timeout":60000}');
    expect(weather).toMatchObject({ harness: 'mcp', tool: 'weather__get-weather', status: 'ok', input: {}, ts: '2026-08-11T00:14:57.000Z' });
  });

  it('Claude Code logs: a failed tool_result with its logged input, the model of the request before it', () => {
    const log = (timeNs: string, attributes: Record<string, unknown>) => ({ timeUnixNano: timeNs, attributes: Object.entries(attributes).map(([key, value]) => ({ key, value })) });
    const common = { 'session.id': { stringValue: 's-7' }, 'prompt.id': { stringValue: 'p-1' } };
    const request = (timeNs: string, model: string, id: string) =>
      log(timeNs, { ...common, 'event.name': { stringValue: 'api_request' }, model: { stringValue: model }, request_id: { stringValue: id }, input_tokens: { intValue: '10' }, output_tokens: { intValue: '5' } });
    const toolInput = '{"command":"make test","description":"Run tests"}';
    const logs = [
      // Out of time order, as exporters batch them.
      request('1786407300000000000', 'claude-opus-4-5', 'req_2'),
      log('1786407299000000000', { ...common, 'event.name': { stringValue: 'tool_result' }, tool_name: { stringValue: 'Bash' }, tool_use_id: { stringValue: 'toolu_9' }, success: { stringValue: 'false' }, error_type: { stringValue: 'ShellError' }, duration_ms: { stringValue: '1840' }, tool_input: { stringValue: toolInput } }),
      request('1786407298000000000', 'claude-sonnet-4-5', 'req_1'),
      log('1786407297000000000', { ...common, 'event.name': { stringValue: 'tool_decision' } }),
    ];
    const r = parseText(JSON.stringify({ resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeLogs: [{ logRecords: logs }] }] }));
    expect(r.skipped).toEqual({ 'log:claude_code.tool_decision': 1 });
    const call = r.parsed.find((e) => e.type === 'tool_call');
    expect(call).toMatchObject({ tool: 'Bash', status: 'error', error: 'ShellError', duration_ms: 1840, model: 'claude-sonnet-4-5', turn_id: 'p-1', input: toolInput });
    expect(r.parsed.filter((e) => e.type === 'usage').map((e) => e['model'])).toEqual(['claude-opus-4-5', 'claude-sonnet-4-5']);
  });

  it('leaves a whole-file document that does not parse yet for the next import', () => {
    const r = parseOtlpFile('/tmp/t.json', Buffer.from('{\n  "resourceLogs": [\n'));
    expect(r).toMatchObject({ events: [], malformed: [], completeBytes: 0, skipped: { incomplete_document: 1 } });
  });

  it('returns a malformed span or log record as its own JSON text, at the line of its export', () => {
    const nameless = span({ spanId: 'a1a1a1a1a1a1a1a1', name: 'tool' }, { 'gen_ai.operation.name': { stringValue: 'execute_tool' } });
    const timeless = span({ spanId: 'a2a2a2a2a2a2a2a2', name: 'execute_tool Read', startTimeUnixNano: 'soon' }, { 'gen_ai.operation.name': { stringValue: 'execute_tool' } });
    const badUsage = span({ spanId: 'a3a3a3a3a3a3a3a3', name: 'chat' }, { 'gen_ai.operation.name': { stringValue: 'chat' }, 'gen_ai.usage.input_tokens': { stringValue: 'lots' } });
    const text = [exportLine('claude-code', [nameless, chat({})]), exportLine('claude-code', [timeless, 7, badUsage])].join('\n');
    const r = parseText(`${text}\n`);
    expect(r.parsed.map((e) => e.type)).toEqual(['usage']);
    expect(r.malformed?.map((m) => [m.line, m.problem])).toEqual([
      [1, 'span:execute_tool:no_tool_name'],
      [2, 'span:execute_tool:no_time'],
      [2, 'span:not_an_object'],
      [2, 'span:chat:bad_usage'],
    ]);
    expect(r.malformed?.map((m) => m.raw)).toEqual([JSON.stringify(nameless), JSON.stringify(timeless), '7', JSON.stringify(badUsage)]);
    expect(r.malformed?.[1]?.detail).toBe('The execute_tool span\'s `startTimeUnixNano` is the string "soon", not a time in Unix nanoseconds.');
    expect(r.malformed?.[3]?.endOffset).toBe(Buffer.byteLength(text) + 1);
    expect(r.recordsRead).toBe(5);
    expect(r.skipped).toEqual({});
    // In a whole-file document the line is the one the span object starts on.
    const pretty = JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeSpans: [{ spans: [chat({}), nameless] }] }] }, null, 2);
    const whole = parseOtlpFile('/tmp/t.json', Buffer.from(pretty));
    const at = pretty.indexOf('"spanId": "a1a1a1a1a1a1a1a1"');
    const start = pretty.lastIndexOf('{', pretty.lastIndexOf('"traceId"', at));
    expect(whole.malformed?.map((m) => [m.line, m.problem])).toEqual([[pretty.slice(0, start).split('\n').length, 'span:execute_tool:no_tool_name']]);
    expect(JSON.parse(String(whole.malformed?.[0]?.raw))).toEqual(nameless);
  });
});

describe.skipIf(!GENAI_DIR || !CLAUDE_DIR)('otlp import into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let first: ImportSummary;
  let tmp: ReturnType<typeof makeTempDir>;
  let paths: string[];
  // What the first import stored, read before any test changes the files (tests run in any order).
  let stored: { calls: number; observed: number; cacheWrite: number; rows: unknown[] };

  beforeAll(async () => {
    tmp = makeTempDir('otlp-e2e');
    // FIXTURE_A as an opencode service would send it (derived here, not copied into the repo).
    const derived = join(tmp.dir, 'opencode-genai.jsonl');
    paths = [GENAI, CLAUDE, derived];
    writeFileSync(derived, readFileSync(fixture('A'), 'utf8').replace('"agef-demo-agent"', '"opencode"'));
    ({ sink, cleanup } = await openTempSink('otlp'));
    first = await runImport(otlpImporter, paths, sink);
    stored = {
      calls: await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL'),
      observed: await countOf(sink, "SELECT count() AS n FROM token_usage FINAL WHERE source = 'observed'"),
      cacheWrite: await countOf(sink, "SELECT sum(cache_write_tokens) AS n FROM token_usage FINAL WHERE source = 'observed' AND harness = 'claude_code'"),
      rows: await sink.queryRows<{ harness: string; tool_name: string; status: string; raw_input: string; flags: string[] }>('SELECT harness, tool_name, status, raw_input, flags FROM tool_calls FINAL ORDER BY harness'),
    };
  });
  afterAll(async () => {
    await cleanup?.();
    tmp?.cleanup();
  });

  it('accounts for every event: events in = rows + dead letters; the two Claude exports collapse by event id', () => {
    expect(first.filesRead).toBe(9);
    expect(first.eventsEmitted).toBe(8);
    expect(first.counts.eventsRead).toBe(8);
    expect(first.counts.rowsWritten + first.counts.deadLetters).toBe(8);
    expect(first.counts.deadLetters).toBe(0);
    expect(first.skippedRecords['span:unknown_service']).toBe(7);
    expect(stored.calls).toBe(2);
    expect(stored.observed).toBe(3);
    expect(stored.cacheWrite).toBe(41141);
    expect(stored.rows).toEqual([
      { harness: 'claude_code', tool_name: 'Read', status: 'ok', raw_input: '{}', flags: [] },
      { harness: 'opencode', tool_name: 'get_weather', status: 'ok', raw_input: '{"location":"Paris"}', flags: ['uncatalogued'] },
    ]);
  });

  it('a second import changes no count', async () => {
    const second = await runImport(otlpImporter, paths, sink);
    expect(second.filesUnchanged).toBe(9);
    expect(second.counts.eventsRead).toBe(0);
    expect(await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(2);
    expect(await countOf(sink, "SELECT count() AS n FROM token_usage FINAL WHERE source = 'observed'")).toBe(3);
    expect(await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL')).toBe(0);
  });

  it('regression: a whole-file export rewritten to the same size is imported again', async () => {
    const pretty = join(tmp.dir, 'claude-logs.json');
    const original = readFileSync(CLAUDE_PRETTY, 'utf8');
    writeFileSync(pretty, original);
    await runImport(otlpImporter, [pretty], sink);
    // The tool result turns into a failure; the file keeps its size ("true" + 1 space = "false").
    const changed = original.replace(/("key": "success",\s*"value": \{\s*"stringValue":) "true"/, '$1"false"');
    expect(changed).not.toBe(original);
    expect(Buffer.byteLength(changed)).toBe(Buffer.byteLength(original));
    writeFileSync(pretty, changed);
    utimesSync(pretty, new Date(Date.now() + 5_000), new Date(Date.now() + 5_000));
    const again = await runImport(otlpImporter, [pretty], sink);
    expect(again.eventsEmitted).toBe(3);
    expect((await sink.queryRows<{ status: string }>("SELECT status FROM tool_calls FINAL WHERE harness = 'claude_code'"))[0]?.status).toBe('error');
    expect(await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(2);
  });
});
