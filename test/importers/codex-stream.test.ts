// The streaming Codex importer (issue 14): the same parse whatever the chunks (against itself fed
// the file in one chunk: events in order, malformed records, counters) on every corpus rollout
// and sample, on fuzzed rollouts (calls, outputs and end events whose ids collide, copies, junk,
// lines without times, legacy records) and on a small awkward file cut at every byte; as
// properties of its own, a record written twice and an output written again far apart counted
// once, and times that go back changing only times (its golden outputs: samples-golden.test.ts;
// per-file corpus figures: corpus-figures.test.ts). Then what it holds (one call at a time on a
// generated rollout), what happens past its bound, and a real streamed import into the engine.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexImporter } from '../../src/importers/codex/index.ts';
import { parseRollout, rolloutReading, type RolloutParser } from '../../src/importers/codex/parser.ts';
import { listRolloutFiles } from '../../src/importers/codex/paths.ts';
import { splitCompleteLines } from '../../src/importers/lines.ts';
import { runImport } from '../../src/pipeline/import.ts';
import type { ParsedFile } from '../../src/importers/types.ts';
import type { ToolCallBatch } from '../../src/model/sink.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';
import { GENERATED_CODEX_FILE, writeCodexRollout } from './generate-codex.ts';
import { awkwardFile, expectChunkInvariant, expectSameAtEveryCut, expectSameParse, factsOf, fileOfLines, parseInChunks, parseInOneChunk, withCopies } from './chunks.ts';

const CORPUS = corpusOrSkip('codex', 'the streaming Codex oracle test on the corpus (test/importers/codex-stream.test.ts)');
const SAMPLES = corpusOrSkip('samples/codex', 'the streaming Codex oracle test on the samples (test/importers/codex-stream.test.ts)');
const PATH = '/logs/rollout-2025-10-10T01-09-47-0199cee2-0000-7000-8000-000000000001.jsonl';
const PROPERTY = { seed: 1414, numRuns: 400 } as const;

type Rec = Record<string, unknown>;
const BASE = Date.parse('2025-10-10T16:10:00.000Z');

// ---------------------------------------------------------------------------------------------
// Generated rollouts: a small grammar of the records the parser joins, with ids drawn from a
// few so that outputs come before, after and twice for their calls, and real lines mixed in.

const callId = fc.constantFrom('call_a', 'call_b', 'call_c', 'line:4', 'x');
const time = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 600 }).map((s) => new Date(BASE + s * 1000).toISOString()), weight: 8 },
  { arbitrary: fc.constantFrom(undefined, null, 'not a time', 12), weight: 1 },
);
const totals = fc.record({ input_tokens: fc.integer({ min: 0, max: 50 }), cached_input_tokens: fc.integer({ min: 0, max: 20 }), output_tokens: fc.integer({ min: 0, max: 30 }), reasoning_output_tokens: fc.integer({ min: 0, max: 5 }) });
const outputValue = fc.oneof(
  fc.constantFrom('ok', 'Exit code: 1\nWall time: 2 seconds\nOutput:\nno', 'exec command rejected by user', 'error: bad hunk', '{"output":"x","metadata":{"exit_code":2,"duration_seconds":1.5}}', 'aborted'),
  fc.constant([{ type: 'input_text', text: 'a' }, { type: 'input_image', image_url: 'data:' }]),
  fc.record({ content: fc.constant('c'), success: fc.boolean() }),
  fc.constant(42),
);
const payload = fc.oneof(
  fc.record({ type: fc.constant('function_call'), name: fc.constantFrom('shell', 'view_image', 'serena__find_symbol', 'mcp__git__status'), arguments: fc.constantFrom('{"command":["ls"]}', '{"broken'), call_id: callId }),
  fc.record({ type: fc.constant('custom_tool_call'), name: fc.constant('apply_patch'), input: fc.constant('*** Begin Patch'), call_id: callId }),
  fc.record({ type: fc.constant('local_shell_call'), status: fc.constantFrom('completed', 'in_progress'), action: fc.constant({ type: 'exec', command: ['ls', '-la'] }) }, { requiredKeys: ['type', 'action'] }).chain((p) =>
    fc.record({ call_id: callId, id: callId }, { requiredKeys: [] }).map((ids) => ({ ...p, ...ids })),
  ),
  fc.record({ type: fc.constant('web_search_call'), status: fc.constantFrom('completed', 'failed', 'searching'), action: fc.constant({ type: 'search', query: 'q' }), id: callId }),
  // Without an id (cli 0.125): it takes the call_id of a later web_search_end of the same action (issue 29).
  fc.record({ type: fc.constant('web_search_call'), status: fc.constant('completed'), action: fc.constantFrom({ type: 'search', query: 'q' }, { type: 'open_page', url: 'u' }, { query: 'q', type: 'search' }) }),
  fc.record({ type: fc.constantFrom('function_call_output', 'custom_tool_call_output'), call_id: callId, output: outputValue }),
  fc.record({ type: fc.constant('message'), role: fc.constant('assistant'), content: fc.constant([]) }),
  fc.record({ type: fc.constant('function_call'), name: fc.constant('shell') }),
);
const eventMsg = fc.oneof(
  fc.record({ type: fc.constant('token_count'), info: fc.oneof(fc.constant(null), totals.map((t) => ({ total_token_usage: t, model_context_window: 272000 })), fc.constant({ total_token_usage: { input_tokens: -1 } })) }),
  fc.record({ type: fc.constantFrom('task_started', 'turn_started'), turn_id: fc.constantFrom('t1', 't2'), model_context_window: fc.constantFrom(128000, 272000) }),
  fc.record({ type: fc.constant('exec_command_end'), call_id: callId, exit_code: fc.integer({ min: 0, max: 2 }), duration: fc.constant({ secs: 1, nanos: 500_000_000 }) }),
  fc.record({ type: fc.constant('mcp_tool_call_end'), call_id: callId, result: fc.constantFrom({ Ok: { isError: true } }, { Err: 'boom' }, { Ok: {} }) }),
  fc.record({ type: fc.constant('patch_apply_end'), call_id: callId, success: fc.boolean() }),
  fc.record({ type: fc.constant('exec_command_end') }),
  fc.record({ type: fc.constant('agent_reasoning'), text: fc.constant('thinking') }),
  fc.record(
    { type: fc.constant('web_search_end'), call_id: callId, query: fc.constantFrom('q', 'u'), action: fc.constantFrom({ type: 'search', query: 'q' }, { type: 'open_page', url: 'u' }) },
    { requiredKeys: ['type', 'call_id'] },
  ),
);
const envelope = (type: string, p: fc.Arbitrary<Rec>): fc.Arbitrary<Rec> =>
  fc.tuple(time, p).map(([ts, payloadValue]) => (ts === undefined ? { type, payload: payloadValue } : { timestamp: ts, type, payload: payloadValue }));
const record: fc.Arbitrary<Rec | string> = fc.oneof(
  { arbitrary: envelope('response_item', payload), weight: 10 },
  { arbitrary: envelope('event_msg', eventMsg), weight: 6 },
  { arbitrary: envelope('turn_context', fc.record({ model: fc.constantFrom('gpt-5-codex', 'o3'), turn_id: fc.constantFrom('t1', 't3') }, { requiredKeys: [] })), weight: 2 },
  { arbitrary: envelope('session_meta', fc.record({ id: fc.constantFrom('s-1', 's-2', ''), timestamp: fc.constant('2025-10-10T16:00:00.000Z'), model: fc.constant('gpt-5') }, { requiredKeys: ['id'] })), weight: 1 },
  { arbitrary: fc.constantFrom<Rec>({ type: 'compacted', payload: {} }, { type: 'brand_new', payload: {} }, { type: 'response_item', payload: 3 }, { record_type: 'state' }, { id: 'legacy-1', timestamp: '2025-08-14T09:42:29.123Z' }, { nope: true }), weight: 1 },
  { arbitrary: payload, weight: 2 }, // bare: the legacy format
  { arbitrary: fc.constantFrom('{"broken', '[]', 'null', '"text"'), weight: 1 },
);

/** Real lines: the samples and two corpus rollouts (one legacy, one 0.4x), when the corpus is there. */
function poolLines(): string[] {
  const files: string[] = [];
  if (SAMPLES) files.push(...listRolloutFiles([SAMPLES]));
  if (CORPUS) files.push(...listRolloutFiles([CORPUS]).filter((f) => f.includes('8b3d642f') || f.includes('a264ea88')));
  return files.flatMap((f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '' && l.length < 8000)).slice(0, 400);
}

/** A file of records with CR LF or LF ends, maybe a BOM, a torn or whole last line, and a line's bytes made invalid UTF-8. */
const fileOf = (records: fc.Arbitrary<Rec | string>): fc.Arbitrary<Buffer> =>
  fc
    .record({
      lines: fc.array(records, { minLength: 1, maxLength: 40 }),
      ends: fc.array(fc.constantFrom('\n', '\r\n', '\n\n'), { minLength: 1, maxLength: 5 }),
      bom: fc.boolean(),
      tail: fc.constantFrom('', '{"timestamp":"2025-10-10T16:10:00.000Z","type":"event_msg","payload":{"ty', '{"type":"compacted","payload":{}}'),
      corrupt: fc.option(fc.nat(), { nil: undefined }),
    })
    .map(({ lines, ends, bom, tail, corrupt }) => {
      const parts = lines.map((l, i) => {
        const text = typeof l === 'string' ? l : JSON.stringify(l);
        let bytes = Buffer.from(text, 'utf8');
        if (corrupt !== undefined && i === corrupt % lines.length && bytes.length > 10) bytes = Buffer.concat([bytes.subarray(0, bytes.length - 4), Buffer.from([0xff]), bytes.subarray(bytes.length - 4)]);
        return Buffer.concat([bytes, Buffer.from(ends[i % ends.length] ?? '\n')]);
      });
      return Buffer.concat([bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), ...parts, Buffer.from(tail)]);
    });

const cutsArb = fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 12 });

describe('the streaming Codex parser gives the one-chunk parse whatever the chunks', () => {
  it.skipIf(!CORPUS || !SAMPLES)('on every corpus rollout and sample, read in chunks of 1 MiB, 4 KiB and 7 bytes', () => {
    const files = [...listRolloutFiles([CORPUS ?? '']), ...listRolloutFiles([SAMPLES ?? ''])];
    expect(files.length).toBe(67);
    let events = 0;
    for (const f of files) {
      const data = readFileSync(f);
      const whole = parseInOneChunk(rolloutReading(f), data);
      events += whole.events.length;
      expectSameParse(codexImporter.parseFile(f, data), whole);
      for (const cut of [4096, 7]) expectSameParse(parseInChunks(rolloutReading(f), data, [cut]), whole);
    }
    // 1,889 calls and the usage events of 22 sessions (README): the comparison covered them.
    expect(events).toBe(1889 + 1610 + 9);
  });

  it('on generated rollouts: colliding ids, copies, outputs before their calls, end events after them, junk, any chunks', () => {
    fc.assert(
      fc.property(fileOf(record), cutsArb, (data, cuts) => {
        expectChunkInvariant(() => rolloutReading(PATH), data, cuts);
      }),
      PROPERTY,
    );
  });

  it('on real lines shuffled, copied and dropped, any chunks', () => {
    const pool = poolLines();
    if (pool.length === 0) return;
    const line = fc.oneof({ arbitrary: fc.constantFrom(...pool), weight: 8 }, { arbitrary: record, weight: 2 });
    fc.assert(
      fc.property(fileOf(line), cutsArb, (data, cuts) => {
        expectChunkInvariant(() => rolloutReading(PATH), data, cuts);
      }),
      { seed: 1415, numRuns: 150 },
    );
  });

  it('on a small file cut at every byte: BOM, CR LF, a blank line, invalid UTF-8, a last line with and without a newline', () => {
    const at = (s: number): string => new Date(BASE + s * 1000).toISOString();
    const lines = [
      { timestamp: at(0), type: 'session_meta', payload: { id: 's-cut', timestamp: at(0) } },
      { timestamp: at(1), type: 'turn_context', payload: { model: 'gpt-5-codex' } },
      { timestamp: at(2), type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: '{"command":["ls","é"]}', call_id: 'c1' } },
      { timestamp: at(3), type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: { input_tokens: 10, output_tokens: 2 } } } },
      { timestamp: at(4), type: 'response_item', payload: { type: 'function_call_output', call_id: 'c1', output: 'Exit code: 0\nWall time: 1 seconds\nOutput:\n日本' } },
      { timestamp: at(5), type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: '{}', call_id: 'c2' } },
    ].map((r) => JSON.stringify(r));
    for (const tail of [`${JSON.stringify({ timestamp: at(6), type: 'event_msg', payload: { type: 'exec_command_end', call_id: 'c1', exit_code: 3 } })}\r`, '{"timestamp":"2025-10-10T16:10:07.000Z","type":"resp']) {
      for (const bom of [true, false]) {
        const data = awkwardFile(lines, { bom, tail });
        const whole = expectSameAtEveryCut(() => rolloutReading(PATH), data);
        // Counted by hand: the BOM spoils the session_meta line (a malformed record), so the
        // calls have no session; without it, c1 (with its output, then its end when the tail is
        // whole), c2 pending, and the token count.
        expect(whole.events.length).toBeGreaterThanOrEqual(bom ? 1 : 3);
      }
    }
  });
});

describe('the Codex parser on records written again or out of time (properties of its own)', () => {
  const pool = poolLines();
  const isOutput = (l: string): boolean => /"type":"(function_call_output|custom_tool_call_output)"/.test(l);
  const linesArb = fc.array(fc.constantFrom(...(pool.length > 0 ? pool : ['{}'])), { minLength: 1, maxLength: 40 });
  const parse = (lines: readonly string[]): ParsedFile => codexImporter.parseFile(PATH, fileOfLines(lines));
  const problemsOf = (parsed: ParsedFile): string[] => (parsed.malformed ?? []).map((m) => m.problem).sort();
  // A usage's request id (and so its event id) names its token_count line: left out where lines move.
  const lineNamed = ['event_id', 'request_id'];

  it.skipIf(pool.length === 0)('a record written twice in a row counts once: the same calls, the same usage', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), (lines, picks) => {
        const twice = lines.flatMap((l, i) => (picks.some((p) => p % lines.length === i) ? [l, l] : [l]));
        expect(factsOf(parse(twice), lineNamed)).toEqual(factsOf(parse(lines), lineNamed));
      }),
      { seed: 1422, numRuns: 200 },
    );
  });

  it.skipIf(pool.length === 0)('an output written again far apart (after its first) changes no event', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 4 }), (lines, picks) => {
        // Outputs written after their call (the order Codex writes them in).
        const called = new Set<string>();
        const outs = lines.flatMap((l, i) => {
          const v = JSON.parse(l) as Rec;
          const p = (typeof v['payload'] === 'object' && v['payload'] !== null ? v['payload'] : v) as Rec;
          const id = typeof p['call_id'] === 'string' ? p['call_id'] : '';
          if (isOutput(l)) return called.has(id) ? [i] : [];
          if (p['type'] === 'function_call' || p['type'] === 'custom_tool_call') called.add(id);
          return [];
        });
        fc.pre(outs.length > 0);
        // Each copy goes somewhere after its original; the last originals first, so the earlier ones stay where they are.
        const again = [...lines];
        for (const [i, to] of picks.map(([k, to]) => [outs[k % outs.length] ?? 0, to] as const).sort((a, b) => b[0] - a[0])) {
          again.splice(i + 1 + (to % (again.length - i)), 0, lines[i] ?? '');
        }
        // A record without a time (the legacy format) takes the last time read: a copy moved in before it lends it its own.
        const positional = [...lineNamed, 'ts', 'duration_ms'];
        expect(factsOf(parse(again), positional)).toEqual(factsOf(parse(lines), positional));
        // A copy is a counted duplicate, never a dead letter.
        expect(problemsOf(parse(again))).toEqual(problemsOf(parse(lines)));
      }),
      { seed: 1423, numRuns: 200 },
    );
  });

  it.skipIf(pool.length === 0)('times that go back or jump ahead change only the times and durations', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.integer({ min: -600, max: 600 }), { minLength: 40, maxLength: 40 }), (lines, shifts) => {
        const moved = lines.map((l, i) => {
          const v = JSON.parse(l) as Rec;
          if (typeof v['timestamp'] === 'string') v['timestamp'] = new Date(Date.parse(v['timestamp']) + (shifts[i] ?? 0) * 1000).toISOString();
          return JSON.stringify(v);
        });
        expect(factsOf(parse(moved), ['ts', 'duration_ms'])).toEqual(factsOf(parse(lines), ['ts', 'duration_ms']));
      }),
      { seed: 1424, numRuns: 200 },
    );
  });
});


// ---------------------------------------------------------------------------------------------

describe('what the streaming Codex parser holds', () => {
  it('one call at a time on a generated 2 MB rollout (its output comes on the next lines)', () => {
    const tmp = makeTempDir('codex-held');
    try {
      const file = join(tmp.dir, GENERATED_CODEX_FILE);
      const generated = writeCodexRollout(file, 2_000_000);
      const data = readFileSync(file);
      const { lines } = splitCompleteLines(data);
      const reading = rolloutReading(file);
      for (const l of lines) reading.index.scan(l);
      let emitted = 0;
      let peakHeld = 0;
      const parser = reading.parser({ event: () => emitted++, malformed: () => expect.fail('no malformed record expected') }) as RolloutParser;
      for (const l of lines) {
        parser.line(l);
        peakHeld = Math.max(peakHeld, parser.heldItems);
      }
      parser.end();
      expect(emitted).toBe(generated.events);
      expect(peakHeld).toBe(1);
      expect(parser.peakHeldChars).toBeLessThan(10_000);
      expect(reading.index.keys).toBe(generated.turns);
    } finally {
      tmp.cleanup();
    }
  });

  it('past its bound writes the first held call as it stands: its late output is a malformed record, the rest as before', () => {
    const at = (s: number): string => new Date(BASE + s * 1000).toISOString();
    const rec = (s: number, type: string, payload: Rec): string => JSON.stringify({ timestamp: at(s), type, payload });
    const big = 'x'.repeat(3000);
    const lines = [
      rec(0, 'session_meta', { id: 's-bound', timestamp: at(0) }),
      rec(1, 'response_item', { type: 'function_call', name: 'shell', arguments: '{"command":["sleep","600"]}', call_id: 'slow' }),
      ...Array.from({ length: 8 }, (_, i) => [
        rec(2 + i, 'response_item', { type: 'function_call', name: 'shell', arguments: `{"n":${i}}`, call_id: `fast${i}` }),
        rec(2 + i, 'response_item', { type: 'function_call_output', call_id: `fast${i}`, output: big }),
      ]).flat(),
      rec(20, 'response_item', { type: 'function_call_output', call_id: 'slow', output: 'done' }),
      rec(21, 'response_item', { type: 'function_call_output', call_id: 'slow', output: 'again' }),
    ];
    const data = Buffer.from(`${lines.join('\n')}\n`);
    // Unbounded (the default bound is far away): every output joins its call.
    const expected = parseRollout(PATH, data);
    expect(expected.events).toHaveLength(9);
    expect(expected.malformed).toEqual([]);
    // A bound of about two outputs: the slow call cannot hold back eight finished ones.
    const bounded = parseRollout(PATH, data, { maxHeldChars: 8000 });
    const slowOf = (events: readonly { envelope: { text: string } }[]): Rec => JSON.parse(events.find((e) => e.envelope.text.includes('"call_id":"slow"'))?.envelope.text ?? '{}') as Rec;
    expect(slowOf(expected.events)).toMatchObject({ status: 'ok', output: 'done' });
    expect(slowOf(bounded.events)).toMatchObject({ status: 'pending' });
    expect(slowOf(bounded.events)).not.toHaveProperty('output');
    // Every other event is the same, in the same order; the late output is kept as a dead letter.
    const others = (events: readonly { envelope: { text: string } }[]): string[] => events.map((e) => e.envelope.text).filter((l) => !l.includes('"call_id":"slow"'));
    expect(others(bounded.events)).toEqual(others(expected.events));
    expect(bounded.malformed?.map((m) => [m.line, m.problem])).toEqual([[19, 'call_already_written']]);
    expect(bounded.malformed?.[0]?.raw).toBe(lines[18]);
    expect(bounded.skipped).toMatchObject({ call_written_before_final: 1, duplicate_output: 1 });
  });
});

// ---------------------------------------------------------------------------------------------

describe('a streamed Codex import into the real engine', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  const tmp = makeTempDir('codex-stream-import');
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('codex-stream-import'));
  });
  afterAll(async () => {
    await cleanup?.();
    tmp.cleanup();
  });

  it('holds one chunk plus one line, writes batches before the file is read, and stores what the in-memory parse gives', async () => {
    const file = join(tmp.dir, GENERATED_CODEX_FILE);
    const generated = writeCodexRollout(file, 4_000_000);
    const size = statSync(file).size;
    const data = readFileSync(file);
    const longestLine = Math.max(...data.toString('utf8').split('\n').map((l) => Buffer.byteLength(l)));
    const expected = parseRollout(file, data);
    expect(expected.events).toHaveLength(generated.events);
    let bytesRead = 0;
    let peakHeld = 0;
    const readAtInsert: number[] = [];
    const write = sink.writeToolCalls.bind(sink);
    sink.writeToolCalls = async (batch: ToolCallBatch): Promise<void> => {
      readAtInsert.push(bytesRead);
      await write(batch);
    };
    const summary = await runImport(codexImporter, [file], sink, {
      chunkBytes: 64 * 1024,
      batch: { batchMaxRows: 100, batchMaxBytes: 32 * 1024 * 1024 },
      onChunk: (_path, read, held) => {
        bytesRead = read;
        peakHeld = Math.max(peakHeld, held);
      },
    });
    sink.writeToolCalls = write;
    expect(summary.eventsEmitted).toBe(generated.events);
    expect(summary.counts.rowsWritten).toBe(generated.events);
    expect(summary.bytesParsed).toBe(size);
    expect(peakHeld).toBeLessThanOrEqual(longestLine);
    expect(readAtInsert.length).toBeGreaterThan(5);
    expect(readAtInsert[0]).toBeLessThan(size / 4);
    // The stored calls are the in-memory parse's: same ids, statuses and sources.
    const rows = await sink.queryRows<{ event_id: string; status: string; source: string }>({
      query: 'SELECT event_id, status, source FROM tool_calls FINAL WHERE session_id = {s:String} ORDER BY event_id',
      query_params: { s: generated.sessionId },
    });
    const calls = expected.events
      .map((e) => ({ body: JSON.parse(e.envelope.text) as Rec, source: e.source }))
      .filter((e) => e.body['type'] === 'tool_call')
      .map((e) => ({ event_id: String(e.body['event_id']), status: String(e.body['status']), source: e.source }))
      .sort((a, b) => (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));
    expect(rows).toEqual(calls);
    expect(await countOf(sink, `SELECT count() AS n FROM token_usage FINAL WHERE session_id = '${generated.sessionId}' AND source = 'observed'`)).toBe(generated.events - generated.turns);
  });
});
