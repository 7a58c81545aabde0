// TabSeparated round trip through the real engine: every string survives, whatever it holds.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTsv, escapeTsv, tsvCell, TsvWriter } from '../../src/sink/tsv.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { openTempSink } from '../helpers/db.ts';

describe('TSV encoding', () => {
  it('escapes what ClickHouse TSV needs escaped, and nothing else', () => {
    expect(escapeTsv('a\tb\nc\\d\re\0')).toBe('a\\tb\\nc\\\\d\\re\\0');
    expect(escapeTsv('plain "quotes" and \'apostrophes\' and ünïcödé')).toBe('plain "quotes" and \'apostrophes\' and ünïcödé');
    expect(tsvCell(null)).toBe('\\N');
    expect(tsvCell('\\N')).toBe('\\\\N');
    expect(tsvCell(['a', "b'c", 'd\te'])).toBe("['a','b\\'c','d\\te']");
    expect(tsvCell(true)).toBe('true');
    expect(() => tsvCell(Number.NaN)).toThrow();
    expect(encodeTsv([], ['x'] as never[]).byteLength).toBe(0);
  });
});

describe('TSV into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('tsv'));
  });
  afterAll(async () => cleanup?.());

  it('round-trips arbitrary strings, arrays and nulls exactly', async () => {
    const strings = fc.sample(fc.string({ unit: 'grapheme', maxLength: 40 }), 300);
    strings.push('\\N', '\\', "'", '\t\n\r\b\f\0', '[1,2]', '\\u00e9', '{"a":-0}');
    const rows = strings.map((s, i) => ({
      dead_letter_id: `tsv-${i}`,
      raw: Buffer.from(s, 'utf8'),
      raw_bytes: Buffer.byteLength(s),
      reason: 'schema' as const,
      detail: s,
      source: `${s}:${i}`,
      ingested_at: '2026-12-02 00:00:00.000',
      redactions: 0,
      host: '',
      device_id: '',
    }));
    await sink.writeDeadLetters(rows);
    const back = await sink.queryRows<{ dead_letter_id: string; detail: string; source: string; raw: string }>(
      "SELECT dead_letter_id, detail, source, raw FROM dead_letters FINAL WHERE startsWith(dead_letter_id, 'tsv-') ORDER BY toUInt32(substring(dead_letter_id, 5))",
    );
    expect(back.map((r) => r.detail)).toEqual(strings);
    expect(back.map((r) => r.raw)).toEqual(strings);
    expect(back.map((r) => r.source)).toEqual(strings.map((s, i) => `${s}:${i}`));
  });
});

describe('TsvWriter', () => {
  it('grows from a tiny buffer without losing or splitting a character', () => {
    const rows = Array.from({ length: 500 }, (_, i) => ({ a: `行${i}\t😀${'é'.repeat(i % 7)}`, b: i % 3 === 0 ? null : i, c: [`x'${i}`] }));
    const w = new TsvWriter(8);
    for (const r of rows) w.row(r, ['a', 'b', 'c']);
    const expected = rows.map((r) => `${tsvCell(r.a)}\t${tsvCell(r.b)}\t${tsvCell(r.c)}\n`).join('');
    expect(w.rows).toBe(500);
    expect(w.bytes().toString('utf8')).toBe(expected);
    expect(w.byteLength).toBe(Buffer.byteLength(expected));
  });
});
