// The OTLP importer's one-export-per-line form (`.jsonl`) is streamed (src/importers/otlp/stream.ts):
// whatever the chunks it gives what it gives fed the file in one chunk (events in order and bytes
// with their sources and offsets, malformed records, counters, records read and complete bytes),
// and parseFile gives the same. Checked on the fixtures and the corpus samples, and on generated
// files: Claude Code log records re-batched and repeated across lines, spans whose parents, models
// and conversations come on later lines, spans and calls exported twice, junk lines, byte order
// marks, CRLF and a torn last line; through parseFile and through the runner's chunked reading at
// random chunk sizes. As properties of its own: real exports in any order, re-batched or sent
// twice give the same events (its golden outputs: samples-golden.test.ts).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpImporter } from '../../src/importers/otlp/index.ts';
import { otlpLinesReading } from '../../src/importers/otlp/stream.ts';
import { runImport } from '../../src/pipeline/import.ts';
import { readLinesInChunks } from '../../src/importers/stream.ts';
import type { ImportedEvent, MalformedRecord, ParsedFile } from '../../src/importers/types.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';
import { expectChunkInvariant, factsOf, fileOfLines, parseInOneChunk, permuted, withCopies } from './chunks.ts';

const HERE = import.meta.dirname;
const FIXTURES = [join(HERE, 'fixtures-otlp', 'claude-code-events.jsonl'), join(HERE, 'fixtures-otlp-join', 'otel.jsonl')];
const CLAUDE_SAMPLES = corpusOrSkip('samples/claude_code_otel', 'the Claude Code sample lines of the OTLP streaming test (test/importers/otlp-stream.test.ts)');
const GENAI_SAMPLES = corpusOrSkip('samples/otel_genai', 'the GenAI sample lines of the OTLP streaming test (test/importers/otlp-stream.test.ts)');
const SAMPLES = [CLAUDE_SAMPLES, GENAI_SAMPLES].flatMap((dir) => (dir ? readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => join(dir, f)) : []));
const PROPERTY = { seed: 1601, numRuns: 250 } as const;

/** Malformed records as a sorted list: the whole-file parse lists a file's junk lines before its bad items, the stream in line order. */
function sortedMalformed(list: readonly MalformedRecord[] | undefined): MalformedRecord[] {
  const key = (m: MalformedRecord): string => `${String(m.line).padStart(9, '0')}\u0000${m.problem}\u0000${typeof m.raw === 'string' ? m.raw : Buffer.from(m.raw).toString('hex')}`;
  return [...(list ?? [])].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function expectSame(got: ParsedFile, expected: ParsedFile): void {
  expect(got.events).toEqual(expected.events);
  expect(sortedMalformed(got.malformed)).toEqual(sortedMalformed(expected.malformed));
  expect(got.skipped).toEqual(expected.skipped);
  expect(got.recordsRead).toBe(expected.recordsRead);
  expect(got.completeBytes).toBe(expected.completeBytes);
}

/** What the runner does with a line reading: both passes through readLinesInChunks, at the given chunk size. */
async function readChunked(path: string, chunkBytes: number): Promise<ParsedFile> {
  const reading = otlpLinesReading(path);
  const scan = reading.scan;
  const limit = scan ? (await readLinesInChunks(path, scan, { chunkBytes })).completeBytes : undefined;
  const events: ImportedEvent[] = [];
  const malformed: MalformedRecord[] = [];
  const parser = reading.parser({ event: (e) => events.push(e), malformed: (m) => malformed.push(m) });
  const read = await readLinesInChunks(path, (line) => parser.line(line), { chunkBytes, ...(limit === undefined ? {} : { limitBytes: limit }) });
  parser.end();
  return { events, malformed, completeBytes: read.completeBytes, recordsRead: parser.recordsRead ?? read.lines, skipped: parser.skipped };
}

// ------------------------------------------------------------------------------ generated files

const kv = (attributes: Record<string, unknown>): { key: string; value: unknown }[] => Object.entries(attributes).map(([key, value]) => ({ key, value }));

/** Every log record of the fixtures and samples, and a few that are no record. */
function recordPool(): unknown[] {
  const records: unknown[] = [];
  for (const file of [...FIXTURES, ...SAMPLES]) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const doc = JSON.parse(line) as { resourceLogs?: { scopeLogs?: { logRecords?: unknown[] }[] }[] };
      for (const rl of doc.resourceLogs ?? []) for (const sl of rl.scopeLogs ?? []) records.push(...(sl.logRecords ?? []));
    }
  }
  return records;
}

const RECORDS = recordPool();
const TRACES = ['4bf92f3577b34da6a3ce929d0e0e4736', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'];
const SPAN_IDS = ['00f067aa0ba902b7', '1111111111111111', '2222222222222222', '3333333333333333'];

const spanArb = fc
  .record({
    trace: fc.constantFrom(...TRACES),
    span: fc.constantFrom(...SPAN_IDS),
    parent: fc.constantFrom('', ...SPAN_IDS),
    operation: fc.constantFrom('chat', 'execute_tool', 'invoke_agent', undefined),
    callId: fc.option(fc.constantFrom('call_1', 'call_2', ''), { nil: undefined }),
    conversation: fc.option(fc.constantFrom('conv-1', 'conv-2'), { nil: undefined }),
    model: fc.option(fc.constantFrom('claude-sonnet-5', 'gpt-5'), { nil: undefined }),
    tool: fc.option(fc.constantFrom('Read', 'weather__get', ''), { nil: undefined }),
    input: fc.option(fc.integer({ min: 0, max: 5000 }), { nil: undefined }),
    start: fc.constantFrom('1786407295000000000', 1786407296000000000, 'soon', undefined),
    status: fc.constantFrom(undefined, { code: 2, message: 'exit 1' }),
  })
  .map((s) => ({
    traceId: s.trace,
    spanId: s.span,
    parentSpanId: s.parent,
    name: s.operation === 'execute_tool' ? `execute_tool ${s.tool ?? 'Bash'}` : (s.operation ?? 'claude_code.tool'),
    ...(s.start === undefined ? {} : { startTimeUnixNano: s.start }),
    endTimeUnixNano: '1786407297250000000',
    ...(s.status ? { status: s.status } : {}),
    attributes: kv({
      ...(s.operation ? { 'gen_ai.operation.name': { stringValue: s.operation } } : {}),
      ...(s.callId !== undefined ? { 'gen_ai.tool.call.id': { stringValue: s.callId } } : {}),
      ...(s.conversation ? { 'gen_ai.conversation.id': { stringValue: s.conversation } } : {}),
      ...(s.model ? { 'gen_ai.request.model': { stringValue: s.model } } : {}),
      ...(s.tool !== undefined ? { 'gen_ai.tool.name': { stringValue: s.tool } } : {}),
      ...(s.input !== undefined ? { 'gen_ai.usage.input_tokens': { intValue: String(s.input) }, 'gen_ai.usage.output_tokens': { intValue: 7 } } : {}),
    }),
  }));

const resource = (service: string): unknown => ({ attributes: kv({ 'service.name': { stringValue: service } }) });

const lineArb = fc.oneof(
  // Claude Code records, re-batched: a record may come again in a later line.
  { arbitrary: fc.array(fc.constantFrom(...RECORDS, 7, 'x'), { minLength: 1, maxLength: 6 }).map((records) => JSON.stringify({ resourceLogs: [{ resource: resource('claude-code'), scopeLogs: [{ logRecords: records }] }] })), weight: 5 },
  {
    arbitrary: fc.tuple(fc.constantFrom('claude-code', 'opencode', 'codex_exec', 'my-service'), fc.array(fc.oneof({ arbitrary: spanArb, weight: 9 }, { arbitrary: fc.constant(null), weight: 1 }), { minLength: 1, maxLength: 5 })).map(([service, spans]) =>
      JSON.stringify({ resourceSpans: [{ resource: resource(service), scopeSpans: [{ spans }] }] }),
    ),
    weight: 4,
  },
  { arbitrary: fc.constantFrom('not json', '[]', '{"resourceMetrics":[]}', '{"resourceSpans":3}', '   ', '{"a":1}'), weight: 1 },
);

const fileArb = fc.record({
  lines: fc.array(fc.tuple(lineArb, fc.constantFrom('\n', '\r\n'), fc.boolean()), { minLength: 1, maxLength: 14 }),
  tail: fc.constantFrom('', '{"resourceLogs":[', '{"resourceLogs":[]}'),
});

function fileText({ lines, tail }: { lines: [string, string, boolean][]; tail: string }): string {
  return lines.map(([text, nl, bom], i) => (bom && i % 3 === 0 ? '\uFEFF' : '') + text + nl).join('') + tail;
}

describe('the streamed OTLP reading gives the one-chunk parse whatever the chunks', () => {
  it('on the fixtures and the corpus samples, in chunks of 64 bytes and 1 byte, and through parseFile', () => {
    for (const file of [...FIXTURES, ...SAMPLES]) {
      const data = readFileSync(file);
      const expected = parseInOneChunk(otlpLinesReading(file), data);
      expect(expected.events.length + (expected.malformed?.length ?? 0) + Object.keys(expected.skipped).length).toBeGreaterThan(0);
      expectSame(otlpImporter.parseFile(file, data), expected);
      for (const cut of [64, 1]) expectChunkInvariant(() => otlpLinesReading(file), data, [cut]);
    }
  });

  it('on generated files, in any chunks and through parseFile', () => {
    const path = '/stream/otlp/export.jsonl';
    fc.assert(
      fc.property(fileArb, fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 12 }), (file, cuts) => {
        const data = Buffer.from(fileText(file), 'utf8');
        const whole = expectChunkInvariant(() => otlpLinesReading(path), data, cuts);
        expectSame(otlpImporter.parseFile(path, data), whole);
      }),
      PROPERTY,
    );
  });

  it('on generated files, read from disk in chunks of 1 to 300 bytes as the runner reads them', async () => {
    const tmp = makeTempDir('otlp-stream');
    try {
      const path = join(tmp.dir, 'export.jsonl');
      await fc.assert(
        fc.asyncProperty(fileArb, fc.integer({ min: 1, max: 300 }), async (file, chunkBytes) => {
          const data = Buffer.from(fileText(file), 'utf8');
          writeFileSync(path, data);
          expectSame(await readChunked(path, chunkBytes), otlpImporter.parseFile(path, data));
        }),
        { seed: 1602, numRuns: 60 },
      );
    } finally {
      tmp.cleanup();
    }
  });

  it('holds no event when no id repeats: each is handed out at the end of its own line', () => {
    const path = FIXTURES[0] ?? '';
    const reading = otlpLinesReading(path);
    const data = readFileSync(path);
    const lines = data.toString('utf8').split('\n').filter((l) => l !== '');
    let offset = 0;
    const positions = lines.map((text, i) => {
      offset += Buffer.byteLength(text) + 1;
      return { lineNo: i + 1, text, endOffset: offset };
    });
    for (const l of positions) reading.scan?.(l);
    const out: string[] = [];
    const parser = reading.parser({ event: (e) => out.push(e.source), malformed: () => undefined });
    const afterLine: number[] = [];
    for (const l of positions) {
      parser.line(l);
      afterLine.push(out.length);
    }
    // The fixture's lines make 3, 3 and 4 events (see otlp-claude-events.test.ts).
    expect(afterLine).toEqual([3, 6, 10]);
  });
});

describe('the OTLP parser on exports in another order, re-batched or sent twice (properties of its own)', () => {
  const real = [...FIXTURES, ...SAMPLES].flatMap((f) => readFileSync(f, 'utf8').split('\n')).filter((l) => l.trim() !== '');
  // Real lines, and real Claude Code log records re-batched into lines of their own.
  const lineOf = fc.oneof(
    { arbitrary: fc.constantFrom(...real), weight: 3 },
    { arbitrary: fc.array(fc.constantFrom(...RECORDS), { minLength: 1, maxLength: 6 }).map((records) => JSON.stringify({ resourceLogs: [{ resource: resource('claude-code'), scopeLogs: [{ logRecords: records }] }] })), weight: 2 },
  );
  const linesArb = fc.array(lineOf, { minLength: 1, maxLength: 14 });
  const path = '/stream/otlp/export.jsonl';
  const parse = (lines: readonly string[]): ParsedFile => otlpImporter.parseFile(path, fileOfLines(lines));

  it('real exports in any order give the same events (spans before their parents, logs before their requests)', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.nat(), { minLength: 14, maxLength: 14 }), (lines, keys) => {
        expect(factsOf(parse(permuted(lines, keys)))).toEqual(factsOf(parse(lines)));
      }),
      { seed: 1604, numRuns: 200 },
    );
  });

  it('an export sent again anywhere later, or its records split over two lines, changes no event', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 4 }), (lines, copies) => {
        expect(factsOf(parse(withCopies(lines, copies)))).toEqual(factsOf(parse(lines)));
      }),
      { seed: 1605, numRuns: 200 },
    );
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...RECORDS), { minLength: 2, maxLength: 8 }), fc.nat(), (records, cut) => {
        const batch = (rs: readonly unknown[]): string => JSON.stringify({ resourceLogs: [{ resource: resource('claude-code'), scopeLogs: [{ logRecords: rs }] }] });
        const at = 1 + (cut % (records.length - 1));
        expect(factsOf(parse([batch(records.slice(0, at)), batch(records.slice(at))]))).toEqual(factsOf(parse([batch(records)])));
      }),
      { seed: 1606, numRuns: 200 },
    );
  });
});

describe('a streamed import into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let tmp: ReturnType<typeof makeTempDir>;
  beforeAll(async () => {
    tmp = makeTempDir('otlp-stream-e2e');
    ({ sink, cleanup } = await openTempSink('otlp-stream'));
  });
  afterAll(async () => {
    await cleanup?.();
    tmp?.cleanup();
  });

  it('writes what the in-memory parse gives: its events as rows, its malformed records as dead letters, in 64-byte chunks', async () => {
    const path = join(tmp.dir, 'generated.jsonl');
    const [file] = fc.sample(fileArb, { seed: 1603, numRuns: 1 });
    const text = `${fileText(file ?? { lines: [], tail: '' })}${FIXTURES.map((f) => readFileSync(f, 'utf8')).join('')}not json\n`;
    writeFileSync(path, text);
    const expected = otlpImporter.parseFile(path, Buffer.from(text));
    const summary = await runImport(otlpImporter, [path], sink, { chunkBytes: 64 });
    expect(summary.eventsEmitted).toBe(expected.events.length);
    expect(summary.malformedRecords).toBe(expected.malformed?.length);
    expect(summary.recordsRead).toBe(expected.recordsRead);
    expect(summary.skippedRecords).toEqual(expected.skipped);
    // In = events + malformed records (each a dead letter) = rows + dead letters.
    const inputs = expected.events.length + (expected.malformed?.length ?? 0);
    expect(expected.malformed?.length).toBeGreaterThan(0);
    expect(summary.counts.eventsRead).toBe(inputs);
    expect(summary.counts.rowsWritten + summary.counts.deadLetters).toBe(inputs);
    expect(await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL')).toBe(summary.counts.deadLetters);
  });
});
