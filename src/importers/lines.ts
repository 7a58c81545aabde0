// Line splitting shared by the JSONL importers: byte offsets for incremental imports, and the
// rule for a last line without a newline (a log being written).

export interface RawLine {
  /** 1-based line number. */
  readonly lineNo: number;
  readonly text: string;
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
    const text = data.toString('utf8', start, end).replace(/\r$/, '');
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
      if (text.trim() !== '') lines.push({ lineNo, text, endOffset: data.length });
      break;
    }
    completeBytes = nl + 1;
    if (text.trim() !== '') lines.push({ lineNo, text, endOffset: nl + 1 });
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
