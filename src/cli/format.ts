// Renders result rows as an aligned table, JSON lines (one object per line) or CSV.
import type { Row } from '../report/sql.ts';

export const OUTPUT_FORMATS = ['table', 'json', 'csv'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export type { Row };

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function csvCell(v: unknown): string {
  const s = cellText(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const NUMERIC = /^-?[0-9]+(\.[0-9]+)?$/;

export function renderRows(rows: readonly Row[], format: OutputFormat, columns: readonly string[] = rows[0] ? Object.keys(rows[0]) : []): string {
  switch (format) {
    case 'json':
      return rows.map((r) => JSON.stringify(r)).join('\n');
    case 'csv':
      return [columns.join(','), ...rows.map((r) => columns.map((c) => csvCell(r[c])).join(','))].join('\n');
    case 'table': {
      if (columns.length === 0) return '(no rows)';
      const cells = rows.map((r) => columns.map((c) => cellText(r[c]).replace(/\s+/g, ' ')));
      const widths = columns.map((c, i) => Math.min(60, Math.max(c.length, ...cells.map((row) => (row[i] ?? '').length))));
      const fit = (s: string, w: number): string => {
        if (s.length <= w) return s;
        // A source (`file:line`, `topic/partition/offset`) keeps its end: the line or offset is
        // what a user needs to find the record; the start of a path is cut instead.
        const tail = /(?::[0-9]+|\/[0-9]+\/[0-9]+)$/.exec(s)?.[0];
        if (tail !== undefined && tail.length + 2 < w) {
          const keep = w - 1;
          return `…${s.slice(s.length - keep)}`;
        }
        return `${s.slice(0, w - 1)}…`;
      };
      const pad = (s: string, i: number, numeric: boolean): string => {
        const w = widths[i] ?? 0;
        const t = fit(s, w);
        return numeric ? t.padStart(w) : t.padEnd(w);
      };
      const header = columns.map((c, i) => pad(c, i, false)).join('  ');
      const rule = widths.map((w) => '-'.repeat(w)).join('  ');
      const body = cells.map((row) => row.map((s, i) => pad(s, i, NUMERIC.test(s))).join('  ').trimEnd());
      return [header.trimEnd(), rule, ...body].join('\n');
    }
    default: {
      const never: never = format;
      throw new Error(`Unknown format ${String(never)}`);
    }
  }
}
