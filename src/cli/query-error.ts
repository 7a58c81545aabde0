// `toolcanon query` with SQL the engine refuses: the engine's message made short, with the SQL
// line and a caret under the position it names ("failed at position N (line L, col C)"), or
// under the identifier it could not resolve. The engine echoes the rest of the query and the
// FORMAT clause the client appends; neither is shown.

/** A query the engine refused, described for the user (exit 1). */
export class QueryError extends Error {
  override readonly name = 'QueryError';
}

/** The engine's "Expected one of: a, b, c, …" kept to its first few choices. */
const MAX_EXPECTED = 8;

function shortExpected(text: string): string {
  const m = /^Expected one of: ([\s\S]*?)\.?\s*$/.exec(text);
  if (!m) return text.replace(/\.\s*$/, '');
  const options = (m[1] ?? '').split(', ');
  return `expected one of: ${options.slice(0, MAX_EXPECTED).join(', ')}${options.length > MAX_EXPECTED ? ', …' : ''}`;
}

/** 1-based line and column of a 1-based character position in `sql`, or undefined past its end. */
function lineColOf(sql: string, position: number): { line: number; col: number } | undefined {
  if (position < 1 || position > sql.length) return undefined;
  const before = sql.slice(0, position - 1).split('\n');
  return { line: before.length, col: (before.at(-1)?.length ?? 0) + 1 };
}

/** The SQL line and a caret under `col` (1-based), a long line cut to a window around it. */
export function markPosition(sql: string, at: { line: number; col: number } | 'end'): string {
  const lines = sql.split('\n');
  const lineNo = at === 'end' ? lines.length : at.line;
  const text = (lines[lineNo - 1] ?? '').replace(/\t/g, ' ').replace(/\s+$/, '');
  let col = at === 'end' ? text.length + 1 : Math.min(at.col, text.length + 1);
  let shown = text;
  const WIDTH = 100;
  if (shown.length > WIDTH) {
    const start = Math.max(0, Math.min(col - 1 - WIDTH / 2, shown.length - WIDTH));
    shown = `${start > 0 ? '…' : ''}${shown.slice(start, start + WIDTH)}${start + WIDTH < text.length ? '…' : ''}`;
    col = col - start + (start > 0 ? 1 : 0);
  }
  return `  ${shown}\n  ${' '.repeat(col - 1)}^`;
}

/**
 * The engine's refusal of the user's `sql` as a QueryError with the position marked, or
 * undefined when the error is not one about the SQL (a data directory, a server down).
 */
export function describeQueryError(error: unknown, sql: string): QueryError | undefined {
  const raw = String((error as Error)?.message ?? error)
    .replace(/^(Code: \d+\. )?(DB::Exception: )+/, '')
    .replace(/ \(version [0-9.]+[^)]*\)/g, '')
    .replace(/\s*\([A-Z_]+\)\s*$/, '');
  const position = /failed at position (\d+)/.exec(raw);
  if (position) {
    const lc = /\(line (\d+), col (\d+)\)/.exec(raw);
    let at: { line: number; col: number } | undefined;
    if (lc) {
      const line = Number(lc[1]);
      const col = Number(lc[2]);
      const text = sql.split('\n')[line - 1];
      // Past the user's SQL (the FORMAT clause the client appends): the SQL ended too early.
      if (text !== undefined && col <= text.length + 1 && !(line === sql.split('\n').length && col > text.replace(/\s+$/, '').length)) at = { line, col };
    } else {
      at = lineColOf(sql, Number(position[1]));
    }
    const reasonAt = raw.search(/\.\s+(Expected|Unmatched|Unrecognized|Bad|Wrong|Missing|Too)\b/);
    const reason = reasonAt < 0 ? '' : `: ${shortExpected(raw.slice(reasonAt + 1).trim()).replace(/^Unmatched/, 'unmatched').replace(/\.\s*$/, '')}`;
    const where = at === undefined ? 'at the end of the SQL' : `at line ${at.line}, col ${at.col}`;
    return new QueryError(`query failed: syntax error ${where}${reason}\n${markPosition(sql, at ?? 'end')}`);
  }
  // "Unknown … identifier `x` in scope SELECT …": the scope is the query again; the name is marked.
  const unknown = /^(Unknown [^`']*?identifier [`']([^`']+)[`'])(?: in scope [\s\S]*?)?(\. Maybe you meant: [^\n]*?)?\.?\s*$/.exec(raw.split('\n\n')[0] ?? raw);
  if (unknown) {
    const name = unknown[2] ?? '';
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const found = new RegExp(`(^|[^A-Za-z0-9_])(${escaped})(?![A-Za-z0-9_])`).exec(sql);
    const message = `query failed: ${unknown[1] ?? ''}${unknown[3] ?? ''}`;
    if (found === null) return new QueryError(message);
    const lc = lineColOf(sql, found.index + (found[1] ?? '').length + 1);
    return new QueryError(lc === undefined ? message : `${message}\n${markPosition(sql, lc)}`);
  }
  return undefined;
}
