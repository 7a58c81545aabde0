// Encodes rows as ClickHouse Native blocks: the engine reads them 3-6x faster than TabSeparated
// (measured on the replay's own batches: tool_calls 48 vs 177-303 ms for 17 k rows, token_usage
// 45 vs 133-159 ms for 16 k; docs/performance.md), because a column arrives as it is stored and
// nothing is unescaped or parsed per cell.
//
// A block is: the number of columns and of rows (LEB128), then per column its name, its type
// name and its values: a String as LEB128 length + UTF-8 bytes; fixed-width numbers little
// endian; Nullable(T) a null map (one byte per row, 1 = NULL) then T with a default in each NULL
// row; Array(T) the cumulative end offsets (UInt64) then every element as a column of T.
//
// Each column is sent in a wire type its table column converts from on insert (the engine casts a
// Native block's columns to the table's types): LowCardinality(String) as String, and
// DateTime64(3, 'UTC') as its text, so a time is parsed by the engine exactly as the
// TabSeparated text of the same value was. Types come from the tables' own DDL (the schema
// snapshot), so a column added by a migration is encoded by its declared type.
import { SCHEMA_SNAPSHOT } from './schema-snapshot.ts';
import type { TsvValue } from './tsv.ts';

import type { NativeColumn, NativeWire as Wire } from '../model/sink.ts';

export type { NativeColumn };

/** The wire type of a column declared `type` (throws for a type this encoder does not write). */
export function wireOf(type: string): { wire: Wire; nullable: boolean } {
  let t = type.trim();
  let nullable = false;
  const n = /^Nullable\((.*)\)$/.exec(t);
  if (n) {
    nullable = true;
    t = (n[1] as string).trim();
  }
  const lc = /^LowCardinality\((.*)\)$/.exec(t);
  if (lc) t = (lc[1] as string).trim();
  if (t === 'String' || /^DateTime64\(3, 'UTC'\)$/.test(t)) return { wire: 'String', nullable };
  if (t === 'Bool' || t === 'UInt8' || t === 'UInt32' || t === 'UInt64' || t === 'Int64' || t === 'Float64') return { wire: t, nullable };
  if (!nullable && /^Array\((LowCardinality\()?String\)?\)$/.test(t)) return { wire: 'Array(String)', nullable };
  throw new Error(`no Native encoding for the column type ${type}`);
}

/** Column name -> declared type, read from a CREATE TABLE statement. */
export function declaredTypes(create: string): Map<string, string> {
  const types = new Map<string, string>();
  const open = create.indexOf('(');
  let i = open + 1;
  let depth = 0;
  while (i < create.length) {
    const tick = create.indexOf('`', i);
    if (tick < 0 || depth < 0) break;
    const end = create.indexOf('`', tick + 1);
    const name = create.slice(tick + 1, end);
    // The type runs to the first comma, closing parenthesis or keyword at depth 0.
    let j = end + 2;
    const start = j;
    let d = 0;
    let quoted = false;
    for (; j < create.length; j++) {
      const c = create[j];
      if (quoted) {
        if (c === "'") quoted = false;
        continue;
      }
      if (c === "'") quoted = true;
      else if (c === '(') d++;
      else if (c === ')') {
        if (d === 0) break;
        d--;
      } else if (d === 0 && (c === ',' || (c === ' ' && /^ [A-Z]/.test(create.slice(j, j + 2))))) break;
    }
    types.set(name, create.slice(start, j).trim());
    // Skip the rest of the column (DEFAULT/MATERIALIZED expressions) to the next column or the list's end.
    d = 0;
    quoted = false;
    for (; j < create.length; j++) {
      const c = create[j];
      if (quoted) {
        if (c === "'") quoted = false;
        continue;
      }
      if (c === "'") quoted = true;
      else if (c === '(') d++;
      else if (c === ')') {
        if (d === 0) {
          depth = -1;
          break;
        }
        d--;
      } else if (c === ',' && d === 0) break;
    }
    i = j + 1;
  }
  return types;
}

const snapshotTypes = new Map(SCHEMA_SNAPSHOT.tables.map((t) => [t.name, declaredTypes(t.create)]));

/** The wire columns of an insert into `table` naming `columns`, from the table's declared types. */
export function nativeColumns(table: string, columns: readonly string[]): NativeColumn[] {
  const types = snapshotTypes.get(table);
  if (types === undefined) throw new Error(`no table ${table} in the schema snapshot`);
  return columns.map((name) => {
    const type = types.get(name);
    if (type === undefined) throw new Error(`no column ${name} in ${table}`);
    return { name, ...wireOf(type) };
  });
}

const TWO_32 = 2 ** 32;

/** Bytes of the LEB128 encoding of a length `v` (>= 0). */
function lebBytes(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** Decimal integer text (what BigInt reads the same as Number within 15 digits). */
const INT_TEXT = /^-?[0-9]+$/;

/** Writes `s` as UTF-8 at `at` (room is reserved by the caller): Buffer's own writer, without `write`'s argument parsing. */
const utf8Write: (buf: Buffer, s: string, at: number) => number =
  typeof (Buffer.prototype as { utf8Write?: unknown }).utf8Write === 'function'
    ? (buf, s, at) => (buf as Buffer & { utf8Write(s: string, at: number): number }).utf8Write(s, at)
    : (buf, s, at) => buf.write(s, at, 'utf8');

/**
 * A column's bytes as a list of chunks (a full chunk is kept as it is and a new one begun: no
 * copy to grow), with the few writers a Native column needs.
 */
class Bytes {
  private readonly chunks: Buffer[] = [];
  /** Bytes in the full chunks. */
  private done = 0;
  buf: Buffer;
  pos = 0;
  constructor(private chunkSize: number) {
    this.buf = Buffer.allocUnsafeSlow(Math.max(chunkSize, 64));
  }
  get length(): number {
    return this.done + this.pos;
  }
  /** Keeps the bytes written so far as a full chunk; the rest of the buffer goes on as the current one. */
  private closeChunk(): void {
    if (this.pos === 0) return;
    this.chunks.push(this.buf.subarray(0, this.pos));
    this.done += this.pos;
    this.buf = this.buf.subarray(this.pos);
    this.pos = 0;
  }
  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.closeChunk();
    // Chunks grow (to 4 MiB) so that a large column is a few chunks.
    this.chunkSize = Math.min(Math.max(this.chunkSize * 2, 64 * 1024), 4 * 1024 * 1024);
    this.buf = Buffer.allocUnsafeSlow(Math.max(this.chunkSize, n));
  }
  u8(v: number): void {
    if (this.pos >= this.buf.length) this.reserve(1);
    this.buf[this.pos++] = v;
  }
  varUInt(v: number): void {
    this.reserve(10);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }
  str(s: string): void {
    const n = s.length;
    // A UTF-16 code unit is at most 3 bytes of UTF-8: under 43 units the length fits one LEB128
    // byte, written after the text. Up to 12 units of ASCII are copied here; longer (or other)
    // text by one native call (measured on the replay's short cells: 37 vs 60-95 ns a cell for
    // either alone).
    if (n < 43) {
      this.reserve(1 + n * 3);
      const buf = this.buf;
      const at = this.pos + 1;
      let written = -1;
      if (n <= 12) {
        let i = 0;
        for (; i < n; i++) {
          const c = s.charCodeAt(i);
          if (c >= 0x80) break;
          buf[at + i] = c;
        }
        if (i === n) written = n;
      }
      if (written < 0) written = utf8Write(buf, s, at);
      buf[this.pos] = written;
      this.pos = at + written;
      return;
    }
    // Longer text is written once, straight after room for the longest length prefix it could
    // need (3 bytes a code unit at most), instead of measured first (Buffer.byteLength, a pass
    // over the text) and written then; when its real length needs a shorter prefix, the bytes
    // move back by the difference (1-2 bytes, only for texts near a prefix size's limit).
    const most = lebBytes(n * 3);
    this.reserve(most + n * 3);
    const start = this.pos;
    const written = utf8Write(this.buf, s, start + most);
    const need = lebBytes(written);
    if (need < most) this.buf.copyWithin(start + need, start + most, start + most + written);
    // The prefix goes at the start (its room, and varUInt's 10 bytes, are in the reserve above).
    this.varUInt(written);
    this.pos += written;
  }
  /** Raw bytes as a String value (length, then the bytes); a large one is kept as its own chunk, not copied. */
  raw(b: Uint8Array): void {
    this.varUInt(b.byteLength);
    if (b.byteLength < 64 * 1024) {
      this.reserve(b.byteLength);
      this.buf.set(b, this.pos);
      this.pos += b.byteLength;
      return;
    }
    this.closeChunk();
    this.chunks.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    this.done += b.byteLength;
  }
  u32(v: number): void {
    this.reserve(4);
    this.buf.writeUInt32LE(v >>> 0, this.pos);
    this.pos += 4;
  }
  /** An unsigned 64-bit value from a non-negative safe integer or its decimal text (any size up to 2^64-1). */
  u64(v: number | string): void {
    this.reserve(8);
    if (typeof v === 'number' || v.length <= 15) {
      const x = typeof v === 'number' ? v : Number(v);
      if (!Number.isSafeInteger(x) || x < 0) throw new Error(`not a UInt64: ${String(v)}`);
      this.buf.writeUInt32LE(x % TWO_32, this.pos);
      this.buf.writeUInt32LE(Math.floor(x / TWO_32), this.pos + 4);
    } else {
      const b = BigInt(v);
      if (b < 0n || b > 0xffffffffffffffffn) throw new Error(`not a UInt64: ${v}`);
      this.buf.writeBigUInt64LE(b, this.pos);
    }
    this.pos += 8;
  }
  /** A signed 64-bit value from a safe integer or its decimal text (any size in range). */
  i64(v: number | string): void {
    this.reserve(8);
    // A safe integer (or its text, up to 15 digits) is written as two 32-bit halves: no BigInt.
    const x = typeof v === 'number' ? v : v.length <= 15 && INT_TEXT.test(v) ? Number(v) : Number.NaN;
    if (Number.isSafeInteger(x)) {
      const high = Math.floor(x / TWO_32);
      this.buf.writeUInt32LE(x - high * TWO_32, this.pos);
      this.buf.writeInt32LE(high, this.pos + 4);
    } else {
      const b = BigInt(v);
      if (b < INT64_MIN || b > INT64_MAX) throw new Error(`not an Int64: ${String(v)}`);
      this.buf.writeBigInt64LE(b, this.pos);
    }
    this.pos += 8;
  }
  f64(v: number): void {
    this.reserve(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }
  /** The bytes so far, as chunks (views: not to be appended to after). */
  parts(): Buffer[] {
    return this.pos > 0 ? [...this.chunks, this.buf.subarray(0, this.pos)] : [...this.chunks];
  }
}

interface ColumnState {
  readonly spec: NativeColumn;
  readonly data: Bytes;
  /** Nullable: one byte per row. */
  readonly nulls: Bytes | undefined;
  /** Array: the cumulative end offset of each row. */
  readonly offsets: Bytes | undefined;
  elements: number;
}

function bad(column: NativeColumn, v: unknown): Error {
  return new Error(`cannot write ${JSON.stringify(v)} to the ${column.wire} column ${column.name}`);
}

/** The statements that check one value `v` for a column and append it to `d` (its data). */
function cellCode(spec: NativeColumn, i: number): string {
  const fail = `throw bad(c${i}, v);`;
  switch (spec.wire) {
    case 'String':
      return `if (typeof v === 'string') d${i}.str(v); else if (v instanceof Uint8Array) d${i}.raw(v); else ${fail}`;
    case 'Bool':
    case 'UInt8':
      return `if (typeof v === 'boolean') d${i}.u8(v ? 1 : 0); else if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 255) d${i}.u8(v); else ${fail}`;
    case 'UInt32':
      return `if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) ${fail} d${i}.u32(v);`;
    case 'UInt64':
      return `if (typeof v !== 'number' && typeof v !== 'string') ${fail} d${i}.u64(v);`;
    case 'Int64':
      return `if (typeof v !== 'number' && typeof v !== 'string') ${fail} d${i}.i64(v);`;
    case 'Float64':
      return `if (typeof v !== 'number' || !Number.isFinite(v)) ${fail} d${i}.f64(v);`;
    case 'Array(String)':
      return `if (!Array.isArray(v)) ${fail} for (let k = 0; k < v.length; k++) { const e = v[k]; if (typeof e !== 'string') ${fail} d${i}.str(e); } s${i}.elements += v.length; o${i}.u64(s${i}.elements);`;
  }
}

/** What a NULL row holds in a Nullable column's data (the column's default). */
function emptyCode(spec: NativeColumn, i: number): string {
  if (spec.wire === 'String') return `d${i}.str('');`;
  if (spec.wire === 'Bool' || spec.wire === 'UInt8') return `d${i}.u8(0);`;
  if (spec.wire === 'UInt32') return `d${i}.u32(0);`;
  if (spec.wire === 'UInt64') return `d${i}.u64(0);`;
  if (spec.wire === 'Int64') return `d${i}.i64(0);`;
  if (spec.wire === 'Float64') return `d${i}.f64(0);`;
  throw new Error(`no Nullable(${spec.wire}) column is written`);
}

/** Appends one row's values to its columns (see rowWriter). */
interface RowWriter {
  write(row: object): void;
}

/**
 * An object appending a row's values to `cols`, its class generated for them as straight-line
 * code: one named property read per column (the rows of one table share a shape, so each read is
 * a direct load) and each column's check and write inline, calling its own Bytes (a shared
 * closure per wire type made every call polymorphic: that cost 3x). The class is made once a
 * process for each list of columns (ROW_WRITERS): every block of a table (a new one each batch)
 * is an instance of it, so V8 optimises its method once. A function made anew per block was
 * optimised anew each batch (58 optimising compilations of 20-80 ms on V8's helper threads in a
 * replay of 100 k events) and ran unoptimised until then.
 */
function rowWriter(cols: readonly ColumnState[]): RowWriter {
  const names: string[] = [];
  const values: unknown[] = [];
  const lines: string[] = [];
  cols.forEach((c, i) => {
    const spec = c.spec;
    if (!/^[a-z_][a-z0-9_]*$/.test(spec.name)) throw new Error(`not a column name: ${spec.name}`);
    names.push(`c${i}`, `d${i}`);
    values.push(spec, c.data);
    let code = cellCode(spec, i);
    if (c.offsets) {
      // An array column also keeps its element count (its state) and its offsets.
      names.push(`s${i}`, `o${i}`);
      values.push(c, c.offsets);
    }
    if (c.nulls) {
      names.push(`n${i}`);
      values.push(c.nulls);
      code = `if (v === null) { n${i}.u8(1); ${emptyCode(spec, i)} } else { n${i}.u8(0); ${code} }`;
    } else code = `if (v === null) throw bad(c${i}, v); ${code}`;
    lines.push(`v = r.${spec.name}; if (v === undefined) throw bad(c${i}, v); ${code}`);
  });
  // The column's own objects are the instance's fields, read into locals of the same names.
  const fields = names.join(', ');
  const body = `return class RowWriter {\nconstructor(${fields}) {\n${names.map((n) => `this.${n} = ${n};`).join('\n')}\n}\nwrite(r) {\nconst { ${fields} } = this;\nlet v;\n${lines.join('\n')}\n}\n};`;
  let make = ROW_WRITERS.get(body);
  if (make === undefined) {
    make = new Function('bad', body)(bad) as new (...args: unknown[]) => RowWriter;
    ROW_WRITERS.set(body, make);
  }
  return new make(...values);
}

/** The row writers' classes by their code, made once a process. */
const ROW_WRITERS = new Map<string, new (...args: unknown[]) => RowWriter>();

/** A Native block built in place: append rows (encoded column by column as they come), then take the bytes. */
export class NativeWriter {
  private readonly cols: ColumnState[];
  /** Appends one row's values to the columns (made for these columns, see rowWriter). */
  private readonly writer: RowWriter;
  /** Rows appended so far. */
  rows = 0;

  /** `sizeHint`: about how many bytes the block will hold (shared out to the columns as they grow). */
  constructor(
    readonly columns: readonly NativeColumn[],
    sizeHint = 64 * 1024,
  ) {
    const each = Math.max(1024, Math.floor(sizeHint / Math.max(1, columns.length)));
    this.cols = columns.map((spec) => ({
      spec,
      data: new Bytes(spec.wire === 'String' || spec.wire === 'Array(String)' ? each : 1024),
      nulls: spec.nullable ? new Bytes(1024) : undefined,
      offsets: spec.wire === 'Array(String)' ? new Bytes(1024) : undefined,
      elements: 0,
    }));
    this.writer = rowWriter(this.cols);
  }

  /** Bytes of the column data so far. */
  get byteLength(): number {
    let n = 0;
    for (const c of this.cols) n += c.data.length + (c.nulls?.length ?? 0) + (c.offsets?.length ?? 0);
    return n;
  }

  /** One row: the value of each column, by the column's name. */
  row(row: object): void {
    this.writer.write(row);
    this.rows++;
  }

  /** The block as a list of buffers (header, then each column's streams), to be written in order. */
  parts(): Buffer[] {
    const head = new Bytes(256);
    head.varUInt(this.cols.length);
    head.varUInt(this.rows);
    const parts: Buffer[] = head.parts();
    for (const c of this.cols) {
      const h = new Bytes(64);
      h.str(c.spec.name);
      h.str(c.spec.nullable ? `Nullable(${c.spec.wire})` : c.spec.wire);
      parts.push(...h.parts());
      if (c.nulls) parts.push(...c.nulls.parts());
      if (c.offsets) parts.push(...c.offsets.parts());
      parts.push(...c.data.parts());
    }
    return parts;
  }

  /** The block as one buffer. */
  bytes(): Buffer {
    return Buffer.concat(this.parts());
  }
}

/** The Native block of `rows` for an insert into `table` naming `columns`, as parts to write in order. */
export function encodeNative(table: string, rows: readonly object[], columns: readonly string[]): Buffer[] {
  const w = new NativeWriter(nativeColumns(table, columns), rows.length * 256);
  for (const r of rows) w.row(r);
  return w.parts();
}
