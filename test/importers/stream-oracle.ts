// Helpers of the streaming oracle tests (codex-stream, acp-stream, gemini-cli-stream,
// opencode-stream): a streaming reading run over a file cut into chunks anywhere, and the one
// comparison with the whole-file parse kept in reference/: the same events in the same order
// (line, source, offset), the same malformed records, counters, complete bytes and records.
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
  return { events, malformed, completeBytes: splitter.completeBytes, recordsRead, skipped: parser.skipped };
}

/** A malformed record as compared: its bytes as hex, so a string and the same bytes in a buffer differ. */
function plainMalformed(m: MalformedRecord): Record<string, unknown> {
  return { ...m, raw: typeof m.raw === 'string' ? m.raw : `bytes:${Buffer.from(m.raw).toString('hex')}` };
}

/**
 * The streaming parse gave exactly what the whole-file parse gave. Malformed records are
 * compared in line order: the whole-file parsers listed some of them (unparsable lines, a
 * call's problems) in a pass of their own, the streaming ones list them as they read; a dead
 * letter's row does not depend on when it was written.
 */
export function expectSameParse(got: ParsedFile, expected: ParsedFile): void {
  expect(got.events).toEqual(expected.events);
  const byLine = (list: readonly MalformedRecord[] | undefined): Record<string, unknown>[] => [...(list ?? [])].sort((a, b) => a.line - b.line).map(plainMalformed);
  expect(byLine(got.malformed)).toEqual(byLine(expected.malformed));
  expect(got.skipped).toEqual(expected.skipped);
  expect(got.completeBytes).toBe(expected.completeBytes);
  expect(got.recordsRead).toBe(expected.recordsRead);
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
 * For every byte of `data`: the file cut there into two chunks gives the whole-file parse; and
 * so does the file pushed one byte at a time.
 */
export function expectSameAtEveryCut(reading: () => LineReading, data: Buffer, expected: ParsedFile): void {
  expectSameParse(parseInChunks(reading(), data, [1]), expected);
  for (let k = 1; k < data.length; k++) expectSameParse(parseInChunks(reading(), data, [k, data.length]), expected);
}
