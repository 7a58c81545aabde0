// The streaming opencode importer (issue 14) on its JSONL forms (`run --format json` captures,
// bus event logs, storage dumps): the same parse whatever the chunks (against itself fed the file
// in one chunk: events in order, malformed records, counters) on the samples, on fuzzed files
// (tool parts, step-finish parts and messages of a few ids in a few sessions, updated again, a
// message after its parts) and on a small awkward file cut at every byte; `.json` documents
// compact and pretty giving the same events; as properties of its own, real records in any order
// and written again giving the same events (its golden outputs: samples-golden.test.ts); then
// what it holds, and what happens past its bound.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitCompleteLines } from '../../src/importers/lines.ts';
import { opencodeImporter } from '../../src/importers/opencode/index.ts';
import { opencodeReading, parseOpencodeFile, type OpencodeParser } from '../../src/importers/opencode/parser.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { awkwardFile, expectChunkInvariant, expectSameAtEveryCut, expectSameParse, factsOf, fileOfLines, parseInChunks, parseInOneChunk, permuted, withCopies } from './chunks.ts';

const SAMPLES = corpusOrSkip('samples/opencode', 'the streaming opencode oracle test on the samples (test/importers/opencode-stream.test.ts)');
const PATH = '/captures/opencode-run.jsonl';
const BASE = Date.parse('2026-06-01T09:00:00.000Z');

type Obj = Record<string, unknown>;

const sessionId = fc.constantFrom('ses_1', 'ses_2');
const messageId = fc.constantFrom('msg_1', 'msg_2', 'msg_3');
const ms = fc.integer({ min: 0, max: 100_000 }).map((n) => BASE + n);
const tokens = fc.oneof(
  { arbitrary: fc.record({ input: fc.integer({ min: 0, max: 100 }), output: fc.integer({ min: 0, max: 20 }), reasoning: fc.constantFrom(0, 5), cache: fc.constantFrom({ read: 10, write: 0 }, { read: 0, write: 3 }) }, { requiredKeys: ['input', 'output'] }), weight: 6 },
  { arbitrary: fc.constantFrom<unknown>({ input: 'x', output: 1 }, 3, null), weight: 1 },
);
const message: fc.Arbitrary<Obj> = fc.record(
  {
    id: messageId,
    sessionID: sessionId,
    role: fc.constantFrom('assistant', 'assistant', 'user', ''),
    parentID: fc.constantFrom('msg_u1', 'msg_u2'),
    modelID: fc.constantFrom('gpt-4o-mini', 'claude-sonnet-4'),
    providerID: fc.constantFrom('openai', 'anthropic'),
    time: fc.record({ created: ms, completed: ms }, { requiredKeys: [] }),
    tokens,
  },
  { requiredKeys: ['id', 'sessionID', 'role'] },
);
const toolPart: fc.Arbitrary<Obj> = fc.record(
  {
    id: fc.constantFrom('prt_1', 'prt_2'),
    type: fc.constant('tool'),
    callID: fc.constantFrom('call_1', 'call_2', 'call_3'),
    tool: fc.constantFrom('bash', 'read', ''),
    sessionID: sessionId,
    messageID: messageId,
    state: fc.record(
      {
        status: fc.constantFrom('pending', 'running', 'completed', 'error'),
        input: fc.constantFrom({ command: 'ls é' }, {}, 'str'),
        raw: fc.constantFrom('{"command":"l', ''),
        output: fc.constantFrom('out', '日本'),
        error: fc.constant('boom'),
        time: fc.record({ start: ms, end: ms }, { requiredKeys: [] }),
      },
      { requiredKeys: ['status'] },
    ),
  },
  { requiredKeys: ['type', 'tool', 'state'] },
);
const stepPart: fc.Arbitrary<Obj> = fc.record({ type: fc.constant('step-finish'), sessionID: sessionId, messageID: messageId, tokens }, { requiredKeys: ['type'] });
const record: fc.Arbitrary<Obj | string> = fc.oneof(
  { arbitrary: fc.tuple(fc.constantFrom('tool_use', 'step_finish', 'text'), fc.option(ms, { nil: undefined }), fc.option(sessionId, { nil: undefined }), fc.oneof(toolPart, stepPart)).map(([type, timestamp, sid, part]) => ({ type, ...(timestamp === undefined ? {} : { timestamp }), ...(sid === undefined ? {} : { sessionID: sid }), part })), weight: 5 },
  { arbitrary: fc.oneof(toolPart, stepPart).map((part) => ({ type: 'message.part.updated', properties: { part } })), weight: 4 },
  { arbitrary: message.map((info) => ({ type: 'message.updated', properties: { info } })), weight: 4 },
  { arbitrary: message, weight: 2 },
  { arbitrary: fc.oneof(toolPart, stepPart), weight: 2 },
  { arbitrary: fc.constantFrom<Obj | string>({ type: 'session.idle', properties: {} }, { type: 'message.updated', properties: { info: { id: 'x' } } }, { role: 'assistant' }, { id: 'ses_1', title: 'a session' }, '{"broken', '[]'), weight: 1 },
);
const lineText = (r: Obj | string): string => (typeof r === 'string' ? r : JSON.stringify(r));
const cutsArb = fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 12 });

describe('the streaming opencode parser gives the one-chunk parse whatever the chunks', () => {
  it.skipIf(!SAMPLES)('on the samples, read in chunks of 1 MiB, 64 bytes and 1 byte', () => {
    const files = readdirSync(SAMPLES ?? '').filter((n) => n.endsWith('.jsonl'));
    expect(files.length).toBe(3);
    for (const name of files) {
      const path = join(SAMPLES ?? '', name);
      const data = readFileSync(path);
      const reading = opencodeImporter.readingOf(path);
      if (reading.kind !== 'lines') expect.fail('a JSONL file is read line by line');
      const expected = parseInOneChunk(reading.reading, data);
      expect(expected.events.length).toBeGreaterThan(0);
      expectSameParse(opencodeImporter.parseFile(path, data), expected);
      for (const cut of [64, 1]) expectSameParse(parseInChunks(reading.reading, data, [cut]), expected);
    }
  });

  it('on generated JSONL files: parts, steps and messages of a few ids updated again, messages after their parts, any chunks', () => {
    const file = fc.record({ records: fc.array(record, { minLength: 1, maxLength: 40 }), crlf: fc.boolean(), tail: fc.constantFrom('', '{"type":"tool_use","part":{"ty') });
    fc.assert(
      fc.property(file, cutsArb, ({ records, crlf, tail }, cuts) => {
        const data = Buffer.from(records.map(lineText).join(crlf ? '\r\n' : '\n') + '\n' + tail, 'utf8');
        expectChunkInvariant(() => opencodeReading(PATH), data, cuts);
      }),
      { seed: 1420, numRuns: 1500 },
    );
  });

  it('on generated `.json` documents, a storage object or an export: compact and pretty give the same events, the sources aside', () => {
    const doc = fc.oneof(
      record.filter((r) => typeof r !== 'string'),
      fc.array(fc.record({ info: message, parts: fc.array(fc.oneof(toolPart, stepPart), { maxLength: 4 }) }), { maxLength: 4 }).map((messages) => ({ info: { id: 'ses_1' }, messages })),
    );
    fc.assert(
      fc.property(doc, fc.constantFrom('/x/export.json', '/s/storage/part/msg_1/prt_1.json', '/s/storage/message/ses_1/msg_1.json'), (value, path) => {
        const [compact, pretty] = [JSON.stringify(value), JSON.stringify(value, null, 1)].map((t) => parseOpencodeFile(path, Buffer.from(t, 'utf8')));
        expect(factsOf(pretty ?? compact!)).toEqual(factsOf(compact!));
        expect((pretty?.malformed ?? []).map((m) => m.problem)).toEqual((compact?.malformed ?? []).map((m) => m.problem));
        expect(pretty?.skipped).toEqual(compact?.skipped);
      }),
      { seed: 1421, numRuns: 300 },
    );
  });

  it('on a small file cut at every byte: BOM, CR LF, a blank line, invalid UTF-8, a last line with and without a newline', () => {
    const part = (status: string, extra: Obj = {}): Obj => ({ id: 'prt_1', type: 'tool', callID: 'call_1', tool: 'bash', sessionID: 'ses_1', messageID: 'msg_1', state: { status, input: { command: 'ls é' }, time: { start: BASE, end: BASE + 900 }, ...extra } });
    const lines = [
      JSON.stringify({ type: 'tool_use', timestamp: BASE, sessionID: 'ses_1', part: part('running') }),
      JSON.stringify({ type: 'message.part.updated', properties: { part: part('completed', { output: '日本' }) } }),
      JSON.stringify({ type: 'step_finish', timestamp: BASE + 1000, sessionID: 'ses_1', part: { type: 'step-finish', sessionID: 'ses_1', messageID: 'msg_1', tokens: { input: 50, output: 5 } } }),
    ];
    const msg = { type: 'message.updated', properties: { info: { id: 'msg_1', sessionID: 'ses_1', role: 'assistant', modelID: 'gpt-4o-mini', providerID: 'openai', parentID: 'msg_u', time: { created: BASE }, tokens: { input: 60, output: 6 } } } };
    for (const tail of [JSON.stringify(msg), '{"type":"message.updated","properties":{"in']) {
      const data = awkwardFile(lines, { tail });
      const whole = expectSameAtEveryCut(() => opencodeReading(PATH), data);
      // call_1 and msg_1's usage (by hand).
      expect(whole.events.length).toBe(2);
    }
  });
});

describe.skipIf(!SAMPLES)('the opencode parser on records in another order or written again (properties of its own)', () => {
  const pool = SAMPLES
    ? readdirSync(SAMPLES)
        .filter((n) => n.endsWith('.jsonl'))
        .flatMap((n) => readFileSync(join(SAMPLES, n), 'utf8').split('\n'))
        .filter((l) => l.trim() !== '')
    : ['{}'];
  const linesArb = fc.array(fc.constantFrom(...pool), { minLength: 1, maxLength: 30 });
  const parse = (lines: readonly string[]): ReturnType<typeof parseOpencodeFile> => parseOpencodeFile(PATH, fileOfLines(lines));

  it('real records in any order give the same events (a message after its parts, a part before its step)', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.nat(), { minLength: 30, maxLength: 30 }), (lines, keys) => {
        expect(factsOf(parse(permuted(lines, keys)))).toEqual(factsOf(parse(lines)));
      }),
      { seed: 1429, numRuns: 300 },
    );
  });

  it('a record written again anywhere later changes no event', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 6 }), (lines, copies) => {
        expect(factsOf(parse(withCopies(lines, copies)))).toEqual(factsOf(parse(lines)));
      }),
      { seed: 1430, numRuns: 300 },
    );
  });
});

describe('what the streaming opencode parser holds', () => {
  it.skipIf(!SAMPLES)('on the run capture: the message of the calls still open, not the file', () => {
    const path = join(SAMPLES ?? '', 'rickywo-Formic__docs_OPENCODE_INTEGRATION_PLAN_run_format_json.jsonl');
    const { lines } = splitCompleteLines(readFileSync(path));
    const reading = opencodeReading(path);
    for (const l of lines) reading.index.scan(l);
    let emitted = 0;
    let peak = 0;
    const parser = reading.parser({ event: () => emitted++, malformed: () => undefined }) as OpencodeParser;
    for (const l of lines) {
      parser.line(l);
      peak = Math.max(peak, parser.heldItems);
    }
    parser.end();
    expect(emitted).toBe(4);
    expect(peak).toBeLessThanOrEqual(4);
  });

  it('past its bound reads the first open group as it stands; a later record of it is a malformed record, the rest as before', () => {
    const big = 'q'.repeat(3000);
    const tool = (call: string, message: string, status: string, output = ''): string =>
      JSON.stringify({ type: 'tool_use', timestamp: BASE, sessionID: 'ses_1', part: { id: call, type: 'tool', callID: call, tool: 'bash', sessionID: 'ses_1', messageID: message, state: { status, input: {}, output, time: { start: BASE } } } });
    const lines = [tool('slow', 'msg_slow', 'running'), ...Array.from({ length: 8 }, (_, i) => tool(`fast${i}`, `msg_${i}`, 'completed', big)), tool('slow', 'msg_slow', 'completed', 'done')];
    const data = Buffer.from(`${lines.join('\n')}\n`);
    // Unbounded: the slow call completes (nine calls, no malformed record).
    const expected = parseOpencodeFile(PATH, data);
    expect(expected.events).toHaveLength(9);
    expect(expected.malformed).toEqual([]);
    const bounded = parseOpencodeFile(PATH, data, {}, { maxHeldChars: 15_000 });
    const slowOf = (events: readonly { envelope: { text: string } }[]): Obj => JSON.parse(events.find((e) => e.envelope.text.includes('"call_id":"slow"'))?.envelope.text ?? '{}') as Obj;
    expect(slowOf(expected.events)).toMatchObject({ status: 'ok', output: 'done' });
    expect(slowOf(bounded.events)).toMatchObject({ status: 'pending' });
    const others = (events: readonly { envelope: { text: string } }[]): string[] => events.map((e) => e.envelope.text).filter((l) => !l.includes('"call_id":"slow"'));
    expect(others(bounded.events)).toEqual(others(expected.events));
    expect(bounded.malformed?.map((m) => [m.line, m.problem])).toEqual([[10, 'already_written']]);
    expect(bounded.skipped).toMatchObject({ written_before_final: 1 });
  });
});
