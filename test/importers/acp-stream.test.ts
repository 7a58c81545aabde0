// The streaming ACP importer (issue 14): the same parse whatever the chunks (against itself fed
// the file in one chunk: calls in order, malformed records, counters) on the shipped captures, on
// fuzzed captures (updates of a few calls in a few sessions interleaved, announced late or never,
// permission requests, the agent named after its calls, lines without times, junk) and on a small
// awkward file cut at every byte; as properties of its own, the updates of different calls
// interleaved otherwise and a notification delivered twice giving the same calls (its golden
// outputs: samples-golden.test.ts); then what it holds, and what happens past its bound.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acpImporter } from '../../src/importers/acp/index.ts';
import { acpReading, parseAcpFile, type AcpParser } from '../../src/importers/acp/parser.ts';
import { splitCompleteLines } from '../../src/importers/lines.ts';
import { awkwardFile, expectChunkInvariant, expectSameAtEveryCut, expectSameParse, factsOf, fileOfLines, interleaved, parseInChunks, parseInOneChunk } from './chunks.ts';

const FIXTURES = new URL('./fixtures-acp/', import.meta.url).pathname;
const PATH = '/captures/session.jsonl';
const BASE = Date.parse('2026-12-09T10:03:10.000Z');

type Rec = Record<string, unknown>;

const session = fc.constantFrom('s1', 's2', '');
const callId = fc.constantFrom('c1', 'c2', 'c3');
const meta = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom({ 'x.ai/tool': { version: 1, name: 'bash', namespace: 'grok_build_concise', kind: 'execute' } }, { claudeCode: { toolName: 'Read' } }, { 'x.ai/tool': { name: 'use_tool', namespace: 'mcp' } }),
);
const toolFields = fc.record(
  {
    toolCallId: fc.oneof({ arbitrary: callId, weight: 9 }, { arbitrary: fc.constant(''), weight: 1 }),
    title: fc.constantFrom('Read ledger.go', 'Searching the web', ''),
    kind: fc.constantFrom('read', 'execute', 'other'),
    status: fc.constantFrom('pending', 'in_progress', 'completed', 'failed'),
    content: fc.constantFrom([{ type: 'content', content: { type: 'text', text: 'out' } }], [{ type: 'content', content: { type: 'image', data: '' } }], [{ type: 'diff', path: 'a', oldText: '', newText: 'b' }]),
    rawInput: fc.constantFrom({ command: 'ls', note: '\u2248' }, 'plain string', null),
    rawOutput: fc.constantFrom({ exit_code: 1 }, 'text out', null),
    _meta: meta,
  },
  { requiredKeys: ['toolCallId'] },
);
const time = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 100_000 }).map((ms) => new Date(BASE + ms).toISOString()), weight: 5 },
  { arbitrary: fc.integer({ min: 0, max: 100 }).map((s) => BASE / 1000 + s), weight: 1 },
  { arbitrary: fc.constant(undefined), weight: 3 },
);
const message: fc.Arbitrary<Rec> = fc.oneof(
  { arbitrary: fc.tuple(fc.constantFrom('tool_call', 'tool_call_update', 'tool_call_update'), session, toolFields).map(([k, s, f]) => ({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: s, update: { sessionUpdate: k, ...f } } })), weight: 10 },
  { arbitrary: fc.tuple(session, toolFields, fc.integer({ min: 10, max: 20 })).map(([s, f, id]) => ({ jsonrpc: '2.0', id, method: 'session/request_permission', params: { sessionId: s, toolCall: f } })), weight: 2 },
  { arbitrary: fc.constantFrom('grok-build', 'claude-code-acp', 'codex-acp', 'mystery').map((name) => ({ jsonrpc: '2.0', id: 0, result: { agentInfo: { name } } })), weight: 1 },
  { arbitrary: fc.constant({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} }), weight: 1 },
  { arbitrary: fc.tuple(fc.integer({ min: 1, max: 3 }), session).map(([id, s]) => ({ jsonrpc: '2.0', id, method: 'session/prompt', params: { sessionId: s, prompt: [] } })), weight: 2 },
  { arbitrary: fc.tuple(fc.integer({ min: 1, max: 3 }), session, fc.constantFrom('grok-4', 'claude')).map(([id, s, m]) => ({ jsonrpc: '2.0', id, result: { sessionId: s, models: { currentModelId: m } } })), weight: 1 },
  { arbitrary: fc.tuple(session, fc.constantFrom('grok-code-fast-1', 'o3')).map(([s, m]) => ({ jsonrpc: '2.0', method: 'session/set_model', params: { sessionId: s, modelId: m } })), weight: 1 },
  { arbitrary: fc.constantFrom<Rec>({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1', update: { sessionUpdate: 'agent_message_chunk' } } }, { jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1' } }, { jsonrpc: '2.0', method: 'session/cancel', params: {} }), weight: 1 },
);
/** A captured line: the message bare (maybe with a time), in a recorder's wrapper, or bare update params; or junk. */
const line: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.tuple(message, time).map(([m, ts]) => JSON.stringify(ts === undefined ? m : { ...m, ts })), weight: 4 },
  { arbitrary: fc.tuple(message, time, fc.constantFrom('msg', 'message', 'payload')).map(([m, ts, key]) => JSON.stringify({ ...(ts === undefined ? {} : { ts }), dir: 'in', [key]: m })), weight: 4 },
  { arbitrary: fc.tuple(session, toolFields, fc.constantFrom('tool_call', 'tool_call_update')).map(([s, f, k]) => JSON.stringify({ sessionId: s, update: { sessionUpdate: k, ...f } })), weight: 1 },
  { arbitrary: fc.constantFrom('{"broken', '[]', '{"header":"recorder v1"}', '7'), weight: 1 },
);

const fileArb = fc
  .record({ lines: fc.array(line, { minLength: 1, maxLength: 40 }), crlf: fc.boolean(), tail: fc.constantFrom('', '{"ts":1,"msg":{"jsonrpc":"2.0","meth') })
  .map(({ lines, crlf, tail }) => Buffer.from(lines.join(crlf ? '\r\n' : '\n') + '\n' + tail, 'utf8'));
const cutsArb = fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 12 });
const fallback = fc.constantFrom<{ fallbackTimeMs?: number }>({}, { fallbackTimeMs: BASE });

describe('the streaming ACP parser gives the one-chunk parse whatever the chunks', () => {
  it('on the shipped captures, read in chunks of 1 MiB, 64 bytes and 1 byte, with and without the file time', () => {
    const files = readdirSync(FIXTURES).filter((n) => n.endsWith('.jsonl'));
    expect(files.length).toBe(2);
    for (const name of files) {
      const path = join(FIXTURES, name);
      const data = readFileSync(path);
      for (const options of [{}, { fallbackTimeMs: BASE }]) {
        const expected = parseInOneChunk(acpReading(path, options), data);
        // (The bare capture has no times: without the file's, its calls are malformed records.)
        expect(expected.events.length + (expected.malformed?.length ?? 0)).toBeGreaterThan(0);
        expectSameParse(parseAcpFile(path, data, options), expected);
        for (const cut of [1024 * 1024, 64, 1]) expectSameParse(parseInChunks(acpReading(path, options), data, [cut]), expected);
      }
      // The importer's own reading takes the file's time as the fallback, as its parseFile does.
      const reading = acpImporter.readingOf(path);
      if (reading.kind !== 'lines') expect.fail('ACP captures are read line by line');
      expectSameParse(parseInChunks(reading.reading, data, [4096]), acpImporter.parseFile(path, data));
    }
  });

  it('on generated captures: interleaved updates of a few calls, late announcements, the agent named last, any chunks', () => {
    fc.assert(
      fc.property(fileArb, cutsArb, fallback, (data, cuts, options) => {
        expectChunkInvariant(() => acpReading(PATH, options), data, cuts);
      }),
      { seed: 1416, numRuns: 400 },
    );
  });

  it('on real lines of the captures shuffled, copied and dropped, any chunks', () => {
    const pool = readdirSync(FIXTURES)
      .filter((n) => n.endsWith('.jsonl'))
      .flatMap((n) => readFileSync(join(FIXTURES, n), 'utf8').split('\n'))
      .filter((l) => l.trim() !== '');
    const mixed = fc.array(fc.oneof({ arbitrary: fc.constantFrom(...pool), weight: 8 }, { arbitrary: line, weight: 2 }), { minLength: 1, maxLength: 50 });
    fc.assert(
      fc.property(mixed, cutsArb, fallback, (lines, cuts, options) => {
        const data = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
        expectChunkInvariant(() => acpReading(PATH, options), data, cuts);
      }),
      { seed: 1417, numRuns: 200 },
    );
  });

  it('on a small file cut at every byte: BOM, CR LF, a blank line, invalid UTF-8, a last line with and without a newline', () => {
    const upd = (ts: number, update: Rec): string => JSON.stringify({ ts: new Date(BASE + ts).toISOString(), dir: 'in', msg: { jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1', update } } });
    const lines = [
      upd(0, { sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'Read é', kind: 'read', status: 'pending' }),
      upd(10, { sessionUpdate: 'tool_call', toolCallId: 'c2', title: 'bash', kind: 'execute', status: 'in_progress', rawInput: { command: 'ls' } }),
      upd(20, { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: '日本' } }] }),
      JSON.stringify({ jsonrpc: '2.0', id: 0, result: { agentInfo: { name: 'claude-code-acp' } } }),
    ];
    for (const tail of [upd(30, { sessionUpdate: 'tool_call_update', toolCallId: 'c2', status: 'failed', rawOutput: 'boom' }), '{"ts":"2026-12-09T10:03:11.000Z","msg":{"jsonrpc"']) {
      const data = awkwardFile(lines, { tail });
      const whole = expectSameAtEveryCut(() => acpReading(PATH, { fallbackTimeMs: BASE }), data);
      // c1 (read, then completed) and c2 (its failure when the tail is whole), by hand.
      expect(whole.events.length).toBeGreaterThanOrEqual(1);
    }
  });
});

/** A tool line's call (session and toolCallId), or null for any other line (a prompt, a model, the agent, junk). */
function callOf(text: string): string | null {
  try {
    const v = JSON.parse(text) as Rec;
    const m = (v['msg'] ?? v['message'] ?? v['payload'] ?? v) as Rec;
    const params = (m['method'] === 'session/update' ? m['params'] : 'update' in m ? m : undefined) as Rec | undefined;
    const u = params?.['update'] as Rec | undefined;
    if ((u?.['sessionUpdate'] === 'tool_call' || u?.['sessionUpdate'] === 'tool_call_update') && typeof u['toolCallId'] === 'string' && u['toolCallId'] !== '') return `${String(params?.['sessionId'])}\u0000${u['toolCallId']}`;
  } catch {
    // junk: not a tool line
  }
  return null;
}

describe('the ACP parser on updates in another order or delivered twice (properties of its own)', () => {
  const pool = readdirSync(FIXTURES)
    .filter((n) => n.endsWith('.jsonl'))
    .flatMap((n) => readFileSync(join(FIXTURES, n), 'utf8').split('\n'))
    .filter((l) => l.trim() !== '');
  const linesArb = fc.array(fc.oneof({ arbitrary: fc.constantFrom(...pool), weight: 8 }, { arbitrary: line, weight: 2 }), { minLength: 1, maxLength: 50 });
  const parse = (lines: readonly string[], options: { fallbackTimeMs?: number }): ReturnType<typeof parseAcpFile> => parseAcpFile(PATH, fileOfLines(lines), options);

  it('the updates of different calls interleaved otherwise (each call\'s own in order) give the same calls', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.nat(), { minLength: 1, maxLength: 60 }), fallback, (lines, picks, options) => {
        const other = interleaved(lines, callOf, picks);
        expect(factsOf(parse(other, options))).toEqual(factsOf(parse(lines, options)));
      }),
      { seed: 1425, numRuns: 300 },
    );
  });

  it('a line delivered twice in a row gives the same calls', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), fallback, (lines, picks, options) => {
        const twice = lines.flatMap((l, i) => (picks.some((k) => k % lines.length === i) ? [l, l] : [l]));
        expect(factsOf(parse(twice, options))).toEqual(factsOf(parse(lines, options)));
      }),
      { seed: 1426, numRuns: 300 },
    );
  });
});

describe('what the streaming ACP parser holds', () => {
  it('on the Grok Build capture: the calls still open, never all seven', () => {
    const path = join(FIXTURES, 'grok-build-session.capture.jsonl');
    const { lines } = splitCompleteLines(readFileSync(path));
    const reading = acpReading(path);
    for (const l of lines) reading.index.scan(l);
    let emitted = 0;
    let peak = 0;
    const parser = reading.parser({ event: () => emitted++, malformed: () => expect.fail('no malformed record expected') }) as AcpParser;
    for (const l of lines) {
      parser.line(l);
      peak = Math.max(peak, parser.heldItems);
    }
    parser.end();
    expect(emitted).toBe(7);
    expect(peak).toBeLessThanOrEqual(3);
  });

  it('past its bound writes the first open call as it stands; its later update is a malformed record, the rest as before', () => {
    const upd = (ts: number, update: Rec): string => JSON.stringify({ ts: BASE + ts, msg: { jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1', update } } });
    const big = 'y'.repeat(3000);
    const lines = [
      upd(0, { sessionUpdate: 'tool_call', toolCallId: 'slow', title: 'bash', status: 'in_progress' }),
      ...Array.from({ length: 8 }, (_, i) => [
        upd(10 + i, { sessionUpdate: 'tool_call', toolCallId: `fast${i}`, title: 'read', status: 'pending' }),
        upd(11 + i, { sessionUpdate: 'tool_call_update', toolCallId: `fast${i}`, status: 'completed', rawOutput: big }),
      ]).flat(),
      upd(100, { sessionUpdate: 'tool_call_update', toolCallId: 'slow', status: 'completed', rawOutput: 'done' }),
    ];
    const data = Buffer.from(`${lines.join('\n')}\n`);
    // Unbounded: every update reaches its call (nine calls, no malformed record).
    const expected = parseAcpFile(PATH, data);
    expect(expected.events).toHaveLength(9);
    expect(expected.malformed).toEqual([]);
    const bounded = parseAcpFile(PATH, data, { maxHeldChars: 12_000 });
    const slowOf = (events: readonly { envelope: { text: string } }[]): Rec => JSON.parse(events.find((e) => e.envelope.text.includes('"call_id":"slow"'))?.envelope.text ?? '{}') as Rec;
    expect(slowOf(expected.events)).toMatchObject({ status: 'ok', output: 'done' });
    expect(slowOf(bounded.events)).toMatchObject({ status: 'pending' });
    // The slow call started first and stays first; the eight others are unchanged.
    expect(bounded.events[0]?.envelope.text).toContain('"call_id":"slow"');
    expect(bounded.events.slice(1)).toEqual(expected.events.slice(1));
    expect(bounded.malformed?.map((m) => [m.line, m.problem])).toEqual([[18, 'call_already_written']]);
    expect(bounded.skipped).toMatchObject({ call_written_before_final: 1 });
  });
});
