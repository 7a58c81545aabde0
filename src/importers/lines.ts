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
 * The complete lines of a JSONL file. A last line without a trailing newline counts only when
 * it parses as JSON (a finished file without a final newline); otherwise it is still being
 * written and is left for the next import. Blank lines are skipped.
 */
export function splitCompleteLines(data: Buffer): { lines: RawLine[]; completeBytes: number } {
  const lines: RawLine[] = [];
  let start = 0;
  let lineNo = 0;
  let completeBytes = 0;
  while (start < data.length) {
    const nl = data.indexOf(0x0a, start);
    const end = nl < 0 ? data.length : nl;
    lineNo++;
    const rawEnd = end > start && data[end - 1] === 0x0d ? end - 1 : end;
    const text = data.toString('utf8', start, rawEnd);
    const bytes = data.subarray(start, rawEnd);
    if (nl < 0) {
      let complete = false;
      try {
        JSON.parse(text);
        complete = true;
      } catch {
        complete = false;
      }
      if (!complete) break;
      completeBytes = data.length;
      if (text.trim() !== '') lines.push({ lineNo, text, bytes, endOffset: data.length });
      break;
    }
    completeBytes = nl + 1;
    if (text.trim() !== '') lines.push({ lineNo, text, bytes, endOffset: nl + 1 });
    start = nl + 1;
  }
  return { lines, completeBytes };
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

/** 1-based line of a UTF-16 offset in `text`, for a record found inside a larger document. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
