// Line splitting shared by the JSONL importers (byte offsets for incremental imports, the rule
// for a last line without a newline: a log being written) and the malformed records of a file.
import type { MalformedRecord } from './types.ts';

export interface RawLine {
  /** 1-based line number. */
  readonly lineNo: number;
  readonly text: string;
  /**
   * The line's bytes as read (no CR, no copy), when it came from a file: what a malformed
   * record keeps, so bytes that are not UTF-8 stay the bytes they were.
   */
  readonly bytes?: Buffer;
  /** Byte offset just past the line (and its newline). */
  readonly endOffset: number;
}

/**
 * Splits a file into complete lines as its bytes arrive, chunk by chunk, with the rules every
 * JSONL importer shares: CR before LF stripped, blank lines skipped (but counted in line
 * numbers), and a last line without a trailing newline counted only when it parses as JSON (a
 * finished file without a final newline); otherwise it is still being written and is left for
 * the next import, and `completeBytes` stops before it. What it holds between chunks is the one
 * line not yet ended (a line's bytes are copied only when it spans chunks).
 */
export class LineSplitter {
  private carry: Buffer[] = [];
  /** File offset of the first byte not yet part of an emitted line. */
  private offset = 0;
  private lineNo = 0;
  /** Bytes up to the end of the last complete line (a blank one included). */
  completeBytes = 0;

  /** Bytes held for the line not yet ended. */
  get heldBytes(): number {
    let n = 0;
    for (const b of this.carry) n += b.length;
    return n;
  }

  /** Feeds the next chunk; calls `out` for each complete, non-blank line it ends. */
  push(chunk: Buffer, out: (line: RawLine) => void): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) {
        this.carry.push(chunk.subarray(start));
        return;
      }
      let line: Buffer;
      if (this.carry.length > 0) {
        this.carry.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.carry);
        this.carry = [];
      } else line = chunk.subarray(start, nl);
      this.emit(line, this.offset + line.length + 1, out);
      start = nl + 1;
    }
  }

  /** The end of the file: the last line without a newline counts only if it is JSON. */
  end(out: (line: RawLine) => void): void {
    if (this.carry.length === 0) return;
    const tail = this.carry.length === 1 ? (this.carry[0] as Buffer) : Buffer.concat(this.carry);
    this.carry = [];
    const rawEnd = tail.length > 0 && tail[tail.length - 1] === 0x0d ? tail.length - 1 : tail.length;
    try {
      JSON.parse(tail.toString('utf8', 0, rawEnd));
    } catch {
      return;
    }
    this.emit(tail, this.offset + tail.length, out);
  }

  private emit(line: Buffer, endOffset: number, out: (line: RawLine) => void): void {
    this.lineNo++;
    const rawEnd = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
    this.offset = endOffset;
    this.completeBytes = endOffset;
    const bytes = line.subarray(0, rawEnd);
    // A line that starts with a printable ASCII character is not blank: its text is made when a
    // reader asks for it (a first pass that looks for a word in the bytes makes none). Any other
    // line is trimmed as text (JavaScript's trim: Unicode spaces and the BOM are blank too).
    const first = rawEnd > 0 ? (bytes[0] as number) : 0;
    if (first > 0x20 && first < 0x7f) out(new FileLine(this.lineNo, bytes, endOffset));
    else {
      const text = bytes.toString('utf8');
      if (text.trim() !== '') out({ lineNo: this.lineNo, text, bytes, endOffset });
    }
  }
}

/** A line of a file whose text is decoded from its bytes when first read (then kept). */
class FileLine implements RawLine {
  private decoded: string | undefined;
  constructor(
    readonly lineNo: number,
    readonly bytes: Buffer,
    readonly endOffset: number,
  ) {}
  get text(): string {
    return (this.decoded ??= this.bytes.toString('utf8'));
  }
}

/** The complete lines of a whole JSONL file held in memory (the rules of LineSplitter). */
export function splitCompleteLines(data: Buffer): { lines: RawLine[]; completeBytes: number } {
  const lines: RawLine[] = [];
  const splitter = new LineSplitter();
  const add = (line: RawLine): void => {
    lines.push(line);
  };
  splitter.push(data, add);
  splitter.end(add);
  return { lines, completeBytes: splitter.completeBytes };
}

/** Parses a line as a JSON object; undefined for anything else (the caller counts it). */
export function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON object read from a record's text, or what kept it from being one. */
export type ObjectReading =
  | { readonly ok: true; readonly value: Record<string, unknown> }
  | { readonly ok: false; readonly problem: 'invalid_json' | 'not_an_object'; readonly detail: string };

/** Longest excerpt of a parser message or a value quoted in a malformed record's detail. */
const MAX_QUOTED_CHARS = 120;

function quoted(text: string): string {
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS - 1)}…` : text;
}

/**
 * Reads a record's text as a JSON object. Unlike parseObject it says what was wrong, for a
 * malformed record's problem and detail: text that is no JSON, or JSON that is no object.
 */
export function readObject(text: string): ObjectReading {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    return { ok: false, problem: 'invalid_json', detail: `The record is not valid JSON (${quoted(reason)}).` };
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { ok: true, value: value as Record<string, unknown> };
  return { ok: false, problem: 'not_an_object', detail: `The record is JSON but ${describeValue(value)}, not an object.` };
}

/** A value as a detail sentence names it: `missing`, `null`, `a number (42)`, `an empty string`, … */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return value === '' ? 'an empty string' : `the string ${quoted(JSON.stringify(value))}`;
    case 'number':
      return `the number ${String(value)}`;
    case 'boolean':
      return `the boolean ${String(value)}`;
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}

/** A malformed record for a whole line of a JSONL file: its text is the raw record. */
export function malformedLine(line: RawLine, problem: string, detail: string): MalformedRecord {
  return { raw: rawOf(line), line: line.lineNo, problem, detail, endOffset: line.endOffset };
}

/**
 * What a malformed record keeps of its line: the text, or the bytes where decoding replaced
 * some (U+FFFD: not UTF-8), so the dead letter carries the bytes as they were.
 */
export function rawOf(line: RawLine): string | Buffer {
  return line.bytes !== undefined && line.text.includes('\uFFFD') ? line.bytes : line.text;
}

/**
 * The malformed records of one file, in the order they were found. A record with several
 * problems is one dead letter: the first problem found is kept, later ones for the same bytes
 * at the same line are dropped (the dead letter's id is its source and bytes anyway).
 */
export class MalformedRecords {
  readonly records: MalformedRecord[] = [];
  private readonly seen = new Set<string>();

  add(record: MalformedRecord): void {
    const key = `${record.line}\u0000${typeof record.raw === 'string' ? record.raw : Buffer.from(record.raw).toString('base64')}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.records.push(record);
  }

  addLine(line: RawLine, problem: string, detail: string): void {
    this.add(malformedLine(line, problem, detail));
  }
}

/**
 * MalformedRecords for a streaming parser: each record goes to `emit` at once. Two records can
 * only be the same when they name the same line, and a parser reports a line's records while it
 * reads that line, so only the current line's keys are kept.
 */
export class MalformedStream {
  private seenLine = -1;
  private readonly seen = new Set<string>();

  constructor(private readonly emit: (record: MalformedRecord) => void) {}

  add(record: MalformedRecord): void {
    if (record.line !== this.seenLine) {
      this.seen.clear();
      this.seenLine = record.line;
    }
    const key = typeof record.raw === 'string' ? record.raw : Buffer.from(record.raw).toString('base64');
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.emit(record);
  }

  addLine(line: RawLine, problem: string, detail: string): void {
    this.add(malformedLine(line, problem, detail));
  }
}

/** 1-based line of a UTF-16 offset in `text`, for a record found inside a larger document. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
