// Streaming imports (issue 14): the line splitter gives the same lines whatever the chunks; the
// streaming Claude Code parser gives the same parse whatever the chunks (against itself fed the
// file in one chunk), and, as properties of its own, the same events whatever the order of real
// records (results before their calls, times going back) and a response written again far apart
// counted once (its golden outputs: samples-golden.test.ts; per-file corpus figures:
// corpus-figures.test.ts); and a real import of a generated file holds one chunk of it at a time
// and writes events to the engine before it has read the file.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodeImporter } from '../../src/importers/claude-code/index.ts';
import { parseTranscript, TranscriptIndex, TranscriptParser, transcriptReading } from '../../src/importers/claude-code/parser.ts';
import { geminiCliImporter } from '../../src/importers/gemini-cli/index.ts';
import { LineSplitter, splitCompleteLines, type RawLine } from '../../src/importers/lines.ts';
import { runImport } from '../../src/pipeline/import.ts';
import { readLinesInChunks } from '../../src/importers/stream.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import type { ToolCallBatch } from '../../src/model/sink.ts';
import type { ParsedFile } from '../../src/importers/types.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';
import { writeClaudeTranscript } from './generate-claude-code.ts';
import { expectChunkInvariant, factsOf, fileOfLines, permuted, withCopies } from './chunks.ts';

const FIXTURES = new URL('./', import.meta.url).pathname;
const PROPERTY = { seed: 1403, numRuns: 300 } as const;

function plain(line: RawLine): { lineNo: number; text: string; bytes: string; endOffset: number } {
  return { lineNo: line.lineNo, text: line.text, bytes: (line.bytes ?? Buffer.alloc(0)).toString('hex'), endOffset: line.endOffset };
}

describe('LineSplitter', () => {
  it('gives the same lines and completeBytes whatever the chunk boundaries (CR, blank lines, torn or JSON tail)', () => {
    const piece = fc.constantFrom('{"a":1}', '{"b":"x\\ny"}', '', '   ', 'not json', '\r', '"s"', '{"c":[1,2]}', 'é€😀', '\uFEFF{"d":0}');
    const fileArb = fc.record({ pieces: fc.array(fc.tuple(piece, fc.constantFrom('\n', '\r\n')), { maxLength: 12 }), tail: fc.constantFrom('', '{"torn":', '{"whole":true}', '  ', '{"cr":1}\r') });
    fc.assert(
      fc.property(fileArb, fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 40 }), ({ pieces, tail }, cuts) => {
        const data = Buffer.from(pieces.map(([p, nl]) => p + nl).join('') + tail, 'utf8');
        const whole = splitCompleteLines(data);
        const splitter = new LineSplitter();
        const lines: RawLine[] = [];
        let at = 0;
        for (let i = 0; at < data.length; i++) {
          const n = cuts[i % cuts.length] ?? 1;
          splitter.push(data.subarray(at, at + n), (l) => lines.push(l));
          at += n;
        }
        splitter.end((l) => lines.push(l));
        expect(lines.map(plain)).toEqual(whole.lines.map(plain));
        expect(splitter.completeBytes).toBe(whole.completeBytes);
      }),
      { seed: 1404, numRuns: 500 },
    );
  });

  it('reads a file from disk in chunks to the same lines as the whole buffer, no further than the limit', async () => {
    const tmp = makeTempDir('splitter');
    try {
      const path = join(tmp.dir, 'f.jsonl');
      const text = `${'{"k":"v"}\r\n\n'.repeat(300)}{"last":1}`;
      writeFileSync(path, text);
      const lines: RawLine[] = [];
      const read = await readLinesInChunks(path, (l) => void lines.push(l), { chunkBytes: 7 });
      const whole = splitCompleteLines(Buffer.from(text));
      expect(lines.map(plain)).toEqual(whole.lines.map(plain));
      expect(read).toEqual({ completeBytes: whole.completeBytes, bytesRead: Buffer.byteLength(text), lines: whole.lines.length });
      const limited = await readLinesInChunks(path, () => undefined, { chunkBytes: 64, limitBytes: 110 });
      expect(limited.bytesRead).toBe(110);
      expect(limited.completeBytes).toBe(108); // nine whole groups of 12 bytes: {"k":"v"} CR LF LF
    } finally {
      tmp.cleanup();
    }
  });
});

// ---------------------------------------------------------------------------------------------

/** Real records: the importer's own fixture, the corpus's short and tool-heavy sessions when it is there. */
function poolLines(): string[] {
  const files = [join(FIXTURES, 'fixtures-claude-code', 'tool-search.jsonl')];
  for (const name of ['short.jsonl', 'tool_heavy.jsonl']) {
    const corpus = corpusOrSkip(`claude-code/projects/spotter/${name}`, 'the streaming Claude Code properties (test/importers/claude-code-stream.test.ts)');
    if (corpus) files.push(corpus);
  }
  return files.flatMap((f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== ''));
}

/** A record with its timestamp moved by `shiftS` seconds (so time goes back or jumps ahead). */
function shifted(text: string, shiftS: number): string {
  const v = JSON.parse(text) as Record<string, unknown>;
  if (typeof v['timestamp'] === 'string') {
    const ms = Date.parse(v['timestamp']);
    if (!Number.isNaN(ms)) v['timestamp'] = new Date(ms + shiftS * 1000).toISOString();
  }
  return JSON.stringify(v);
}

const isResponse = (text: string): boolean => {
  try {
    const v = JSON.parse(text) as { type?: unknown; message?: { id?: unknown } };
    return v.type === 'assistant' && typeof v.message?.id === 'string';
  } catch {
    return false;
  }
};

/** A parse's malformed records as a sorted list of their problems (order-free). */
const problemsOf = (parsed: ParsedFile): string[] => (parsed.malformed ?? []).map((m) => m.problem).sort();

describe('the streaming Claude Code parser', () => {
  const pool = poolLines();
  const responses = pool.filter(isResponse);
  const path = '/stream/claude/7f3c2a10-0000-4000-8000-000000000001.jsonl';
  const context = { path, fallbackSessionId: '7f3c2a10-0000-4000-8000-000000000001' };
  const entry = fc.oneof(
    { arbitrary: fc.constantFrom(...pool), weight: 6 },
    { arbitrary: fc.tuple(fc.constantFrom(...pool), fc.integer({ min: -600, max: 600 })).map(([t, s]) => shifted(t, s)), weight: 3 },
    { arbitrary: fc.constantFrom('{"broken', '[]', '', 'null'), weight: 1 },
  );
  const linesArb = fc.array(entry, { minLength: 1, maxLength: 40 });
  const parse = (lines: readonly string[]): ParsedFile => claudeCodeImporter.parseFile(path, fileOfLines(lines));

  it('gives the one-chunk parse whatever the chunks, and parseTranscript and parseFile give it too', () => {
    fc.assert(
      fc.property(linesArb, fc.boolean(), fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 12 }), (entries, torn, cuts) => {
        const data = Buffer.from(entries.join('\n') + (torn ? '\n{"type":"assistant"' : '\n'), 'utf8');
        const whole = expectChunkInvariant(() => transcriptReading(context), data, cuts);
        const { lines } = splitCompleteLines(data);
        const viaLines = parseTranscript(lines, context);
        expect(viaLines.events).toEqual(whole.events);
        expect(viaLines.malformed).toEqual(whole.malformed);
        expect(viaLines.skipped).toEqual(whole.skipped);
        const file = claudeCodeImporter.parseFile(path, data);
        expect(file.events).toEqual(whole.events);
        expect(file.recordsRead).toBe(lines.length);
      }),
      PROPERTY,
    );
  });

  it('counts a response written again, however far apart, once: copies of response lines change no event', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.tuple(fc.constantFrom(...responses), fc.nat()), { minLength: 1, maxLength: 6 }), (entries, copies) => {
        // The copied responses are in the file first, then written again at later places.
        const base = [...copies.map(([r]) => r), ...entries];
        const again = withCopies(base, copies.map(([, to], i) => [i, to] as const));
        expect(factsOf(parse(again))).toEqual(factsOf(parse(base)));
        expect(problemsOf(parse(again))).toEqual(problemsOf(parse(base)));
      }),
      PROPERTY,
    );
  });

  it('gives the same calls and usage whatever the order of the records (results before their calls, time going back)', () => {
    // What the order defines is left out: a call's turn is the prompt before it, a response's time its first line's.
    const positional = ['turn_id', 'ts', 'duration_ms'];
    fc.assert(
      fc.property(linesArb, fc.array(fc.nat(), { minLength: 40, maxLength: 40 }), (entries, keys) => {
        const shuffled = permuted(entries, keys);
        const [a, b] = [parse(entries), parse(shuffled)];
        expect(factsOf(b, positional)).toEqual(factsOf(a, positional));
        expect(problemsOf(b)).toEqual(problemsOf(a));
        expect(b.skipped).toEqual(a.skipped);
      }),
      PROPERTY,
    );
  });

  it('gives the same events when the records\' times move (back or ahead): only the times and durations follow them', () => {
    fc.assert(
      fc.property(linesArb, fc.array(fc.integer({ min: -600, max: 600 }), { minLength: 40, maxLength: 40 }), (entries, shifts) => {
        const moved = entries.map((l, i) => (l.startsWith('{') && l !== '{"broken' ? shifted(l, shifts[i] ?? 0) : l));
        expect(factsOf(parse(moved), ['ts', 'duration_ms'])).toEqual(factsOf(parse(entries), ['ts', 'duration_ms']));
      }),
      PROPERTY,
    );
  });

  it('holds only a few events while it reads a well-formed transcript (the generated one: 2 at most)', () => {
    const tmp = makeTempDir('stream-held');
    try {
      const file = join(tmp.dir, 's.jsonl');
      const generated = writeClaudeTranscript(file, 2_000_000, 2000);
      const { lines } = splitCompleteLines(readFileSync(file));
      const index = new TranscriptIndex();
      for (const l of lines) index.scan(l);
      let emitted = 0;
      let peakHeld = 0;
      const parser = new TranscriptParser(context, index, { event: () => emitted++, malformed: () => expect.fail('no malformed record expected') });
      for (const l of lines) {
        parser.line(l);
        peakHeld = Math.max(peakHeld, parser.heldEvents);
      }
      parser.end();
      expect(emitted).toBe(generated.events);
      expect(peakHeld).toBeLessThanOrEqual(2);
    } finally {
      tmp.cleanup();
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('a streamed import into the real engine', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  const tmp = makeTempDir('stream-import');
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('stream-import'));
  });
  afterAll(async () => {
    await cleanup?.();
    tmp.cleanup();
  });

  it('holds at most one chunk plus one line of the file, and writes events before the file is read', async () => {
    const file = join(tmp.dir, 'big.jsonl');
    const generated = writeClaudeTranscript(file, 6_000_000);
    const size = statSync(file).size;
    const longestLine = Math.max(...readFileSync(file, 'utf8').split('\n').map((l) => Buffer.byteLength(l)));
    const chunkBytes = 64 * 1024;
    let bytesRead = 0;
    let peakHeld = 0;
    let chunks = 0;
    const readAtInsert: number[] = [];
    const write = sink.writeToolCalls.bind(sink);
    sink.writeToolCalls = async (batch: ToolCallBatch): Promise<void> => {
      readAtInsert.push(bytesRead);
      await write(batch);
    };
    const summary = await runImport(claudeCodeImporter, [file], sink, {
      chunkBytes,
      batch: { batchMaxRows: 100, batchMaxBytes: 32 * 1024 * 1024 },
      onChunk: (_path, read, held) => {
        // Called for the parsing pass (the first pass, the index, holds no more than it does).
        chunks++;
        bytesRead = read;
        peakHeld = Math.max(peakHeld, held);
      },
    });
    expect(summary.eventsEmitted).toBe(generated.events);
    expect(summary.counts.rowsWritten).toBe(generated.events);
    expect(summary.bytesParsed).toBe(size);
    expect(chunks).toBeGreaterThan(size / chunkBytes);
    // Held between chunks: the one line not yet ended, never more than the longest line.
    expect(peakHeld).toBeLessThanOrEqual(longestLine);
    // Batches of 100 go to the engine while the file is still being read: the first one long
    // before the end (the whole-file runner inserted only after reading all of it).
    expect(readAtInsert.length).toBeGreaterThan(5);
    expect(readAtInsert[0]).toBeLessThan(size / 4);
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE startsWith(source, '${file}:')`)).toBe(generated.turns);
  });

  it('refuses a whole-document file over its size limit as one dead letter, and reads the others', async () => {
    const dir = join(tmp.dir, 'gemini', 'tmp', 'proj', 'chats');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'session-2026-12-03T10-00-abcdef12.json');
    writeFileSync(file, JSON.stringify({ sessionId: 'g-1', projectHash: 'p', messages: [{ id: 'm1', type: 'user', timestamp: '2026-12-03T10:00:00.000Z', content: 'x'.repeat(5000) }] }));
    const summary = await runImport(geminiCliImporter, [file], sink, { maxDocumentBytes: 4096 });
    expect(summary.malformedRecords).toBe(1);
    const rows = await sink.queryRows<{ detail: string; raw_bytes: string | number; source: string }>({
      query: 'SELECT detail, raw_bytes, source FROM dead_letters FINAL WHERE source = {s:String}',
      query_params: { s: `${file}:1` },
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.detail).toMatch(/^document_too_large: The file is \d+ bytes, over the limit of 4096 bytes/);
    expect(Number(rows[0]?.raw_bytes)).toBe(4096);
  });
});
