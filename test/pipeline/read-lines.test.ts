// readLines (src/source/file.ts) reading a file: a line longer than `over` is read again from
// the file into one buffer instead of joined from its chunks (so a long line is held once), and
// the lines are the same either way: long and short lines, blank lines, a last line without a
// newline, lines across chunk edges, a file cut short by a read limit.
import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError, readLines } from '../../src/source/file.ts';
import { makeTempDir } from '../helpers/db.ts';

const tmp = makeTempDir('read-lines');
afterAll(() => tmp.cleanup());

async function lines(path: string, chunk: number, reread?: { path: string; over: number }, end?: number): Promise<{ text: string; source: string }[]> {
  const out: { text: string; source: string }[] = [];
  let blank = 0;
  const stream = createReadStream(path, { highWaterMark: chunk, ...(end === undefined ? {} : { end: end - 1 }) });
  for await (const l of readLines(stream, path, undefined, () => blank++, reread)) out.push({ text: Buffer.from(l.bytes).toString('latin1'), source: l.source });
  out.push({ text: `blank ${blank}`, source: '' });
  return out;
}

describe('readLines with a long line read again from its file', () => {
  it('gives the lines it gives without, for any lines, chunk size and length limit', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.string({ minLength: 20, maxLength: 90 }), fc.constant(''), fc.constant('  \r')), { maxLength: 12 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 30 }),
        fc.nat(),
        async (parts, lastNewline, chunk, over, cut) => {
          const text = parts.join('\n') + (lastNewline ? '\n' : '');
          const path = join(tmp.dir, `f${n++}.jsonl`);
          writeFileSync(path, text, 'latin1');
          const end = text.length === 0 ? undefined : cut % (text.length + 1) || undefined;
          expect(await lines(path, chunk, { path, over }, end)).toEqual(await lines(path, chunk, undefined, end));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads a line over the threshold again from the file, not from its chunks', async () => {
    // The stream and the file differ in the long line's bytes (same length): the file's come out.
    const path = join(tmp.dir, 'long.jsonl');
    writeFileSync(path, `short\n${'y'.repeat(5_000)}\nend`);
    const stream = Readable.from([Buffer.from('short\n'), Buffer.from('z'.repeat(3_000)), Buffer.from(`${'z'.repeat(2_000)}\nend`)]);
    const got: string[] = [];
    for await (const l of readLines(stream, path, undefined, undefined, { path, over: 1_000 })) got.push(Buffer.from(l.bytes).toString());
    expect(got).toEqual(['short', 'y'.repeat(5_000), 'end']);
  });

  it('says so in one line when the file is shorter than what was read of it (rewritten meanwhile)', async () => {
    const path = join(tmp.dir, 'shorter.jsonl');
    writeFileSync(path, `short\n${'y'.repeat(1_500)}\n`);
    const stream = Readable.from([Buffer.from('short\n'), Buffer.from('z'.repeat(3_000)), Buffer.from(`${'z'.repeat(2_000)}\n`)]);
    const read = async (): Promise<void> => {
      for await (const _ of readLines(stream, path, undefined, undefined, { path, over: 1_000 })) void _;
    };
    await expect(read()).rejects.toThrow(new InputError(`${path}: the file became shorter while line 2 was read (bytes 6-5006); replay it again once nothing rewrites it`));
  });
});
