// The file source: JSONL files (or directories of them, or stdin as `-`) as lines of raw bytes,
// each with its origin `file:line`. Lines are split on LF as bytes, before any decoding, so an
// invalid UTF-8 line still reaches the decoder (and its dead letter) intact.
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { walkFiles } from '../util/walk.ts';
import type { RecordSource } from './record.ts';

export interface SourceLine {
  readonly bytes: Uint8Array;
  /** Where the line came from: `path:line` (1-based), or `-:line` for stdin. */
  readonly source: string;
}

export interface InputFile {
  /** The path as it will appear in sources (absolute), or '-' for stdin. */
  readonly path: string;
  /** The bytes that will be read (the file's size, or up to its last newline: leaveTornLastLines). */
  readonly bytes: number;
  /** Read no further than this many bytes (set by leaveTornLastLines); undefined: to the end. */
  readonly limitBytes?: number;
}

/** An unterminated last line left unread (the file is still being written, or was cut short). */
export interface TornLine {
  readonly path: string;
  /** Where the line starts: just past the file's last newline. */
  readonly offset: number;
  /** Its bytes so far. */
  readonly bytes: number;
}

/** Expands paths into JSONL files: a directory contributes every *.jsonl below it (see walkFiles). */
export function listInputFiles(paths: readonly string[]): InputFile[] {
  const out: InputFile[] = [];
  const walk = (dir: string): void => {
    for (const full of walkFiles(dir, (_, name) => name.endsWith('.jsonl'))) out.push({ path: full, bytes: statSync(full).size });
  };
  for (const p of paths) {
    if (p === '-') {
      out.push({ path: '-', bytes: 0 });
      continue;
    }
    const full = resolve(p);
    let stat;
    try {
      stat = statSync(full);
    } catch {
      throw new InputError(`${p}: no such file or directory`);
    }
    if (stat.isDirectory()) walk(full);
    else out.push({ path: full, bytes: stat.size });
  }
  return out;
}

/** Bytes read at a time while looking back for a file's last newline. */
const TAIL_CHUNK_BYTES = 64 * 1024;

/**
 * The offset just past the last LF of the file's first `size` bytes (0 when it has none), and
 * whether what follows it is blank (only spaces, tabs and CRs, or nothing): found by reading
 * back from the end, so a file is not read twice.
 */
function lastNewline(path: string, size: number): { end: number; restBlank: boolean } {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(Math.min(TAIL_CHUNK_BYTES, size));
    let restBlank = true;
    for (let to = size; to > 0; ) {
      const from = Math.max(0, to - buffer.length);
      const n = readSync(fd, buffer, 0, to - from, from);
      if (n <= 0) break;
      for (let i = n - 1; i >= 0; i--) {
        const b = buffer[i];
        if (b === 0x0a) return { end: from + i + 1, restBlank };
        if (b !== 0x20 && b !== 0x09 && b !== 0x0d) restBlank = false;
      }
      to = from;
    }
    return { end: 0, restBlank };
  } finally {
    closeSync(fd);
  }
}

/**
 * Replay's reading of files that may still be being written (as import reads them): each
 * file's last line without a newline yet is left unread (its bytes are not even read), and
 * returned, so the run can say so; the next replay reads it once it is complete. Stdin is read
 * to its end: its end is the input's end. A blank tail is read (it is no line). The sizes are
 * taken now: what is appended meanwhile waits for the next run.
 */
export function leaveTornLastLines(files: readonly InputFile[]): { files: InputFile[]; torn: TornLine[] } {
  const torn: TornLine[] = [];
  const out = files.map((file): InputFile => {
    if (file.path === '-' || file.bytes === 0) return file;
    const { end, restBlank } = lastNewline(file.path, file.bytes);
    if (end === file.bytes || restBlank) return file;
    torn.push({ path: file.path, offset: end, bytes: file.bytes - end });
    return { path: file.path, bytes: end, limitBytes: end };
  });
  return { files: out, torn };
}

/** One line for the torn lines a replay left unread (undefined when none). */
export function tornLinesLine(torn: readonly TornLine[], flag: string): string | undefined {
  if (torn.length === 0) return undefined;
  const first = torn[0] as TornLine;
  const where = torn.length === 1 ? first.path : `${first.path} and ${torn.length - 1} more file(s)`;
  return `left unread: ${torn.length} unterminated last line(s) (no newline yet: still being written?), in ${where}; a later replay reads each once its newline is written, or ${flag} reads them as they are`;
}

/** A problem with what the user asked for (as opposed to a bad event inside an input). */
export class InputError extends Error {
  override readonly name = 'InputError';
}

/** A line longer than this, read from a file, is read again whole from the file rather than joined from its chunks. */
export const LONG_LINE_BYTES = 8 * 1024 * 1024;

/**
 * Yields the lines of a stream as byte arrays. A blank line (only whitespace) yields nothing
 * but is counted by the caller through `onBlank`. A last line without a newline is yielded.
 * With `reread` (the stream is that file, from its start), a line longer than `over` bytes is
 * not kept as its chunks and joined (which holds it twice: a 100 MB line cost 200 MB) but read
 * again from the file into one buffer of its size once its end is found.
 */
export async function* readLines(
  stream: Readable,
  name: string,
  onBytes?: (n: number) => void,
  onBlank?: () => void,
  reread?: { readonly path: string; readonly over?: number },
): AsyncGenerator<SourceLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let lineNo = 0;
  /** Bytes of the stream before the current chunk, and where the current line starts. */
  let offset = 0;
  let lineStart = 0;
  /** The current line is long: its bytes are not kept, it is read again from the file. */
  let long = false;
  const over = reread?.over ?? LONG_LINE_BYTES;
  const emit = (line: Buffer): SourceLine | undefined => {
    lineNo++;
    if (isBlank(line)) {
      onBlank?.();
      return undefined;
    }
    return { bytes: line, source: `${name}:${lineNo}` };
  };
  const readAgain = async (from: number, to: number): Promise<Buffer> => {
    const out = Buffer.allocUnsafe(to - from);
    const fh = await open((reread as { path: string }).path, 'r');
    try {
      for (let at = 0; at < out.byteLength; ) {
        const { bytesRead } = await fh.read(out, at, out.byteLength - at, from + at);
        if (bytesRead === 0) throw new InputError(`${name}: the file became shorter while line ${lineNo + 1} was read (bytes ${from}-${to}); replay it again once nothing rewrites it`);
        at += bytesRead;
      }
    } finally {
      await fh.close();
    }
    return out;
  };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    onBytes?.(chunk.byteLength);
    let start = 0;
    let nl = chunk.indexOf(0x0a, start);
    while (nl >= 0) {
      const piece = chunk.subarray(start, nl);
      const line = long ? await readAgain(lineStart, offset + nl) : pending.length ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      pendingBytes = 0;
      long = false;
      lineStart = offset + nl + 1;
      const out = emit(line);
      if (out) yield out;
      start = nl + 1;
      nl = chunk.indexOf(0x0a, start);
    }
    if (start < chunk.byteLength && !long) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.byteLength - start;
      if (reread !== undefined && pendingBytes > over) {
        long = true;
        pending = [];
        pendingBytes = 0;
      }
    }
    offset += chunk.byteLength;
  }
  if (long || pending.length) {
    const out = emit(long ? await readAgain(lineStart, offset) : Buffer.concat(pending));
    if (out) yield out;
  }
}

function isBlank(line: Uint8Array): boolean {
  for (const b of line) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  return true;
}

export function openInput(file: InputFile): Readable {
  if (file.limitBytes === 0) return Readable.from([]);
  if (file.path !== '-') return createReadStream(file.path, { highWaterMark: 1 << 20, ...(file.limitBytes === undefined ? {} : { end: file.limitBytes - 1 }) });
  // bin/toolcanon.mjs hands stdin over on another descriptor (the engine must never see fd 0).
  const fd = process.env['TOOLCANON_STDIN_FD'];
  return fd === undefined ? process.stdin : createReadStream('', { fd: Number(fd), highWaterMark: 1 << 20 });
}

/**
 * The lines of `files` in order, as a record source (replay): each line's bytes at `file:line`.
 * onBytes counts what is read, onBlank the blank lines (which are not records).
 */
export function fileLines(files: readonly InputFile[], onBytes?: (n: number) => void, onBlank?: () => void): RecordSource<Uint8Array, string> {
  return {
    async read(take) {
      for (const file of files) {
        for await (const line of readLines(openInput(file), file.path, onBytes, onBlank, file.path === '-' ? undefined : { path: file.path })) {
          const wait = take.event(line.bytes, line.source);
          if (wait) await wait;
        }
      }
    },
  };
}
