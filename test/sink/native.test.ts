// The Native encoding (src/sink/native.ts) against the real engine: the column types it reads from
// the schema snapshot are the engine's own, and rows with edge values written as Native blocks
// read back equal to the same rows written as TabSeparated (the encoding used before) into a twin
// table, and equal to the values given. Wrong values are a clear error, not a wrong row.
import { readFileSync } from 'node:fs';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEvent, DEFAULT_LIMITS } from '../../src/decode/event.ts';
import type { ToolCallRow } from '../../src/model/records.ts';
import type { TokenUsageRow } from '../../src/model/usage.ts';
import { ANALYTICS_TABLE_NAMES, INSERT_COLUMNS, INSERTS_DIR, type ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { declaredTypes, encodeNative, nativeColumns, NativeWriter, wireOf } from '../../src/sink/native.ts';
import { SCHEMA_SNAPSHOT } from '../../src/sink/schema-snapshot.ts';
import { encodeTsv } from '../../src/sink/tsv.ts';
import { openTempSink } from '../helpers/db.ts';

interface RawInsert {
  rawInsert(p: { table: string; values: Buffer; format: 'TabSeparated'; columns: readonly string[]; settings: Record<string, number> }): Promise<unknown>;
}

const EDGE_STRINGS: readonly string[] = [
  '',
  'a',
  'x'.repeat(12), // the longest text copied by the ASCII loop
  'x'.repeat(11) + 'é', // the loop meets a non-ASCII unit and hands the text to Buffer's writer
  'é',
  'x'.repeat(13),
  'x'.repeat(41) + 'é', // 42 code units, 43 bytes: the short path with a non-ASCII tail
  'x'.repeat(42) + 'é', // 43 code units: the long path
  'é'.repeat(42),
  '😀'.repeat(21),
  'lone \uD800 surrogate',
  'y'.repeat(127), // one LEB128 length byte
  'y'.repeat(128), // two
  'z'.repeat(16_384), // three
  'w'.repeat(200_000),
  'tab\there\nnewline\r\\backslash\0nul\b\f',
  "-- { serverError 1 }  // {serverError:1} /* c */ #! # x f() { echo hi; }",
  "'); DROP TABLE tool_calls; --",
  '{"n": 18446744073709551616, "deep": [[["x"]]]}',
];

let sink: ClickHouseSink;
let dir: string;
let cleanup: () => Promise<void>;
let baseCall: ToolCallRow;
beforeAll(async () => {
  ({ sink, dir, cleanup } = await openTempSink('native'));
  const line = readFileSync(new URL('../../fixtures/claude_code/calls.jsonl', import.meta.url), 'utf8').split('\n')[0] as string;
  const o = decodeEvent(Buffer.from(line), 'native.test:1', '2026-12-04 10:00:00.000', DEFAULT_LIMITS);
  if (o.kind !== 'row') throw new Error(`the fixture's first line is a ${o.kind}`);
  baseCall = o.row;
}, 60_000);
afterAll(async () => cleanup());

/** A value as UTF-8 stores it (a lone surrogate becomes U+FFFD, in either encoding). */
function asStored(v: unknown): unknown {
  if (typeof v === 'string') return Buffer.from(v).toString();
  return Array.isArray(v) ? v.map(asStored) : v;
}

async function dump(table: string): Promise<Record<string, unknown>[]> {
  return sink.queryRows<Record<string, unknown>>(`SELECT * FROM ${table} ORDER BY event_id`);
}

function toolCalls(): ToolCallRow[] {
  return EDGE_STRINGS.map((s, i) => ({
    ...baseCall,
    event_id: `e${String(i).padStart(3, '0')}`,
    session_id: `s-${s.slice(0, 50)}`,
    tool_name: s.slice(0, 300),
    canonical_input: s,
    raw_input: s,
    command: i % 3 === 0 ? null : s,
    path: i % 2 === 0 ? null : s,
    offset: i % 4 === 0 ? null : i % 4 === 1 ? '-9223372036854775808' : i % 4 === 2 ? '9223372036854775807' : String(-i),
    limit: i % 2 === 0 ? String(i) : null,
    duration_ms: i % 2 === 0 ? null : 2 ** 53 - 1 - i,
    images: i,
    read_only: i % 2 === 0,
    flags: (i % 3 === 0 ? [] : [s.slice(0, 20), "quote'and\\back"]) as unknown as ToolCallRow['flags'], // any text, as an array column holds it
    error: s,
    ts: `2026-12-0${(i % 9) + 1} 0${i % 10}:1${i % 10}:59.${String(i).padStart(3, '0')}`,
  }));
}

function tokenUsage(): TokenUsageRow[] {
  const u64 = ['0', '1', '4294967295', '4294967296', '9007199254740993', '18446744073709551615', null];
  return EDGE_STRINGS.map((s, i) => ({
    event_id: `u${String(i).padStart(3, '0')}`,
    ts: '2026-12-04 10:00:00.123',
    harness: 'codex',
    session_id: s.slice(0, 100),
    agent_id: '',
    host: 'h',
    device_id: '',
    turn_id: s,
    model: 'gpt-5-codex',
    source: i % 2 === 0 ? 'observed' : 'estimated',
    request_id: s,
    input_tokens: u64[i % u64.length] as string | null,
    output_tokens: u64[(i + 1) % u64.length] as string | null,
    cache_read_tokens: u64[(i + 2) % u64.length] as string | null,
    cache_write_tokens: null,
    reasoning_tokens: u64[(i + 3) % u64.length] as string | null,
    estimated_tokens: u64[(i + 4) % u64.length] as string | null,
    content_class: 'code',
    content_bytes: String(i * 1000),
    context_tokens: '18446744073709551615',
    context_source: 'observed+estimated',
    context_window_tokens: i % 2 === 0 ? '400000' : null,
    usage_pct: [0, 0.1, 85, 99.99999999999999, 1e-300, 1234.5678][i % 6] as number,
    above_threshold: i % 2 === 1,
    threshold_pct: 85,
    headroom_tokens: '0',
    drift_estimated_tokens: null,
    drift_observed_tokens: '7',
    drift_content_class: '',
    last_observed_context: null,
    estimated_since_observed: String(i),
    classes_since_observed: i % 2 === 0 ? [] : ['code', s.slice(0, 30)],
    session_seq: String(i + 1),
    flags: [],
    origin: s,
    ingested_at: '2026-12-04 10:00:01.999',
  }));
}

describe('Native blocks', () => {
  it('take every insert column type from the DDL, as the engine reports the types', async () => {
    const engine = await sink.queryRows<{ table: string; name: string; type: string }>(
      `SELECT table, name, type FROM system.columns WHERE database = currentDatabase() AND table IN (${ANALYTICS_TABLE_NAMES.map((t) => `'${t}'`).join(', ')})`,
    );
    expect(engine.length).toBeGreaterThan(100);
    for (const t of SCHEMA_SNAPSHOT.tables) {
      const declared = declaredTypes(t.create);
      const mine = engine.filter((c) => c.table === t.name);
      if (!(ANALYTICS_TABLE_NAMES as readonly string[]).includes(t.name)) continue;
      expect([...declared.keys()].sort(), t.name).toEqual(mine.map((c) => c.name).sort());
      for (const c of mine) expect(declared.get(c.name), `${t.name}.${c.name}`).toBe(c.type);
    }
    // Every table written as Native has a wire type for each column its insert names.
    for (const t of ANALYTICS_TABLE_NAMES.filter((n) => n !== 'dead_letters')) {
      expect(nativeColumns(t, INSERT_COLUMNS[t]).map((c) => c.name)).toEqual(INSERT_COLUMNS[t]);
    }
  });

  it('tool calls with edge values read back as the same rows written as TabSeparated, and as given', async () => {
    const rows = toolCalls();
    const batch = sink.toolCallBatch(1 << 20);
    for (const r of rows) batch.add(r);
    await sink.writeToolCalls(batch);
    await sink.client.command({ query: 'CREATE TABLE tool_calls_tsv AS tool_calls' });
    const chdb = (sink as unknown as { chdb: RawInsert }).chdb;
    await chdb.rawInsert({ table: 'tool_calls_tsv', values: encodeTsv(rows, INSERT_COLUMNS.tool_calls as (keyof ToolCallRow)[]), format: 'TabSeparated', columns: INSERT_COLUMNS.tool_calls, settings: {} });
    const native = await dump('tool_calls');
    expect(native).toHaveLength(EDGE_STRINGS.length);
    expect(native).toEqual(await dump('tool_calls_tsv'));
    for (let i = 0; i < rows.length; i++) {
      const got = native[i] as Record<string, unknown>;
      const want = rows[i] as ToolCallRow;
      for (const k of ['raw_input', 'canonical_input', 'command', 'path', 'offset', 'limit', 'flags', 'ts', 'read_only', 'images', 'error'] as const) {
        expect(got[k], `${want.event_id}.${k}`).toEqual(asStored(want[k]));
      }
      expect(got['duration_ms'], `${want.event_id}.duration_ms`).toEqual(want.duration_ms === null ? null : String(want.duration_ms));
    }
    // Each block's file is gone once the engine read it.
    expect(readdirSync(join(dir, 'db', INSERTS_DIR))).toEqual([]);
  });

  it('token usage with u64 edges, NULLs, floats and arrays reads back as TabSeparated did, and as given', async () => {
    const rows = tokenUsage();
    await sink.writeTokenUsage(rows);
    await sink.client.command({ query: 'CREATE TABLE token_usage_tsv AS token_usage' });
    const chdb = (sink as unknown as { chdb: RawInsert }).chdb;
    await chdb.rawInsert({ table: 'token_usage_tsv', values: encodeTsv(rows, INSERT_COLUMNS.token_usage as (keyof TokenUsageRow)[]), format: 'TabSeparated', columns: INSERT_COLUMNS.token_usage, settings: {} });
    const native = await dump('token_usage');
    expect(native).toHaveLength(EDGE_STRINGS.length);
    expect(native).toEqual(await dump('token_usage_tsv'));
    for (let i = 0; i < rows.length; i++) {
      const got = native[i] as Record<string, unknown>;
      const want = rows[i] as TokenUsageRow;
      for (const k of ['input_tokens', 'output_tokens', 'cache_read_tokens', 'reasoning_tokens', 'estimated_tokens', 'context_tokens', 'context_window_tokens', 'usage_pct', 'above_threshold', 'classes_since_observed', 'turn_id', 'origin', 'ts'] as const) {
        expect(got[k], `${want.event_id}.${k}`).toEqual(asStored(want[k]));
      }
    }
  });

  it('refuses a value its column cannot hold, naming the column', () => {
    const cols = nativeColumns('token_usage', INSERT_COLUMNS.token_usage);
    const good = tokenUsage()[0] as TokenUsageRow;
    const cases: [Partial<TokenUsageRow> | Record<string, unknown>, RegExp][] = [
      [{ input_tokens: '18446744073709551616' }, /not a UInt64: 18446744073709551616/],
      [{ input_tokens: '-1' }, /not a UInt64: -1/],
      [{ context_tokens: null }, /column context_tokens/],
      [{ threshold_pct: 256 }, /UInt8 column threshold_pct/],
      [{ usage_pct: Number.NaN }, /Float64 column usage_pct/],
      [{ turn_id: 7 }, /String column turn_id/],
      [{ flags: ['ok', 3] }, /Array\(String\) column flags/],
      [{ model: undefined }, /String column model/],
    ];
    for (const [change, message] of cases) {
      const w = new NativeWriter(cols);
      expect(() => w.row({ ...good, ...change }), JSON.stringify(change)).toThrow(message);
    }
    expect(() => wireOf('Map(String, UInt64)')).toThrow(/no Native encoding for the column type Map\(String, UInt64\)/);
    expect(() => nativeColumns('token_usage', ['no_such_column'])).toThrow(/no column no_such_column in token_usage/);
  });

  it('writes a String as its UTF-8 length and bytes, whatever its size against the length prefix sizes', () => {
    const leb = (v: number): number[] => {
      const out: number[] = [];
      while (v >= 0x80) {
        out.push((v & 0x7f) | 0x80);
        v = Math.floor(v / 128);
      }
      out.push(v);
      return out;
    };
    const units = ['a', 'é', '中', '😀', '\ud800'];
    const lengths = [0, 1, 12, 13, 42, 43, 44, 63, 64, 127, 128, 129, 5461, 5462, 16383, 16384, 16385, 700_000];
    for (const unit of units) {
      for (const n of lengths) {
        for (const text of [unit.repeat(Math.ceil(n / unit.length)).slice(0, n), `${'a'.repeat(Math.max(0, n - 1))}${unit}`]) {
          const w = new NativeWriter([{ name: 'x', wire: 'String', nullable: false }]);
          w.row({ x: text });
          const utf8 = Buffer.from(text, 'utf8');
          const want = Buffer.concat([Buffer.from(leb(utf8.length)), utf8]);
          const got = w.bytes();
          expect(got.subarray(got.length - want.length).equals(want), `${JSON.stringify(unit)} x ${n}`).toBe(true);
        }
      }
    }
  });

  it('writes raw bytes to a String column as their length and the bytes, a large value its own part (not copied), between other rows', () => {
    const leb = (v: number): Buffer => {
      const out: number[] = [];
      while (v >= 0x80) {
        out.push((v & 0x7f) | 0x80);
        v = Math.floor(v / 128);
      }
      out.push(v);
      return Buffer.from(out);
    };
    for (const n of [0, 1, 127, 128, 65_535, 65_536, 300_000]) {
      const raw = Buffer.alloc(n);
      for (let i = 0; i < n; i++) raw[i] = (i * 7 + 3) & 0xff; // not UTF-8: bytes as they are
      const w = new NativeWriter([{ name: 'x', wire: 'String', nullable: false }]);
      w.row({ x: 'before' });
      w.row({ x: raw });
      w.row({ x: 'after' });
      const want = Buffer.concat([leb(6), Buffer.from('before'), leb(n), raw, leb(5), Buffer.from('after')]);
      const parts = w.parts();
      const got = Buffer.concat(parts);
      expect(got.subarray(got.length - want.length).equals(want), `${n} bytes`).toBe(true);
      // A large value is one of the parts as given (the same memory), not a copy.
      if (n >= 65_536) expect(parts.some((p) => p.buffer === raw.buffer && p.byteOffset === raw.byteOffset && p.length === n)).toBe(true);
    }
  });

  it('writes an Int64 as BigInt would, from numbers and decimal text, and refuses one out of range', () => {
    const values: (number | string)[] = [0, -1, 1, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1, 2 ** 32 - 1, 2 ** 32, -(2 ** 32), -(2 ** 32) - 1, 2 ** 53 - 1, -(2 ** 53 - 1)];
    for (const v of [...values]) values.push(String(v));
    values.push('007', '-0', '-007', '123456789012345', '-123456789012345', '1234567890123456', '9007199254740993', '-9007199254740993', '9223372036854775807', '-9223372036854775808');
    for (const v of values) {
      const w = new NativeWriter([{ name: 'x', wire: 'Int64', nullable: false }]);
      w.row({ x: v });
      const want = Buffer.alloc(8);
      want.writeBigInt64LE(BigInt(v));
      expect(w.bytes().subarray(-8), String(v)).toEqual(want);
    }
    for (const v of ['9223372036854775808', '-9223372036854775809', 2 ** 63]) {
      expect(() => new NativeWriter([{ name: 'x', wire: 'Int64', nullable: false }]).row({ x: v }), String(v)).toThrow(/not an Int64/);
    }
  });

  it('encodes a block by the format: counts, names, types, null map, offsets', () => {
    const parts = encodeNative('token_usage', [tokenUsage()[6] as TokenUsageRow], ['event_id', 'input_tokens', 'classes_since_observed']);
    const b = Buffer.concat(parts);
    // 3 columns, 1 row; "event_id" String "u006"; "input_tokens" Nullable(UInt64): null map 1, value 0;
    // "classes_since_observed" Array(String): offset 0, no elements.
    const expected = Buffer.concat([
      Buffer.from([3, 1]),
      Buffer.from([8]), Buffer.from('event_id'), Buffer.from([6]), Buffer.from('String'), Buffer.from([4]), Buffer.from('u006'),
      Buffer.from([12]), Buffer.from('input_tokens'), Buffer.from([16]), Buffer.from('Nullable(UInt64)'), Buffer.from([1]), Buffer.alloc(8),
      Buffer.from([22]), Buffer.from('classes_since_observed'), Buffer.from([13]), Buffer.from('Array(String)'), Buffer.alloc(8),
    ]);
    expect(b.toString('hex')).toBe(expected.toString('hex'));
  });
});
