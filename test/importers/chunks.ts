// What the streaming importer tests share (claude-code, codex, acp, gemini-cli, opencode and otlp
// -stream): a line reading run over a file pushed in chunks of any sizes, compared with the same
// reading fed the whole file as one chunk (chunk invariance needs no second parser), and the
// facts of a parse compared as a set, for the order properties (CONTRIBUTING.md, "Importer oracles").
import { expect } from 'vitest';
import { LineSplitter, type RawLine } from '../../src/importers/lines.ts';
import type { ImportedEvent, LineReading, MalformedRecord, ParsedFile } from '../../src/importers/types.ts';

/**
 * Runs `reading` as the runner does (the first pass over every line, then the parser), with
 * the file's bytes pushed in chunks of the sizes `cuts` gives in turn (bytes), so that lines,
 * CR LF pairs and UTF-8 sequences are split anywhere.
 */
export function parseInChunks(reading: LineReading, data: Buffer, cuts: readonly number[]): ParsedFile {
  const pass = (onLine: (line: RawLine) => void): LineSplitter => {
    const splitter = new LineSplitter();
    let at = 0;
    for (let i = 0; at < data.length; i++) {
      const n = Math.max(1, cuts[i % cuts.length] ?? 1);
      // A copy per chunk, as the runner reads a fresh buffer: lines are views into it.
      splitter.push(Buffer.from(data.subarray(at, at + n)), onLine);
      at += n;
    }
    splitter.end(onLine);
    return splitter;
  };
  if (reading.scan) pass(reading.scan);
  const events: ImportedEvent[] = [];
  const malformed: MalformedRecord[] = [];
  let recordsRead = 0;
  const parser = reading.parser({ event: (e) => events.push(e), malformed: (m) => malformed.push(m) });
  const splitter = pass((line) => {
    recordsRead++;
    parser.line(line);
  });
  parser.end();
  // A parser that counts its records otherwise (OTLP: per log record and span) says so.
  return { events, malformed, completeBytes: splitter.completeBytes, recordsRead: parser.recordsRead ?? recordsRead, skipped: parser.skipped };
}

/** The same reading fed the whole file in one chunk: what every chunked run must equal. */
export function parseInOneChunk(reading: LineReading, data: Buffer): ParsedFile {
  return parseInChunks(reading, data, [Math.max(1, data.length)]);
}

/** A malformed record as compared: its bytes as hex, so a string and the same bytes in a buffer differ. */
function plainMalformed(m: MalformedRecord): Record<string, unknown> {
  return { ...m, raw: typeof m.raw === 'string' ? m.raw : `bytes:${Buffer.from(m.raw).toString('hex')}` };
}

/** Two parses are the same: events (order, bytes, source, offsets), malformed records (in order), counters, records and complete bytes. */
export function expectSameParse(got: ParsedFile, expected: ParsedFile): void {
  expect(got.events).toEqual(expected.events);
  expect((got.malformed ?? []).map(plainMalformed)).toEqual((expected.malformed ?? []).map(plainMalformed));
  expect(got.skipped).toEqual(expected.skipped);
  expect(got.completeBytes).toBe(expected.completeBytes);
  expect(got.recordsRead).toBe(expected.recordsRead);
}

/** The file pushed in chunks of the sizes `cuts` gives equals it pushed in one chunk; returns that one-chunk parse. */
export function expectChunkInvariant(reading: () => LineReading, data: Buffer, cuts: readonly number[]): ParsedFile {
  const whole = parseInOneChunk(reading(), data);
  expectSameParse(parseInChunks(reading(), data, cuts), whole);
  return whole;
}

/**
 * The awkward bytes of a small test file: a byte order mark, CR LF line ends, a blank line,
 * a line whose bytes are not UTF-8 (a lone continuation byte and a cut 3-byte sequence), and
 * a last line without a newline (`tail`: JSON, so a finished file, or torn).
 */
export function awkwardFile(lines: readonly string[], options: { bom?: boolean; tail?: string } = {}): Buffer {
  const parts: Buffer[] = [];
  if (options.bom !== false) parts.push(Buffer.from([0xef, 0xbb, 0xbf]));
  lines.forEach((l, i) => {
    parts.push(Buffer.from(l, 'utf8'));
    parts.push(Buffer.from(i % 2 === 0 ? '\r\n' : '\n'));
    if (i === 1) parts.push(Buffer.from('\r\n'));
  });
  // Not UTF-8: a lone continuation byte inside a string, and a 3-byte sequence cut short.
  parts.push(Buffer.concat([Buffer.from('{"junk":"a'), Buffer.from([0x80, 0xe2, 0x82]), Buffer.from('b"}\n')]));
  if (options.tail !== undefined) parts.push(Buffer.from(options.tail, 'utf8'));
  return Buffer.concat(parts);
}

/**
 * For every byte of `data`: the file cut there into two chunks gives the one-chunk parse; and
 * so does the file pushed one byte at a time. Returns the one-chunk parse.
 */
export function expectSameAtEveryCut(reading: () => LineReading, data: Buffer): ParsedFile {
  const whole = parseInOneChunk(reading(), data);
  expectSameParse(parseInChunks(reading(), data, [1]), whole);
  for (let k = 1; k < data.length; k++) expectSameParse(parseInChunks(reading(), data, [k, data.length]), whole);
  return whole;
}

// ------------------------------------------------------------------------------ order properties

/**
 * The facts of a parse as a sorted list: each event's body without the keys `omit` names (those
 * the format defines by position: a turn by the prompt before it, a time by the first line of a
 * response), so two parses of the same records in different orders compare as sets.
 */
export function factsOf(parsed: ParsedFile, omit: readonly string[] = []): string[] {
  return parsed.events
    .map((e) => {
      const body = JSON.parse(e.envelope.text) as Record<string, unknown>;
      for (const k of omit) delete body[k];
      return JSON.stringify(body);
    })
    .sort();
}

/** A file of lines (LF ends). */
export const fileOfLines = (lines: readonly string[]): Buffer => Buffer.from(lines.length === 0 ? '' : `${lines.join('\n')}\n`, 'utf8');

/** `lines` with copies of the lines at `from` inserted at `to` (positions taken modulo the growing list; a copy goes after its original). */
export function withCopies(lines: readonly string[], copies: readonly (readonly [number, number])[]): string[] {
  const out = [...lines];
  for (const [from, to] of copies) {
    if (out.length === 0) break;
    const i = from % out.length;
    const at = i + 1 + (to % (out.length - i));
    out.splice(at, 0, out[i] ?? '');
  }
  return out;
}

/** `lines` permuted by sorting on the keys (fast-check gives a key per line). */
export function permuted<T>(items: readonly T[], keys: readonly number[]): T[] {
  return items
    .map((item, i) => ({ item, key: keys[i % Math.max(1, keys.length)] ?? 0, i }))
    .sort((a, b) => a.key - b.key || a.i - b.i)
    .map((x) => x.item);
}

/**
 * `lines` with each run of keyed lines (between two lines `keyOf` gives null: the barriers, whose
 * place the format fixes) interleaved as `picks` choose, every key's own lines kept in their order:
 * the shuffles a format allows where records of different calls or messages are independent.
 */
export function interleaved(lines: readonly string[], keyOf: (line: string) => string | null, picks: readonly number[]): string[] {
  const out: string[] = [];
  let p = 0;
  for (let i = 0; i < lines.length; ) {
    if (keyOf(lines[i] ?? '') === null) {
      out.push(lines[i++] ?? '');
      continue;
    }
    const groups = new Map<string, string[]>();
    for (; i < lines.length; i++) {
      const key = keyOf(lines[i] ?? '');
      if (key === null) break;
      groups.set(key, [...(groups.get(key) ?? []), lines[i] ?? '']);
    }
    const queues = [...groups.values()];
    while (queues.some((q) => q.length > 0)) {
      const open = queues.filter((q) => q.length > 0);
      out.push(open[(picks[p++ % Math.max(1, picks.length)] ?? 0) % open.length]?.shift() ?? '');
    }
  }
  return out;
}
