// The streaming Gemini CLI importer (issue 14): the same parse whatever the chunks (against itself
// fed the file in one chunk: events in order, malformed records, counters) on the shipped fixture
// folder and the sample, on fuzzed JSONL files (messages and calls of a few ids appended again and
// again, the metadata late or missing, bad tokens and times, rewinds, junk) and on a small awkward
// file cut at every byte; `.json` documents compact and pretty giving the same events; as
// properties of its own, a message written again anywhere later counted once and real records in
// any order giving the same events (its golden outputs: samples-golden.test.ts); then what it
// holds, and past its bound.
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { geminiCliImporter } from '../../src/importers/gemini-cli/index.ts';
import { geminiReading, parseGeminiFile, type GeminiParser } from '../../src/importers/gemini-cli/parser.ts';
import { splitCompleteLines } from '../../src/importers/lines.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { awkwardFile, expectChunkInvariant, expectSameAtEveryCut, expectSameParse, factsOf, fileOfLines, interleaved, parseInChunks, parseInOneChunk, withCopies } from './chunks.ts';

const FIXTURES = new URL('./fixtures-gemini-cli/', import.meta.url).pathname;
const SAMPLES = corpusOrSkip('samples/gemini_cli', 'the streaming Gemini CLI oracle test on the sample (test/importers/gemini-cli-stream.test.ts)');
const MAIN = '/home/u/.gemini/tmp/abc/chats/session-2026-05-01T10-00-sess1xxx.jsonl';
const SUBAGENT = '/home/u/.gemini/tmp/abc/chats/parent-session-1/sub-7.jsonl';
const BASE = Date.parse('2026-05-01T10:00:00.000Z');

type Obj = Record<string, unknown>;

const messageId = fc.constantFrom('m1', 'm2', 'm3', 'm4');
const time = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 600 }).map((s) => new Date(BASE + s * 1000).toISOString()), weight: 8 },
  { arbitrary: fc.constantFrom(undefined, 'yesterday', 5), weight: 1 },
);
const tokens = fc.oneof(
  { arbitrary: fc.record({ input: fc.integer({ min: 0, max: 3 }).map((n) => n * 100), output: fc.integer({ min: 0, max: 50 }), cached: fc.constantFrom(0, 100), thoughts: fc.constantFrom(0, 7), tool: fc.constantFrom(0, 3) }), weight: 6 },
  { arbitrary: fc.constantFrom(null, { input: -1, output: 1 }, 'none', { input: 10, output: 1, cached: 20 }), weight: 1 },
);
const toolCall = fc.oneof(
  {
    arbitrary: fc.record(
      {
        id: fc.constantFrom('c1', 'c2', 'c3'),
        name: fc.constantFrom('run_shell_command', 'read_file', 'list_issues'),
        args: fc.constantFrom({ command: 'ls' }, { path: 'é/日本' }),
        status: fc.constantFrom('success', 'error', 'cancelled', 'executing', 'awaiting_approval'),
        timestamp: time,
        result: fc.constantFrom([{ functionResponse: { id: 'c1', name: 'x', response: { output: 'out' } } }], [{ functionResponse: { response: { error: 'bad' } } }], 'plain', null),
        displayName: fc.constantFrom('Shell', 'list_issues (github MCP Server)'),
        agentId: fc.constantFrom('agent-a'),
      },
      { requiredKeys: ['id', 'name', 'args', 'status'] },
    ),
    weight: 8,
  },
  { arbitrary: fc.constantFrom<unknown>({ id: 'c1', name: 'x' }, 'not a call', { id: 'c9', name: 'y', args: {}, status: 'weird' }), weight: 1 },
);
const record: fc.Arbitrary<Obj | string> = fc.oneof(
  {
    arbitrary: fc.record(
      { id: messageId, timestamp: time, type: fc.constant('gemini'), model: fc.constantFrom('gemini-3-flash-preview', 'gemini-2.5-pro'), tokens, toolCalls: fc.array(toolCall, { maxLength: 3 }) },
      { requiredKeys: ['id', 'type'] },
    ),
    weight: 8,
  },
  { arbitrary: fc.record({ id: messageId, timestamp: time, type: fc.constant('user'), content: fc.constantFrom([{ text: 'do it' }], [{ functionResponse: { name: 'x' } }], 'hi') }), weight: 3 },
  { arbitrary: fc.record({ id: messageId, type: fc.constantFrom('info', 'error', 'brand_new', '') }), weight: 1 },
  { arbitrary: fc.record({ sessionId: fc.constantFrom('sess-1', 'sess-2', ''), projectHash: fc.constant('abc'), kind: fc.constant('main') }), weight: 1 },
  { arbitrary: fc.constantFrom<Obj | string>({ $rewindTo: 'm1' }, { $set: { lastUpdated: 'x' } }, { nothing: 1 }, '{"broken', '[1]', { id: 'm1', type: 'gemini', toolCalls: 'nope' }), weight: 1 },
);
const lineText = (r: Obj | string): string => (typeof r === 'string' ? r : JSON.stringify(r));
const cutsArb = fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 12 });
const pathArb = fc.constantFrom(MAIN, SUBAGENT);

function fixtureFiles(): string[] {
  const out = execFileSync('find', [FIXTURES, '-type', 'f', '-name', '*.json*'], { encoding: 'utf8' }).trim().split('\n');
  return [...out, ...(SAMPLES ? execFileSync('find', [SAMPLES, '-type', 'f'], { encoding: 'utf8' }).trim().split('\n') : [])].filter((f) => f !== '').sort();
}

describe('the streaming Gemini CLI parser gives the one-chunk parse whatever the chunks', () => {
  it('on the fixture folder and the sample, JSONL read in chunks of 1 MiB, 64 bytes and 1 byte', () => {
    let jsonl = 0;
    for (const f of fixtureFiles()) {
      const data = readFileSync(f);
      const reading = geminiCliImporter.readingOf(f);
      if (reading.kind !== 'lines') continue;
      jsonl++;
      const expected = parseInOneChunk(reading.reading, data);
      expectSameParse(geminiCliImporter.parseFile(f, data), expected);
      for (const cut of [64, 1]) expectSameParse(parseInChunks(reading.reading, data, [cut]), expected);
    }
    expect(jsonl).toBeGreaterThanOrEqual(2);
  });

  it('on generated JSONL files: messages and calls appended again, the metadata late or missing, any chunks', () => {
    const file = fc.record({ records: fc.array(record, { minLength: 1, maxLength: 40 }), crlf: fc.boolean(), bom: fc.boolean(), tail: fc.constantFrom('', '{"id":"m1","type":"gem') });
    fc.assert(
      fc.property(file, cutsArb, pathArb, ({ records, crlf, bom, tail }, cuts, path) => {
        const data = Buffer.from((bom ? '\uFEFF' : '') + records.map(lineText).join(crlf ? '\r\n' : '\n') + '\n' + tail, 'utf8');
        expectChunkInvariant(() => geminiReading(path), data, cuts);
      }),
      { seed: 1418, numRuns: 400 },
    );
  });

  it('on generated `.json` documents: compact and pretty give the same events and malformed records, the sources aside', () => {
    const doc = fc.record({ messages: fc.array(record.filter((r) => typeof r !== 'string' && typeof r['id'] === 'string'), { maxLength: 20 }), meta: fc.boolean() });
    fc.assert(
      fc.property(doc, pathArb, ({ messages, meta }, path) => {
        const jsonPath = path.replace(/\.jsonl$/, '.json');
        const value = { ...(meta ? { sessionId: 'sess-doc', projectHash: 'abc' } : {}), messages };
        const [compact, pretty] = [JSON.stringify(value), JSON.stringify(value, null, 2)].map((t) => parseGeminiFile(jsonPath, Buffer.from(t, 'utf8')));
        expect(factsOf(pretty ?? compact!)).toEqual(factsOf(compact!));
        expect((pretty?.malformed ?? []).map((m) => m.problem)).toEqual((compact?.malformed ?? []).map((m) => m.problem));
        expect(pretty?.skipped).toEqual(compact?.skipped);
      }),
      { seed: 1419, numRuns: 300 },
    );
  });

  it('on a small file cut at every byte: BOM, CR LF, a blank line, invalid UTF-8, a last line with and without a newline', () => {
    const at = (s: number): string => new Date(BASE + s * 1000).toISOString();
    const call = { id: 'c1', name: 'run_shell_command', args: { command: 'ls é' }, status: 'executing', timestamp: at(2) };
    const lines = [
      JSON.stringify({ sessionId: 'sess-cut', projectHash: 'abc', kind: 'main' }),
      JSON.stringify({ id: 'u1', timestamp: at(1), type: 'user', content: [{ text: '日本' }] }),
      JSON.stringify({ id: 'g1', timestamp: at(2), type: 'gemini', model: 'gemini-2.5-pro', tokens: null, toolCalls: [call] }),
      JSON.stringify({ id: 'g1', timestamp: at(2), type: 'gemini', model: 'gemini-2.5-pro', tokens: { input: 100, output: 5 }, toolCalls: [{ ...call, status: 'success', result: 'ok' }] }),
    ];
    for (const tail of [JSON.stringify({ id: 'g1', timestamp: at(2), type: 'gemini', tokens: { input: 100, output: 9 } }), '{"id":"g2","timestamp":"2026-05-01T10:00:09.000Z","type":"gem']) {
      const data = awkwardFile(lines, { tail });
      const whole = expectSameAtEveryCut(() => geminiReading(MAIN), data);
      // g1's usage and its call c1, once each whatever the versions (by hand).
      expect(whole.events.length).toBe(2);
    }
  });
});

describe('the Gemini CLI parser on messages written again or records in another order (properties of its own)', () => {
  const pool = fixtureFiles()
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => readFileSync(f, 'utf8').split('\n'))
    .filter((l) => l.trim() !== '');
  const linesArb = fc.array(fc.constantFrom(...pool), { minLength: 1, maxLength: 40 });
  const parse = (lines: readonly string[]): ReturnType<typeof parseGeminiFile> => parseGeminiFile(MAIN, fileOfLines(lines));

  it('a record written again anywhere later (the same version of a message) changes no event', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 6 }), (lines, copies) => {
        expect(factsOf(parse(withCopies(lines, copies)))).toEqual(factsOf(parse(lines)));
      }),
      { seed: 1427, numRuns: 300 },
    );
  });

  it('the records of different messages in another order (each message\'s versions in order) give the same events; a call\'s turn is the prompt before it: left out', () => {
    // The session's metadata and the `$` records (rewinds, sets) keep their places.
    const messageOf = (text: string): string | null => {
      const v = JSON.parse(text) as Obj;
      return typeof v['id'] === 'string' && typeof v['type'] === 'string' ? v['id'] : null;
    };
    fc.assert(
      fc.property(linesArb, fc.array(fc.nat(), { minLength: 1, maxLength: 60 }), (lines, picks) => {
        expect(factsOf(parse(interleaved(lines, messageOf, picks)), ['turn_id'])).toEqual(factsOf(parse(lines), ['turn_id']));
      }),
      { seed: 1428, numRuns: 300 },
    );
  });
});

describe('what the streaming Gemini CLI parser holds', () => {
  it('on the fixture session: the message and calls still being written, not the file', () => {
    const file = fixtureFiles().find((f) => f.endsWith('session-2026-04-29T21-39-7c1e4a2b.jsonl')) ?? '';
    const { lines } = splitCompleteLines(readFileSync(file));
    const reading = geminiReading(file);
    for (const l of lines) reading.index.scan(l);
    let emitted = 0;
    let peak = 0;
    const parser = reading.parser({ event: () => emitted++, malformed: () => undefined }) as GeminiParser;
    for (const l of lines) {
      parser.line(l);
      peak = Math.max(peak, parser.heldItems);
    }
    parser.end();
    expect(emitted).toBe(13);
    expect(peak).toBeLessThan(emitted);
  });

  it('past its bound writes the first held message as it stands; its later version is a malformed record, the rest as before', () => {
    const at = (s: number): string => new Date(BASE + s * 1000).toISOString();
    const big = 'z'.repeat(3000);
    const gem = (id: string, s: number, extra: Obj): string => JSON.stringify({ id, timestamp: at(s), type: 'gemini', model: 'gemini-2.5-pro', ...extra });
    const lines = [
      JSON.stringify({ sessionId: 'sess-b', projectHash: 'abc' }),
      gem('slow', 1, { tokens: { input: 10, output: 1 } }),
      ...Array.from({ length: 8 }, (_, i) => gem(`fast${i}`, 2 + i, { tokens: { input: 100, output: i }, toolCalls: [{ id: `call${i}`, name: 'read_file', args: { p: i }, status: 'success', result: big }] })),
      gem('slow', 1, { tokens: { input: 10, output: 99 } }),
    ];
    const data = Buffer.from(`${lines.join('\n')}\n`);
    // Unbounded: the slow message's last version wins (nine usages and eight calls, no malformed record).
    const expected = parseGeminiFile(MAIN, data);
    expect(expected.events).toHaveLength(17);
    expect(expected.malformed).toEqual([]);
    const bounded = parseGeminiFile(MAIN, data, { maxHeldChars: 15_000 });
    const slowOf = (events: readonly { envelope: { text: string } }[]): Obj => JSON.parse(events.find((e) => e.envelope.text.includes('"request_id":"slow"'))?.envelope.text ?? '{}') as Obj;
    expect(slowOf(expected.events)).toMatchObject({ output_tokens: 99 });
    expect(slowOf(bounded.events)).toMatchObject({ output_tokens: 1 });
    // Written as it stood, the slow message's usage is completed by its first record (the whole
    // file's came last, from its second); every other event is unchanged, in the same order.
    expect(bounded.events[0]?.source).toBe(`${MAIN}:2`);
    const others = (events: readonly { envelope: { text: string } }[]): string[] => events.map((e) => e.envelope.text).filter((l) => !l.includes('"request_id":"slow"'));
    expect(others(bounded.events)).toEqual(others(expected.events));
    expect(bounded.malformed?.map((m) => [m.line, m.problem])).toEqual([[11, 'already_written']]);
    expect(bounded.skipped).toMatchObject({ written_before_final: 1 });
  });
});
