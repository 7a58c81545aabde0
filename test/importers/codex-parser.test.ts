// The Codex rollout parser on inline records (no database): token deltas, call outcomes, joins,
// the legacy format, and the guarantee that every emitted event passes the pipeline's decoder.
// Two path tests list the corpus rollouts (skipped loudly without the corpus, a failure under
// CI=true: see test/helpers/corpus.ts).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeEvent } from '../../src/decode/event.ts';
import { codexImporter } from '../../src/importers/codex/index.ts';
import {
  UNKNOWN_MODEL,
  MAX_EVENT_LINE_BYTES,
  parseCallOutcome,
  parseRollout,
  tokenDelta,
} from '../../src/importers/codex/parser.ts';
import { defaultSessionsDir, listRolloutFiles } from '../../src/importers/codex/paths.ts';
import { readTokenUsage, type TokenUsage } from '../../src/importers/codex/types.ts';
import { stableEventId } from '../../src/importers/envelope.ts';
import { InputError } from '../../src/source/file.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';

const CORPUS_DIR = corpusOrSkip('codex', 'the Codex path tests on the corpus (test/importers/codex-parser.test.ts)');
/** The corpus folder; read only by tests that are skipped when it is absent. */
const CORPUS = CORPUS_DIR ?? '';
const PATH = '/logs/rollout-2025-10-10T01-09-47-0199cee2-0000-7000-8000-000000000001.jsonl';
const SESSION = '0199cee2-0000-7000-8000-000000000001';

type Rec = Readonly<Record<string, unknown>>;

const env = (ts: string, type: string, payload: Rec): Rec => ({ timestamp: ts, type, payload });
const meta = (id = SESSION, extra: Rec = {}): Rec =>
  env('2025-10-10T16:10:00.000Z', 'session_meta', { id, timestamp: '2025-10-10T16:10:00.000Z', cwd: '/w', originator: 'codex_cli_rs', cli_version: '0.44.0', ...extra });
const turn = (ts: string, model: string, extra: Rec = {}): Rec => env(ts, 'turn_context', { cwd: '/w', approval_policy: 'never', model, ...extra });
const usage = (input: number, cached: number, output: number, reasoning: number): Rec => ({
  input_tokens: input,
  cached_input_tokens: cached,
  output_tokens: output,
  reasoning_output_tokens: reasoning,
  total_tokens: input + output,
});
const tokenCount = (ts: string, total: Rec, last: Rec = total, window = 272000): Rec =>
  env(ts, 'event_msg', { type: 'token_count', info: { total_token_usage: total, last_token_usage: last, model_context_window: window }, rate_limits: null });
const call = (ts: string, callId: string, name: string, args: string): Rec =>
  env(ts, 'response_item', { type: 'function_call', name, arguments: args, call_id: callId });
const output = (ts: string, callId: string, out: unknown): Rec => env(ts, 'response_item', { type: 'function_call_output', call_id: callId, output: out });

function rollout(records: readonly (Rec | string)[], opts: { trailingNewline?: boolean } = {}): Buffer {
  const text = records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n');
  return Buffer.from(opts.trailingNewline === false ? text : `${text}\n`, 'utf8');
}

interface Decoded {
  readonly [key: string]: unknown;
}

function parse(records: readonly (Rec | string)[], path = PATH) {
  const parsed = parseRollout(path, rollout(records));
  const events = parsed.events.map((e) => ({ ...e, body: JSON.parse(e.envelope.text) as Decoded }));
  // Every event the importer emits must be accepted by the pipeline as it stands.
  for (const e of parsed.events) {
    const outcome = decodeEvent(Buffer.from(e.envelope.text, 'utf8'), e.source, '2026-01-01 00:00:00.000');
    expect(outcome.kind, `${e.source}: ${outcome.kind === 'dead' ? outcome.dead.detail : ''}`).not.toBe('dead');
  }
  return { ...parsed, events, usage: events.filter((e) => e.body['type'] === 'usage'), calls: events.filter((e) => e.body['type'] === 'tool_call') };
}

const total = (v: Rec): TokenUsage => readTokenUsage(v) as TokenUsage;

describe('tokenDelta: usage is the sum of the deltas of the cumulative total', () => {
  it('counts the first total whole, a repeat as nothing, growth as the difference', () => {
    const a = total(usage(100, 40, 10, 4));
    const b = total(usage(250, 140, 30, 10));
    expect(tokenDelta(a, undefined)).toMatchObject({ input_tokens: 100, cached_input_tokens: 40, output_tokens: 10, reasoning_output_tokens: 4 });
    expect(tokenDelta(a, a)).toBeUndefined();
    expect(tokenDelta(b, a)).toMatchObject({ input_tokens: 150, cached_input_tokens: 100, output_tokens: 20, reasoning_output_tokens: 6 });
  });

  it('a total that goes down starts a new baseline: the new total counts from zero', () => {
    const high = total(usage(5000, 4000, 300, 100));
    const restarted = total(usage(1200, 0, 50, 0));
    expect(tokenDelta(restarted, high)).toMatchObject({ input_tokens: 1200, cached_input_tokens: 0, output_tokens: 50, reasoning_output_tokens: 0 });
    // Only one figure going down is enough (the counter restarted; the others grew again).
    const cachedDown = total(usage(6000, 100, 400, 150));
    expect(tokenDelta(cachedDown, high)).toMatchObject({ input_tokens: 6000, cached_input_tokens: 100 });
  });
});

describe('parseRollout: token_count events', () => {
  const records = [
    meta(),
    turn('2025-10-10T16:10:09.667Z', 'gpt-5-codex', { turn_id: 'turn-1' }),
    env('2025-10-10T16:10:10.093Z', 'event_msg', { type: 'token_count', info: null, rate_limits: { primary: null } }),
    tokenCount('2025-10-10T16:10:34.777Z', usage(16485, 0, 721, 128)),
    // Codex repeats the total (with the same last_token_usage) after tool steps: adds nothing.
    tokenCount('2025-10-10T16:10:35.000Z', usage(16485, 0, 721, 128)),
    tokenCount('2025-10-10T16:16:41.513Z', usage(49545, 16384, 795, 192), usage(33060, 16384, 74, 64)),
    // A lower total: the counter restarted, the new total is new usage.
    turn('2025-10-10T16:20:00.000Z', 'gpt-5', { turn_id: 'turn-2' }),
    tokenCount('2025-10-10T16:20:01.000Z', usage(9000, 1000, 50, 0), usage(9000, 1000, 50, 0), 400000),
  ];
  const parsed = parse(records);

  it('emits one usage event per changed total, with the deltas', () => {
    expect(parsed.usage.map((e) => [e.body['input_tokens'], e.body['cache_read_tokens'], e.body['output_tokens'], e.body['reasoning_tokens']])).toEqual([
      [16485, 0, 721, 128],
      [33060, 16384, 74, 64],
      [9000, 1000, 50, 0],
    ]);
    expect(parsed.skipped['token_count:repeated']).toBe(1);
    expect(parsed.skipped['token_count:no_info']).toBe(1);
  });

  it('never sums last_token_usage', () => {
    // Line 6 says its last request was 33 060 input; the totals say the same. Were a repeat's
    // last_token_usage summed, input would be 16 485 more.
    const input = parsed.usage.reduce((n, e) => n + (e.body['input_tokens'] as number), 0);
    expect(input).toBe(16485 + 33060 + 9000);
  });

  it('carries harness, session, turn, model, window, request id and a stable event id', () => {
    const [first, , third] = parsed.usage;
    expect(first?.body).toMatchObject({
      harness: 'codex',
      session_id: SESSION,
      turn_id: 'turn-1',
      model: 'gpt-5-codex',
      context_window_tokens: 272000,
      request_id: `${SESSION}:4`,
      event_id: stableEventId('codex', SESSION, 'token_count:4'),
      ts: '2025-10-10T16:10:34.777Z',
    });
    expect(third?.body).toMatchObject({ turn_id: 'turn-2', model: 'gpt-5', context_window_tokens: 400000 });
    expect(first?.source).toBe(`${PATH}:4`);
    expect(parseRollout(PATH, rollout(records)).events.map((e) => e.envelope.text)).toEqual(parsed.events.map((e) => e.envelope.text));
  });

  it('sets endOffset to the end of the line that completed the event', () => {
    const data = rollout(records);
    const lineEnds: number[] = [];
    for (let i = 0; i < data.length; i++) if (data[i] === 0x0a) lineEnds.push(i + 1);
    expect(parsed.usage.map((e) => e.endOffset)).toEqual([lineEnds[3], lineEnds[5], lineEnds[7]]);
  });

  it('falls back to the session meta model, then to no model (unknown, never gpt-5)', () => {
    const withMeta = parse([meta(SESSION, { model: 'o4-mini' }), tokenCount('2025-10-10T16:10:34.777Z', usage(10, 0, 1, 0))]);
    expect(withMeta.usage[0]?.body['model']).toBe('o4-mini');
    const bare = parse([meta(), tokenCount('2025-10-10T16:10:34.777Z', usage(10, 0, 1, 0))]);
    expect(bare.usage[0]?.body['model']).toBe(UNKNOWN_MODEL);
  });

  it('takes the turn id from task_started when turn_context has none', () => {
    const p = parse([
      meta(),
      env('2025-10-10T16:10:00.100Z', 'event_msg', { type: 'task_started', turn_id: 'turn-9', model_context_window: 258400 }),
      turn('2025-10-10T16:10:00.200Z', 'gpt-5-codex'),
      env('2025-10-10T16:10:01.000Z', 'event_msg', { type: 'token_count', info: { total_token_usage: usage(10, 0, 1, 0), last_token_usage: usage(10, 0, 1, 0) } }),
    ]);
    expect(p.usage[0]?.body).toMatchObject({ turn_id: 'turn-9', context_window_tokens: 258400 });
  });

  it('returns a token_count with malformed figures as malformed, with its line', () => {
    const records = [meta(), tokenCount('2025-10-10T16:10:34.777Z', { input_tokens: -1, output_tokens: 2 }), tokenCount('2025-10-10T16:10:35.000Z', { input_tokens: 1.5, output_tokens: 2 })];
    const p = parse(records);
    expect(p.usage).toHaveLength(0);
    expect(p.malformed?.map((m) => [m.line, m.problem, m.raw, m.detail])).toEqual([
      [2, 'token_count:invalid', JSON.stringify(records[1]), '`payload.info.total_token_usage.input_tokens` is the number -1, not a non-negative integer.'],
      [3, 'token_count:invalid', JSON.stringify(records[2]), '`payload.info.total_token_usage.input_tokens` is the number 1.5, not a non-negative integer.'],
    ]);
    expect(p.skipped).toEqual({});
  });
});

describe('parseCallOutcome: success read from the output', () => {
  const shell = (text: string) => parseCallOutcome('shell', { text, success: undefined });

  it('reads the 0.4x JSON shape: exit code and duration', () => {
    expect(shell('{"output":"ok\\n","metadata":{"exit_code":0,"duration_seconds":1.2344}}')).toEqual({ status: 'ok', durationMs: 1234 });
    expect(shell('{"output":"awk: fatal","metadata":{"exit_code":2,"duration_seconds":0.0}}')).toEqual({ status: 'error', error: 'exit code 2', durationMs: 0 });
  });

  it('reads "Exit code: N" and "Process exited with code N" headers, never the command output', () => {
    expect(shell('Exit code: 1\nWall time: 0.5 seconds\nOutput:\nboom')).toEqual({ status: 'error', error: 'exit code 1', durationMs: 500 });
    expect(shell('Exit code: 0\nWall time: 2 seconds\nTotal output lines: 1\nOutput:\nExit code: 7')).toEqual({ status: 'ok', durationMs: 2000 });
    const exec = 'Chunk ID: 4f1c\nWall time: 2.0004 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\nProcess exited with code 9\n';
    expect(parseCallOutcome('exec_command', { text: exec, success: undefined })).toEqual({ status: 'ok', durationMs: 2000 });
    const failed = 'Chunk ID: 4f1c\nWall time: 0.1000 seconds\nProcess exited with code 127\nOutput:\nbash: nope: command not found\n';
    expect(parseCallOutcome('exec_command', { text: failed, success: undefined })).toEqual({ status: 'error', error: 'exit code 127', durationMs: 100 });
    // Still running when the call returned: not a failure.
    const running = 'Chunk ID: 1\nWall time: 10.0 seconds\nProcess running with session ID 3\nOriginal token count: 0\nOutput:\n';
    expect(parseCallOutcome('exec_command', { text: running, success: undefined })).toEqual({ status: 'ok', durationMs: 10000 });
  });

  it('recognises rejections and Codex failures', () => {
    expect(shell('exec command rejected: "dangerous command detected; rejected by user approval settings"').status).toBe('error');
    expect(shell('failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 101, stdout: , stderr: x')).toMatchObject({
      status: 'error',
      error: 'failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 101, stdout: , stderr: x',
    });
    expect(shell('failed to parse function arguments: missing field `command` at line 1 column 377').status).toBe('error');
    expect(shell("error: invalid hunk at line 4, '' is not a valid hunk header.").status).toBe('error');
    expect(parseCallOutcome('apply_patch', { text: 'error: Failed to find expected lines ["x"] in a.ts', success: undefined }).status).toBe('error');
    expect(parseCallOutcome('apply_patch', { text: 'Done!', success: undefined })).toEqual({ status: 'ok' });
    expect(parseCallOutcome('update_plan', { text: 'Plan updated', success: undefined })).toEqual({ status: 'ok' });
    expect(shell('aborted').status).toBe('error');
  });

  it('reads MCP results: content arrays and structured results are ok, isError and client errors are not', () => {
    const mcp = (tool: string, text: string) => parseCallOutcome(tool, { text, success: undefined });
    expect(mcp('serena__find_file', '{"result":"{\\"files\\": []}"}')).toEqual({ status: 'ok' });
    expect(mcp('time__get_current_time', '[{"text":"{}","type":"text"}]')).toEqual({ status: 'ok' });
    expect(mcp('mcp__github__create_issue', '{"content":[{"type":"text","text":"no token"}],"isError":true}')).toMatchObject({ status: 'error' });
    expect(mcp('context7__get-library-docs', 'err: tool call failed: timeout')).toMatchObject({ status: 'error', error: 'err: tool call failed: timeout' });
    // "error: " is Codex's prefix for its own tools only: an MCP tool may print it as data.
    expect(mcp('git__git_log', 'error: none found')).toEqual({ status: 'ok' });
  });

  it('lets a persisted success flag decide', () => {
    expect(parseCallOutcome('shell', { text: 'anything', success: false })).toMatchObject({ status: 'error', error: 'anything' });
    expect(parseCallOutcome('shell', { text: 'error: but fine', success: true })).toEqual({ status: 'ok' });
  });
});

describe('parseRollout: tool calls', () => {
  it('joins function_call with its output by call_id, in the order calls complete', () => {
    const p = parse([
      meta(),
      turn('2025-10-10T16:16:40.994Z', 'gpt-4.1'),
      call('2025-10-10T16:16:45.011Z', 'call_a', 'shell', '{"command":["cp","a","b"]}'),
      call('2025-10-10T16:16:45.012Z', 'call_b', 'update_plan', '{"plan":[{"step":"x","status":"pending"}]}'),
      output('2025-10-10T16:16:45.100Z', 'call_b', 'Plan updated'),
      output('2025-10-10T16:16:46.000Z', 'call_a', '{"output":"","metadata":{"exit_code":0,"duration_seconds":0.9}}'),
    ]);
    expect(p.calls.map((c) => [c.body['call_id'], c.body['status'], c.source])).toEqual([
      ['call_b', 'ok', `${PATH}:5`],
      ['call_a', 'ok', `${PATH}:6`],
    ]);
    expect(p.calls[1]?.body).toMatchObject({
      event_id: stableEventId('codex', SESSION, 'call_a'),
      ts: '2025-10-10T16:16:45.011Z',
      harness: 'codex',
      model: 'gpt-4.1',
      tool: 'shell',
      input: '{"command":["cp","a","b"]}',
      output: '{"output":"","metadata":{"exit_code":0,"duration_seconds":0.9}}',
      duration_ms: 900,
    });
  });

  it('keeps invalid-JSON arguments verbatim as the input string', () => {
    const args = '{"project": "/home/u/p", "note": "runaway \u65e5\u672c\u8a9e ... ';
    const p = parse([meta(), call('2025-10-10T16:00:01.000Z', 'call_bad', 'serena__activate_project', args), output('2025-10-10T16:00:02.000Z', 'call_bad', 'failed to parse function arguments: EOF while parsing')]);
    expect(p.calls).toHaveLength(1);
    expect(p.calls[0]?.body).toMatchObject({ input: args, status: 'error', tool: 'serena__activate_project' });
  });

  it('passes MCP names through as logged, old and new style', () => {
    const p = parse([
      meta(),
      call('2025-10-10T16:00:01.000Z', 'c1', 'serena__find_symbol', '{"name_path":"X"}'),
      call('2025-10-10T16:00:02.000Z', 'c2', 'mcp__context7__resolve-library-id', '{"libraryName":"lua"}'),
    ]);
    expect(p.calls.map((c) => c.body['tool'])).toEqual(['serena__find_symbol', 'mcp__context7__resolve-library-id']);
  });

  it('reads custom_tool_call (freeform apply_patch) with a content-item output', () => {
    const patch = '*** Begin Patch\n*** Add File: gamma.txt\n+synthetic\n*** End Patch';
    const p = parse([
      meta(),
      env('2026-01-02T03:04:11.000Z', 'response_item', { type: 'custom_tool_call', name: 'apply_patch', input: patch, call_id: 'call-custom-001', status: 'completed' }),
      env('2026-01-02T03:04:12.000Z', 'response_item', { type: 'custom_tool_call_output', call_id: 'call-custom-001', output: [{ type: 'output_text', text: 'Done!' }] }),
    ]);
    expect(p.calls[0]?.body).toMatchObject({ tool: 'apply_patch', input: patch, output: 'Done!', status: 'ok' });
  });

  it('reads local_shell_call: the action object verbatim as the input, joined with its output', () => {
    const action = '{"type":"exec","command":["bash","-lc","echo \\u00e9"],"timeout_ms":90071992547409930,"working_directory":"/w"}';
    const line = `{"timestamp":"2025-10-10T16:00:01.000Z","type":"response_item","payload":{"type":"local_shell_call","call_id":"ls_1","status":"completed","action":${action}}}`;
    const p = parse([meta(), line, output('2025-10-10T16:00:02.000Z', 'ls_1', '{"output":"é\\n","metadata":{"exit_code":0,"duration_seconds":0.01}}')]);
    expect(p.calls[0]?.body).toMatchObject({ tool: 'shell', status: 'ok', duration_ms: 10 });
    expect(p.calls[0]?.envelope.text).toContain(`"input":${action}}`);
  });

  it('counts images in content-item outputs', () => {
    const p = parse([
      meta(),
      call('2026-01-02T03:04:11.000Z', 'c1', 'view_image', '{"path":"/w/a.png"}'),
      output('2026-01-02T03:04:12.000Z', 'c1', [{ type: 'input_image', image_url: 'data:image/png;base64,AAAA' }]),
    ]);
    expect(p.calls[0]?.body).toMatchObject({ images: 1, status: 'ok' });
  });

  it('a call without an output is pending, completed by its own line; the output completes it later', () => {
    const head = [meta(), call('2025-10-10T16:00:01.000Z', 'c1', 'shell', '{"command":["sleep","60"]}')];
    const before = parse(head);
    expect(before.calls[0]?.body).toMatchObject({ status: 'pending' });
    expect(before.calls[0]?.body['output']).toBeUndefined();
    const after = parse([...head, output('2025-10-10T16:01:01.000Z', 'c1', 'Exit code: 0\nWall time: 60 seconds\nOutput:\n')]);
    expect(after.calls[0]?.body).toMatchObject({ status: 'ok', duration_ms: 60000, event_id: before.calls[0]?.body['event_id'] });
    expect(after.calls[0]?.endOffset).toBeGreaterThan(before.calls[0]?.endOffset ?? Infinity);
  });

  it('lets an Extended-persistence end event decide status and duration', () => {
    const p = parse([
      meta(),
      call('2025-10-10T16:00:01.000Z', 'c1', 'exec_command', '{"cmd":"make"}'),
      env('2025-10-10T16:00:03.000Z', 'event_msg', { type: 'exec_command_end', call_id: 'c1', exit_code: 2, duration: { secs: 2, nanos: 5_000_000 } }),
      output('2025-10-10T16:00:03.001Z', 'c1', 'make: *** no rule'),
      call('2025-10-10T16:00:04.000Z', 'c2', 'mcp__example__tool', '{}'),
      output('2025-10-10T16:00:04.500Z', 'c2', '[{"type":"text","text":"bad"}]'),
      env('2025-10-10T16:00:04.600Z', 'event_msg', { type: 'mcp_tool_call_end', call_id: 'c2', duration: { secs: 0, nanos: 4_000_000 }, result: { Ok: { content: [], isError: true } } }),
    ]);
    expect(p.calls[0]?.body).toMatchObject({ call_id: 'c1', status: 'error', error: 'exit code 2', duration_ms: 2005 });
    expect(p.calls[1]?.body).toMatchObject({ call_id: 'c2', status: 'error', duration_ms: 4 });
    expect(p.calls[1]?.source).toBe(`${PATH}:7`);
  });

  it('truncates an output that would push the event past the size limit, and counts it', () => {
    const big = 'x'.repeat(2 * 1024 * 1024) + '"\\\u00e9'.repeat(400_000);
    const p = parse([meta(), call('2025-10-10T16:00:01.000Z', 'c1', 'shell', '{"command":["cat","big"]}'), output('2025-10-10T16:00:02.000Z', 'c1', big)]);
    expect(p.skipped['output_truncated']).toBe(1);
    const line = p.calls[0]?.envelope.text ?? '';
    expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(MAX_EVENT_LINE_BYTES);
    expect(Buffer.byteLength(line, 'utf8')).toBeGreaterThan(MAX_EVENT_LINE_BYTES - 1024);
    expect(String(p.calls[0]?.body['output'])).toMatch(/\[toolcanon: output truncated, \d+ of \d+ bytes kept\]$/);
  });

  it('skips duplicate call ids and outputs without a call, counting them', () => {
    const p = parse([
      meta(),
      call('2025-10-10T16:00:01.000Z', 'c1', 'shell', '{}'),
      call('2025-10-10T16:00:01.000Z', 'c1', 'shell', '{}'),
      output('2025-10-10T16:00:02.000Z', 'c1', 'ok'),
      output('2025-10-10T16:00:02.000Z', 'c1', 'again'),
      output('2025-10-10T16:00:02.000Z', 'zz', 'orphan'),
    ]);
    expect(p.calls).toHaveLength(1);
    expect(p.skipped).toMatchObject({ duplicate_call_id: 1, duplicate_output: 1, output_without_call: 1 });
  });
});

describe('parseRollout: formats and bad records', () => {
  it('reads the August 2025 legacy format: bare first line, bare items, state records', () => {
    const first = { id: '8b3d642f-5974-47c8-b9d4-09efcc975a02', timestamp: '2025-08-14T18:42:29.205Z', instructions: null, git: { branch: 'main' } };
    const p = parse(
      [
        first,
        { record_type: 'state' },
        { type: 'message', id: null, role: 'user', content: [{ type: 'input_text', text: 'hello' }] },
        { type: 'function_call', id: 'fc_689d', name: 'shell', arguments: '{"command":["bash","-lc","ls"]}', call_id: 'call_lKK' },
        { type: 'function_call_output', call_id: 'call_lKK', output: '{"output":"total 60\\n","metadata":{"exit_code":0,"duration_seconds":0.0}}' },
        { record_type: 'state' },
      ],
      '/logs/rollout-2025-08-14T18-42-29-8b3d642f-5974-47c8-b9d4-09efcc975a02.jsonl',
    );
    expect(p.calls).toHaveLength(1);
    expect(p.calls[0]?.body).toMatchObject({
      session_id: '8b3d642f-5974-47c8-b9d4-09efcc975a02',
      ts: '2025-08-14T18:42:29.205Z',
      model: UNKNOWN_MODEL,
      tool: 'shell',
      status: 'ok',
      duration_ms: 0,
      turn_id: '',
    });
    expect(p.skipped).toEqual({ 'legacy:state': 2, 'response_item:message': 1 });
    expect(p.recordsRead).toBe(6);
  });

  it('keeps the first session_meta as the session of a forked rollout', () => {
    const p = parse([meta(SESSION), meta('parent-session'), tokenCount('2025-10-10T16:10:34.777Z', usage(10, 0, 1, 0))]);
    expect(p.usage[0]?.body['session_id']).toBe(SESSION);
    expect(p.skipped['session_meta:other']).toBe(1);
  });

  it('returns broken records as malformed (line, bytes), counts unknown ones, never throws', () => {
    const records: (Rec | string)[] = [
      meta(),
      'not json at all',
      '[1,2,3]',
      '42',
      env('2025-10-10T16:00:00.000Z', 'world_state', { x: 1 }),
      env('2025-10-10T16:00:00.000Z', 'brand_new_type', { x: 1 }),
      { type: 'response_item', payload: 'not an object' },
      env('2025-10-10T16:00:00.000Z', 'response_item', { type: 'function_call', name: 'shell' }),
      env('2025-10-10T16:00:00.000Z', 'event_msg', { type: 'agent_message', message: 'hi' }),
      { something: 'else' },
      env('2025-10-10T16:00:00.000Z', 'response_item', { type: 'ghost_snapshot' }),
      env('yesterday', 'response_item', { type: 'function_call', name: 'shell', arguments: '{}', call_id: 'c1' }),
      env('2025-10-10T16:00:00.000Z', 'response_item', { type: 'function_call_output', call_id: 'c2', output: 7 }),
      env('2025-10-10T16:00:00.000Z', 'event_msg', { type: 'exec_command_end', exit_code: 0 }),
      env('2025-10-10T16:00:00.000Z', 'event_msg', { type: 'exec_command_end', call_id: 'nowhere', exit_code: 0 }),
    ];
    const p = parse(records);
    expect(p.events).toHaveLength(0);
    const data = rollout(records);
    const lineEnd = (n: number): number => data.toString('utf8').split('\n').slice(0, n).reduce((bytes, l) => bytes + Buffer.byteLength(l) + 1, 0);
    expect(p.malformed?.map((m) => [m.line, m.problem])).toEqual([
      [2, 'invalid_json'],
      [3, 'not_an_object'],
      [4, 'not_an_object'],
      [7, 'malformed:envelope'],
      [8, 'malformed:function_call'],
      [10, 'malformed:record'],
      [12, 'bad_timestamp'],
      [13, 'malformed:function_call_output'],
      [14, 'malformed:exec_command_end'],
    ]);
    for (const m of p.malformed ?? []) {
      const record = records[m.line - 1];
      expect(m.raw).toBe(typeof record === 'string' ? record : JSON.stringify(record));
      expect(m.endOffset).toBe(lineEnd(m.line));
    }
    expect(p.malformed?.find((m) => m.line === 8)?.detail).toBe('`call_id` of a function_call is missing, not a non-empty string.');
    // What stays a counter: record types and events skipped on purpose, and an end event whose
    // call is not in the file.
    expect(p.skipped).toEqual({
      world_state: 1,
      'unknown:brand_new_type': 1,
      'event_msg:agent_message': 1,
      'response_item:ghost_snapshot': 1,
      'event_msg:exec_command_end:without_call': 1,
    });
  });

  it('returns a session_meta without an id as malformed and takes the next one as the session', () => {
    const p = parse([env('2025-10-10T16:10:00.000Z', 'session_meta', { cwd: '/w' }), meta('second-session'), tokenCount('2025-10-10T16:10:34.777Z', usage(10, 0, 1, 0))]);
    expect(p.malformed?.map((m) => [m.line, m.problem, m.detail])).toEqual([[1, 'malformed:session_meta', '`payload.id` is missing, not a non-empty string.']]);
    expect(p.usage[0]?.body['session_id']).toBe('second-session');
    expect(p.skipped).toEqual({});
  });

  it('leaves a truncated last line for later', () => {
    const data = rollout([meta(), tokenCount('2025-10-10T16:10:34.777Z', usage(10, 0, 1, 0))]);
    const cut = Buffer.concat([data, Buffer.from('{"timestamp":"2025-10-10T16:10:40.000Z","type":"event_msg","payload":{"type":"tok')]);
    const p = parseRollout(PATH, cut);
    expect(p.completeBytes).toBe(data.length);
    expect(p.events).toHaveLength(1);
    expect(p.recordsRead).toBe(2);
  });
});

describe('paths', () => {
  it('defaults to ~/.codex/sessions and honours $CODEX_HOME', () => {
    expect(defaultSessionsDir({}, '/home/u')).toBe('/home/u/.codex/sessions');
    expect(defaultSessionsDir({ CODEX_HOME: '/srv/codex' }, '/home/u')).toBe('/srv/codex/sessions');
    expect(defaultSessionsDir({ CODEX_HOME: '  ' }, '/home/u')).toBe('/home/u/.codex/sessions');
    expect(codexImporter.defaultPaths()).toHaveLength(1);
  });

  it.skipIf(!CORPUS_DIR)('lists every rollout under a directory, sorted; a named file is taken as is; a missing path is an error', () => {
    const files = listRolloutFiles([CORPUS]);
    expect(files).toHaveLength(63);
    expect([...files].sort()).toEqual(files);
    expect(listRolloutFiles([files[0] as string, CORPUS])).toHaveLength(63);
    expect(() => listRolloutFiles([join(CORPUS, 'nope')])).toThrow(InputError);
  });

  it.skipIf(!CORPUS_DIR)('follows a symlinked sessions directory without looping', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolcanon-codex-paths-'));
    try {
      mkdirSync(join(dir, 'home'));
      symlinkSync(join(CORPUS, 'sessions'), join(dir, 'home', 'sessions'));
      symlinkSync(dir, join(dir, 'home', 'loop'));
      writeFileSync(join(dir, 'home', 'notes.txt'), 'not a rollout');
      expect(listRolloutFiles([defaultSessionsDir({ CODEX_HOME: join(dir, 'home') })])).toHaveLength(63);
      expect(listRolloutFiles([join(dir, 'home')])).toHaveLength(63);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
