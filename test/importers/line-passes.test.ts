// A reading with a first pass (src/importers/stream.ts readLinePasses): a file small enough is read
// and split once and both passes go over the same lines (with no first pass, the one pass); it must hand each pass exactly the lines,
// texts, bytes and offsets that two chunked reads give (the first up to the file's size, the
// second up to the end of the lines the first found complete), and say the same completeBytes,
// bytesRead and line count. Also the lines' text made on demand (src/importers/lines.ts FileLine)
// against the text and JavaScript's trim for blank lines.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { LineSplitter, type RawLine } from '../../src/importers/lines.ts';
import { READ_ONCE_MAX_BYTES, READ_ONCE_MAX_LINES, readLinesInChunks, readLinePasses, type ChunkedRead } from '../../src/importers/stream.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolcanon-line-passes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Seen {
  readonly pass: 1 | 2;
  readonly lineNo: number;
  readonly text: string;
  readonly bytes: string | undefined;
  readonly endOffset: number;
}

const seen = (pass: 1 | 2, l: RawLine): Seen => ({ pass, lineNo: l.lineNo, text: l.text, bytes: l.bytes?.toString('hex'), endOffset: l.endOffset });

/** What the two passes see and what the read says, by the function under test. */
async function twice(path: string, limitBytes: number, chunkBytes?: number): Promise<{ lines: Seen[]; read: ChunkedRead }> {
  const lines: Seen[] = [];
  let secondMadeAfter = -1;
  const read = await readLinePasses(
    path,
    (l) => lines.push(seen(1, l)),
    () => {
      secondMadeAfter = lines.length;
      return (l) => {
        lines.push(seen(2, l));
        // A second pass that waits sometimes (a batch being written) reads on after it.
        return l.lineNo % 3 === 0 ? Promise.resolve() : undefined;
      };
    },
    { limitBytes, ...(chunkBytes === undefined ? {} : { chunkBytes }) },
  );
  // The second pass's reader is made once every line went through the first.
  expect(secondMadeAfter).toBe(lines.filter((l) => l.pass === 1).length);
  return { lines, read };
}

/** The reference: two chunked reads, as the import ran them before. */
async function twoChunkedReads(path: string, limitBytes: number, chunkBytes = 5): Promise<{ lines: Seen[]; read: ChunkedRead }> {
  const lines: Seen[] = [];
  const first = await readLinesInChunks(path, (l) => void lines.push(seen(1, l)), { limitBytes, chunkBytes });
  const read = await readLinesInChunks(path, (l) => void lines.push(seen(2, l)), { limitBytes: first.completeBytes, chunkBytes });
  return { lines, read };
}

let files = 0;
function fileOf(content: Buffer): string {
  const path = join(dir, `f${++files}.jsonl`);
  writeFileSync(path, content);
  return path;
}

/** Lines of the kinds a log holds and the awkward ones: JSON, blank, spaces, Unicode spaces, a BOM, CR, bad UTF-8. */
const piece = fc.oneof(
  fc.constantFrom('{"a":1}', '{"type":"response_item","payload":{"call_id":"c1"}}', '[1,2]', '', ' ', '\t', '\r', '\u00a0', '\ufeff{"b":2}', '\ufeff', '\u2028', '  {"c":3}', 'x', '{"d":', '"é"', '{"e":"\u{1f600}"}'),
  fc.json({ maxDepth: 2 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
);
const fileContent = fc
  .tuple(fc.array(fc.tuple(piece, fc.constantFrom('\n', '\r\n')), { maxLength: 14 }), fc.option(piece, { nil: undefined }), fc.option(fc.uint8Array({ minLength: 1, maxLength: 4 }), { nil: undefined }))
  .map(([lines, tail, junk]) => {
    const parts = lines.map(([l, end]) => Buffer.from(l + end, 'utf8'));
    // Bytes that are not UTF-8 in the middle of a line, and a last line with no newline.
    if (junk !== undefined) parts.splice(parts.length >>> 1, 0, Buffer.from(junk), Buffer.from('\n'));
    if (tail !== undefined) parts.push(Buffer.from(tail, 'utf8'));
    return Buffer.concat(parts);
  });

describe('readLinePasses', () => {
  it('hands both passes what two chunked reads hand them, whatever the file (read once)', async () => {
    await fc.assert(
      fc.asyncProperty(fileContent, fc.integer({ min: 0, max: 8 }), async (content, cut) => {
        const path = fileOf(content);
        // Also read no further than a size seen before the file grew (limitBytes below its size), and
        // a file that shrank after its size was seen (limitBytes above it).
        for (const limit of [content.length, Math.max(0, content.length - cut), content.length + cut]) {
          const once = await twice(path, limit);
          const reference = await twoChunkedReads(path, limit);
          expect(once.lines).toEqual(reference.lines);
          expect(once.read).toEqual(reference.read);
        }
      }),
      { seed: 3107, numRuns: 300 },
    );
  });

  it('with no first pass, hands the one pass what one chunked read hands it', async () => {
    await fc.assert(
      fc.asyncProperty(fileContent, fc.integer({ min: 0, max: 8 }), async (content, cut) => {
        const path = fileOf(content);
        for (const limit of [content.length, Math.max(0, content.length - cut), content.length + cut]) {
          const once: Seen[] = [];
          const read = await readLinePasses(path, undefined, () => (l) => void once.push(seen(2, l)), { limitBytes: limit });
          const reference: Seen[] = [];
          const referenceRead = await readLinesInChunks(path, (l) => void reference.push(seen(2, l)), { limitBytes: limit, chunkBytes: 5 });
          expect(once).toEqual(reference);
          expect(read).toEqual(referenceRead);
        }
      }),
      { seed: 3108, numRuns: 200 },
    );
  });

  it('reads in chunks, with the same result, when a chunk size is asked for or the file is large', async () => {
    const content = Buffer.from('{"a":1}\n\n \n{"b":"x"}\r\n{"c":', 'utf8');
    const path = fileOf(content);
    const chunked = await twice(path, content.length, 3);
    expect(chunked).toEqual(await twoChunkedReads(path, content.length));
    expect(chunked.read).toEqual({ completeBytes: 22, bytesRead: 22, lines: 2 });

    const line = `{"k":"${'v'.repeat(1000)}"}\n`;
    const big = Buffer.from(line.repeat(Math.ceil((READ_ONCE_MAX_BYTES + 1) / line.length)) + '{"tail":1}', 'utf8');
    expect(big.length).toBeGreaterThan(READ_ONCE_MAX_BYTES);
    const bigPath = fileOf(big);
    const large = await twice(bigPath, big.length);
    const reference = await twoChunkedReads(bigPath, big.length, 64 * 1024);
    expect(large.read).toEqual(reference.read);
    expect(large.read.completeBytes).toBe(big.length);
    expect(large.lines.length).toBe(reference.lines.length);
    expect(large.lines.at(-1)).toEqual(reference.lines.at(-1));
  }, 60_000);
});

describe('readLinePasses, what it holds and what it opens', () => {
  it('reads a file of more than READ_ONCE_MAX_LINES lines in chunks, with the same result', async () => {
    const content = Buffer.from('{}\n'.repeat(READ_ONCE_MAX_LINES + 5) + '{"a":1}', 'utf8');
    const path = fileOf(content);
    const read = await twice(path, content.length);
    const reference = await twoChunkedReads(path, content.length, 64 * 1024);
    expect(read).toEqual(reference);
    expect(read.read.lines).toBe(READ_ONCE_MAX_LINES + 6);
  }, 60_000);

  it('opens nothing when there is nothing to read (a named pipe would block the process)', async () => {
    const fifo = join(dir, 'pipe.jsonl');
    execFileSync('mkfifo', [fifo]);
    let made = 0;
    const read = await readLinePasses(fifo, () => {}, () => {
      made++;
      return () => undefined;
    }, { limitBytes: 0 });
    expect(read).toEqual({ completeBytes: 0, bytesRead: 0, lines: 0 });
    expect(made).toBe(1);
  });
});

describe('the text of a line, made on demand', () => {
  it('is the line decoded, and a line is blank exactly when its text trims to nothing', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.constantFrom(' ', '\t', '\u00a0', '\ufeff', '\u3000', '\u000b', '\u000c', '~', '!', '\u007f')), { maxLength: 6 }), (pieces) => {
        const text = pieces.join('').replace(/[\r\n]/g, '');
        const out: RawLine[] = [];
        const splitter = new LineSplitter();
        splitter.push(Buffer.from(`${text}\n`, 'utf8'), (l) => out.push(l));
        expect(out.length).toBe(text.trim() === '' ? 0 : 1);
        if (out[0] !== undefined) {
          expect(out[0].text).toBe(Buffer.from(text, 'utf8').toString('utf8'));
          expect(out[0].bytes?.toString('utf8')).toBe(out[0].text);
        }
      }),
      { seed: 77, numRuns: 2000 },
    );
  });

  it('skips a line of any bytes exactly when its decoded text trims to nothing (invalid UTF-8 included)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b.filter((x) => x !== 0x0a && x !== 0x0d))), (bytes) => {
        const out: RawLine[] = [];
        const splitter = new LineSplitter();
        splitter.push(Buffer.concat([bytes, Buffer.from('\n')]), (l) => out.push(l));
        expect(out.length).toBe(bytes.toString('utf8').trim() === '' ? 0 : 1);
        if (out[0] !== undefined) expect(out[0].text).toBe(bytes.toString('utf8'));
      }),
      { seed: 78, numRuns: 5000 },
    );
  });
});
