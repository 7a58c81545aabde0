// The file source: JSONL files (or directories of them, or stdin as `-`) as lines of raw bytes,
// each with its origin `file:line`. Lines are split on LF as bytes, before any decoding, so an
// invalid UTF-8 line still reaches the decoder (and its dead letter) intact.
import { createReadStream, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
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

/** A problem with what the user asked for (as opposed to a bad event inside an input). */
export class InputError extends Error {
  override readonly name = 'InputError';
}

/**
 * Yields the lines of a stream as byte arrays. A blank line (only whitespace) yields nothing
 * but is counted by the caller through `onBlank`. A last line without a newline is yielded.
 */
export async function* readLines(stream: Readable, name: string, onBytes?: (n: number) => void, onBlank?: () => void): AsyncGenerator<SourceLine> {
  let pending: Buffer[] = [];
  let lineNo = 0;
  const emit = (line: Buffer): SourceLine | undefined => {
    lineNo++;
    if (isBlank(line)) {
      onBlank?.();
      return undefined;
    }
    return { bytes: line, source: `${name}:${lineNo}` };
  };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    onBytes?.(chunk.byteLength);
    let start = 0;
    let nl = chunk.indexOf(0x0a, start);
    while (nl >= 0) {
      const piece = chunk.subarray(start, nl);
      const line = pending.length ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      const out = emit(line);
      if (out) yield out;
      start = nl + 1;
      nl = chunk.indexOf(0x0a, start);
    }
    if (start < chunk.byteLength) pending.push(chunk.subarray(start));
  }
  if (pending.length) {
    const out = emit(Buffer.concat(pending));
    if (out) yield out;
  }
}

function isBlank(line: Uint8Array): boolean {
  for (const b of line) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  return true;
}

export function openInput(file: InputFile): Readable {
  if (file.path !== '-') return createReadStream(file.path, { highWaterMark: 1 << 20 });
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
        for await (const line of readLines(openInput(file), file.path, onBytes, onBlank)) {
          const wait = take.event(line.bytes, line.source);
          if (wait) await wait;
        }
      }
    },
  };
}
