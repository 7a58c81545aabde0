// The streaming opencode importer (issue 14) on its JSONL forms (`run --format json` captures,
// bus event logs, storage dumps) against its oracle, the whole-file parser as it was
// (reference/opencode-whole-file.ts): the same events in the same order, malformed records and
// counters, on the samples read in chunks, on fuzzed files (tool parts, step-finish parts and
// messages of a few ids in a few sessions, updated again, a message after its parts), on `.json`
// documents (read whole, through the same two stages), and on a small awkward file cut at every
// byte; then what it holds, and what happens past its bound.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitCompleteLines } from '../../src/importers/lines.ts';
import { opencodeImporter } from '../../src/importers/opencode/index.ts';
import { opencodeReading, parseOpencodeFile, type OpencodeParser } from '../../src/importers/opencode/parser.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { parseOpencodeFile as parseWholeFile } from './reference/opencode-whole-file.ts';
import { awkwardFile, expectSameAtEveryCut, expectSameParse, parseInChunks } from './stream-oracle.ts';

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

describe('the streaming opencode parser gives exactly the whole-file parse', () => {
  it.skipIf(!SAMPLES)('on the samples, read in chunks of 1 MiB, 64 bytes and 1 byte', () => {
    const files = readdirSync(SAMPLES ?? '').filter((n) => n.endsWith('.jsonl'));
    expect(files.length).toBe(3);
    for (const name of files) {
      const path = join(SAMPLES ?? '', name);
      const data = readFileSync(path);
      const expected = parseWholeFile(path, data);
      expectSameParse(opencodeImporter.parseFile(path, data), expected);
      const reading = opencodeImporter.readingOf(path);
      if (reading.kind !== 'lines') expect.fail('a JSONL file is read line by line');
      for (const cut of [1024 * 1024, 64, 1]) expectSameParse(parseInChunks(reading.reading, data, [cut]), expected);
    }
  });

  it('on generated JSONL files: parts, steps and messages of a few ids updated again, messages after their parts, any chunks', () => {
    const file = fc.record({ records: fc.array(record, { minLength: 1, maxLength: 40 }), crlf: fc.boolean(), tail: fc.constantFrom('', '{"type":"tool_use","part":{"ty') });
    fc.assert(
      fc.property(file, cutsArb, ({ records, crlf, tail }, cuts) => {
        const data = Buffer.from(records.map(lineText).join(crlf ? '\r\n' : '\n') + '\n' + tail, 'utf8');
        expectSameParse(parseInChunks(opencodeReading(PATH), data, cuts), parseWholeFile(PATH, data));
      }),
      { seed: 1420, numRuns: 1500 },
    );
  });

  it('on generated `.json` documents: a storage object, an export (read whole, through the same stages)', () => {
    const doc = fc.oneof(
      record.filter((r) => typeof r !== 'string'),
      fc.array(fc.record({ info: message, parts: fc.array(fc.oneof(toolPart, stepPart), { maxLength: 4 }) }), { maxLength: 4 }).map((messages) => ({ info: { id: 'ses_1' }, messages })),
    );
    fc.assert(
      fc.property(doc, fc.constantFrom('/x/export.json', '/s/storage/part/msg_1/prt_1.json', '/s/storage/message/ses_1/msg_1.json'), (value, path) => {
        const data = Buffer.from(JSON.stringify(value, null, 1), 'utf8');
        expectSameParse(parseOpencodeFile(path, data), parseWholeFile(path, data));
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
      const expected = parseWholeFile(PATH, data);
      expect(expected.events.length).toBe(2);
      expectSameAtEveryCut(() => opencodeReading(PATH), data, expected);
    }
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
    const expected = parseWholeFile(PATH, data);
    expectSameParse(parseOpencodeFile(PATH, data), expected);
    const bounded = parseOpencodeFile(PATH, data, {}, { maxHeldChars: 15_000 });
    const slowOf = (events: readonly { line: string }[]): Obj => JSON.parse(events.find((e) => e.line.includes('"call_id":"slow"'))?.line ?? '{}') as Obj;
    expect(slowOf(expected.events)).toMatchObject({ status: 'ok', output: 'done' });
    expect(slowOf(bounded.events)).toMatchObject({ status: 'pending' });
    const others = (events: readonly { line: string }[]): string[] => events.map((e) => e.line).filter((l) => !l.includes('"call_id":"slow"'));
    expect(others(bounded.events)).toEqual(others(expected.events));
    expect(bounded.malformed?.map((m) => [m.line, m.problem])).toEqual([[10, 'already_written']]);
    expect(bounded.skipped).toMatchObject({ written_before_final: 1 });
  });
});
