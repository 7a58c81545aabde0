// Encodes rows as ClickHouse TabSeparated: about twice as fast for the engine to parse as
// JSONEachRow (no key names to match), and one encoder serves chdb and a server alike.
//
// Escaping follows ClickHouse's TSV rules: backslash, tab, line feed, carriage return,
// backspace, form feed and NUL are backslash-escaped; NULL is \N; arrays are written
// [elem,...] with strings single-quoted (a quote inside escaped as \').

export type TsvValue = string | number | boolean | null | readonly string[];

const NEEDS_ESCAPE = /[\\\t\n\r\b\f\0]/;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\0': '\\0' };

export function escapeTsv(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(/[\\\t\n\r\b\f\0]/g, (c) => ESCAPES[c] as string) : s;
}

function quoteArrayElement(s: string): string {
  const e = escapeTsv(s);
  return `'${e.includes("'") ? e.replace(/'/g, "\\'") : e}'`;
}

export function tsvCell(v: TsvValue): string {
  if (v === null) return '\\N';
  if (typeof v === 'string') return escapeTsv(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`Cannot write ${v} to ClickHouse`);
    return String(v);
  }
  return `[${v.map(quoteArrayElement).join(',')}]`;
}

/** The TabSeparated body of `rows`, one line per row, columns in the given order. */
export function encodeTsv<T>(rows: readonly T[], columns: readonly (keyof T & string)[]): string {
  const lines = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as T;
    let line = '';
    for (let c = 0; c < columns.length; c++) {
      if (c > 0) line += '\t';
      line += tsvCell(row[columns[c] as keyof T] as TsvValue);
    }
    lines[i] = line;
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}
