// Generators of bad input lines for the fuzz suite: valid lines of the repository's own formats
// mutated at the JSON level (wrong types, missing and unknown members, duplicate keys, escaped
// keys, numbers beyond 2^64, huge strings, deep nesting, NUL, lone surrogates, cross-type
// members) and at the byte level (truncation, deletion, duplication, invalid UTF-8, NUL, BOMs,
// CR, CRLF), plus random bytes and random JSON.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { pathsOf, type JsonPath } from '../helpers/json-paths.ts';

export const REPO = new URL('../../', import.meta.url).pathname;

/** Non-blank lines of a file (LF-separated) as bytes, up to `maxBytes` each. */
export function seedLines(path: string, maxBytes = 64 * 1024): Buffer[] {
  const data = readFileSync(path);
  const out: Buffer[] = [];
  let start = 0;
  while (start < data.length) {
    let nl = data.indexOf(0x0a, start);
    if (nl < 0) nl = data.length;
    const line = data.subarray(start, nl);
    if (line.toString('latin1').trim() !== '' && line.byteLength <= maxBytes) out.push(Buffer.from(line));
    start = nl + 1;
  }
  return out;
}

/** The envelope lines shipped in fixtures/: every harness's calls, MCP lifecycle, usage, bad ones. */
export function envelopeSeeds(): { valid: Buffer[]; bad: Buffer[] } {
  const fixtures = join(REPO, 'fixtures');
  const valid: Buffer[] = [];
  const bad: Buffer[] = [];
  for (const dir of readdirSync(fixtures).sort()) {
    const folder = join(fixtures, dir);
    if (!statSync(folder).isDirectory()) continue;
    for (const file of readdirSync(folder).sort()) {
      if (!file.endsWith('.jsonl')) continue;
      (dir === 'bad' ? bad : valid).push(...seedLines(join(folder, file)));
    }
  }
  return { valid, bad };
}

// ---------------------------------------------------------------------------------------------
// JSON values as text: what a mutation puts in place of a member.

const BIG_NUMBERS = [
  '18446744073709551615', // 2^64 - 1
  '18446744073709551616', // 2^64
  '184467440737095516160000',
  '9007199254740993', // 2^53 + 1
  '-1',
  '-0',
  '0',
  '1.0',
  '1.5',
  '1e3',
  '1E2',
  '1e400',
  '-1e400',
  '0.1e-400',
  '123456789012345678901234567890123456789012345678901234567890',
  '00',
  '01',
  '+1',
  '.5',
  '0x10',
  'NaN',
  'Infinity',
];

const ODD_STRINGS = [
  '""',
  '"\\u0000"',
  '"a\\u0000b"',
  '"\\ud800"',
  '"\\udc00\\ud800"',
  '"\\ud83d\\ude00"',
  '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
  `"'); DROP TABLE tool_calls; --"`,
  // SQL comments holding ClickHouse test hints (the embedded engine scanned inserted data for them).
  '"-- {serverError:1}"',
  '"x /* { echo } */ y"',
  '"curl https://example.com && f() { echo hi; }"',
  '"# {clientError:1}"',
  '"\\t\\n\\r"',
  '"Ω≈ç√∫˜µ≤≥÷"',
  '"😀"',
  '"\u2028\u2029"',
  '"\u0000"', // a raw NUL inside a string: invalid JSON
  '"\t"', // a raw tab inside a string: invalid JSON
  '"\\x41"',
  '"\\u12"',
  '"\\uD800\\u0041"',
  '"2026-12-02T10:00:00.123Z"',
  '"2026-02-30T10:00:00Z"',
  '"0000-01-01T00:00:00Z"',
  '"9999-12-31T23:59:59.999999999+23:59"',
  '"2026-12-02 10:00:00z"',
  '"toolcanon.event/v1"',
  '"tool_call"',
  '"usage"',
  '"mcp_status"',
  '"mcp_tools"',
  '"mcp_tools_changed"',
  '"claude_code"',
  '"codex"',
  '"mcp"',
  '"github__create_issue"',
  '"mcp__github__create_issue"',
  '"a__b__c"',
  '"use_tool"',
  '"ok"',
  '"error"',
  '"pending"',
  '"connected"',
  '"stdio"',
  '"sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"',
  '"Authorization: Bearer abcdefghijklmnop1234"',
  '"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
  '"postgres://user:hunter2@db:5432/app"',
  '"-----BEGIN RSA PRIVATE KEY-----\\nMIIB\\n-----END RSA PRIVATE KEY-----"',
];

const STRUCTURAL = ['null', 'true', 'false', '[]', '{}', '[null]', '{"":""}', '{"a":1,"a":2}', '{"__proto__":{"x":1}}', '{"constructor":1}', '[1,2', '{"a":', '}', ']', '', ' ', ',', ':'];

/** Nesting of `depth` levels of arrays or objects (text; depth 10 000 stays a 20 KB string). */
export function nested(depth: number, kind: 'array' | 'object', inner = '1'): string {
  return kind === 'array' ? `${'['.repeat(depth)}${inner}${']'.repeat(depth)}` : `${'{"x":'.repeat(depth)}${inner}${'}'.repeat(depth)}`;
}

const stringText = (max: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: max }),
    fc.string({ unit: 'binary', maxLength: max }),
    fc.string({ maxLength: max }),
  ).map((s) => JSON.stringify(s));

/** A JSON value as text, valid or nearly so: what goes in place of a member's value. */
export const valueText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...BIG_NUMBERS), weight: 80 },
  { arbitrary: fc.constantFrom(...ODD_STRINGS), weight: 120 },
  { arbitrary: fc.constantFrom(...STRUCTURAL), weight: 60 },
  { arbitrary: stringText(40), weight: 80 },
  { arbitrary: fc.integer().map(String), weight: 40 },
  { arbitrary: fc.bigInt({ min: 0n, max: 2n ** 70n }).map(String), weight: 40 },
  { arbitrary: fc.double().map((d) => JSON.stringify(d) ?? 'null'), weight: 20 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null'), weight: 60 },
  // Deep nesting: around the default --max-depth (128), and far beyond it.
  { arbitrary: fc.tuple(fc.constantFrom(1, 60, 125, 126, 127, 128, 129, 200, 1000, 10_000), fc.constantFrom<'array' | 'object'>('array', 'object')).map(([d, k]) => nested(d, k)), weight: 20 },
  // Huge strings: 64 KiB to 1 MiB, rarely (they are slow to generate and to check).
  { arbitrary: fc.tuple(fc.constantFrom(65_536, 300_000, 1_048_576), fc.constantFrom('x', 'é', '\\u0000', '"', 'key=', '😀')).map(([n, unit]) => (unit === '"' ? `"${'\\"'.repeat(n / 2)}"` : `"${unit.repeat(Math.ceil(n / unit.length))}"`)), weight: 1 },
);

/**
 * Deepest nesting in JSON text that parses (a scalar is 0, `{}` is 1), counted in the text: a
 * value that a later duplicate key replaces still counts, as the decoder refuses deep text.
 */
export function depthOfText(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string, escapes included.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

// ---------------------------------------------------------------------------------------------
// JSON-level mutations of a seed line.


const HOLE = '\u0001fuzz-hole\u0001';
const HOLE_JSON = JSON.stringify(HOLE);

/** The value with the member at `path` replaced by raw text (or removed when text is undefined). */
function withMember(value: unknown, path: JsonPath, text: string | undefined): string {
  const copy: unknown = structuredClone(value);
  let parent: unknown = copy;
  for (const step of path.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[step];
  const last = path[path.length - 1];
  if (last === undefined) return text ?? '';
  if (Array.isArray(parent) && typeof last === 'number') {
    if (text === undefined) parent.splice(last, 1);
    else parent[last] = HOLE;
  } else if (typeof parent === 'object' && parent !== null) {
    const o = parent as Record<string | number, unknown>;
    if (text === undefined) delete o[last];
    else o[last] = HOLE;
  }
  const json = JSON.stringify(copy);
  return text === undefined ? json : json.replace(HOLE_JSON, () => text);
}

const FIELD_NAMES = ['schema', 'type', 'ts', 'harness', 'session_id', 'agent_id', 'turn_id', 'call_id', 'model', 'tool', 'input', 'status', 'output', 'error', 'duration_ms', 'images', 'event_id', 'request_id', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'context_window_tokens', 'server', 'client_id', 'transport', 'state', 'attempt', 'backoff_ms', 'mcp_initialized', 'tools'];
const ODD_KEYS = ['', '__proto__', 'constructor', 'prototype', 'toString', 'extra_field', 'Type', 'type ', '\u0000', '😀', 'a'.repeat(300)];

/** A key as text: plain, with its letters as \u escapes (the same key to JSON.parse), or broken. */
const keyText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...FIELD_NAMES, ...ODD_KEYS).map((k) => JSON.stringify(k)),
  fc.constantFrom(...FIELD_NAMES).map((k) => `"${[...k].map((c, i) => (i === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('')}"`),
  fc.constantFrom('"\\q"', '"\\u12"', '"ty\\"pe"', '"\\ud800"', "'type'", 'type'),
);

export type LineMutation = (line: string) => fc.Arbitrary<string>;

/** JSON-level mutations of a line that parses; the line itself when it does not. */
export function jsonMutation(text: string): fc.Arbitrary<string> {
  // Deep values stay as they are: cloning and serialising them would recurse too deep.
  if (depthOfText(text) > 500) return fc.constant(text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fc.constant(text);
  }
  if (typeof value !== 'object' || value === null) return fc.constant(text);
  const paths = pathsOf(value, 6);
  const top = paths.filter((p) => p.length === 1);
  const anyPath = paths.length > 0 ? fc.constantFrom(...paths) : fc.constant<JsonPath>([]);
  const topPath = top.length > 0 ? fc.constantFrom(...top) : anyPath;
  const serialised = JSON.stringify(value);
  return fc.oneof(
    // A member replaced: mostly a top-level (schema) field, sometimes a nested one.
    { arbitrary: fc.tuple(fc.oneof({ arbitrary: topPath, weight: 3 }, { arbitrary: anyPath, weight: 1 }), valueText).map(([p, v]) => withMember(value, p, v)), weight: 10 },
    // A member removed.
    { arbitrary: fc.oneof(topPath, anyPath).map((p) => withMember(value, p, undefined)), weight: 4 },
    // A member added at the front or the back (unknown, escaped or duplicate keys).
    {
      arbitrary: fc.tuple(keyText, valueText, fc.boolean()).map(([k, v, front]) =>
        front ? `{${k}:${v}${serialised.length > 2 ? ',' : ''}${serialised.slice(1)}` : `${serialised.slice(0, -1)}${serialised.length > 2 ? ',' : ''}${k}:${v}}`,
      ),
      weight: 5,
    },
    // A key written with escapes (the same key to JSON.parse) or repeated with the same value.
    {
      arbitrary: topPath.map((p) => {
        const k = String(p[0]);
        const escaped = `"\\u${k.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(k).slice(2)}`;
        return serialised.replace(`${JSON.stringify(k)}:`, `${escaped}:`);
      }),
      weight: 2,
    },
    // Another event type's members (cross-type), or the type changed.
    { arbitrary: fc.constantFrom('tool_call', 'usage', 'mcp_status', 'mcp_tools', 'mcp_tools_changed', 'Tool_Call', '', 'tool_call ').map((t) => withMember(value, ['type'], JSON.stringify(t))), weight: 2 },
    // Whitespace between tokens: spaces, tabs, CR, LF (JSON allows them all).
    { arbitrary: fc.constantFrom(' ', '\t', '\r\n', '  ', '\n').map((ws) => JSON.stringify(value, null, ws)), weight: 1 },
  );
}

// ---------------------------------------------------------------------------------------------
// Byte-level mutations.

const BYTE_PIECES: readonly Uint8Array[] = [
  [0x00],
  [0xff],
  [0xfe],
  [0x80],
  [0xc0, 0x80], // overlong NUL
  [0xc3], // a lead byte alone
  [0xed, 0xa0, 0x80], // an encoded surrogate
  [0xf4, 0x90, 0x80, 0x80], // beyond U+10FFFF
  [0xe2, 0x82], // cut short
  [0xef, 0xbb, 0xbf], // BOM
  [0x0d],
  [0x0d, 0x0a],
  [0x0a],
  [0x22],
  [0x5c],
  [0x7b],
  [0x7d],
  [0x5b],
  [0x5d],
  [0x2c],
  [0x3a],
  [0x20],
  [0x09],
  [0xc3, 0xa9], // é, valid
  [0xf0, 0x9f, 0x98, 0x80], // 😀, valid
].map((b) => Uint8Array.from(b));

export const bytePiece: fc.Arbitrary<Uint8Array> = fc.oneof(
  { arbitrary: fc.constantFrom(...BYTE_PIECES), weight: 4 },
  { arbitrary: fc.uint8Array({ minLength: 1, maxLength: 4 }), weight: 1 },
);

function concat(...parts: Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}

/** Byte-level mutations of a line (positions drawn as fractions of its length). */
export function byteMutation(line: Uint8Array): fc.Arbitrary<Uint8Array> {
  const at = fc.nat({ max: line.byteLength });
  const len = line.byteLength;
  return fc.oneof(
    // Truncated anywhere (a line cut short by a crash, a full disk, a torn write).
    { arbitrary: at.map((i) => line.subarray(0, i)), weight: 3 },
    // Bytes inserted.
    { arbitrary: fc.tuple(at, bytePiece).map(([i, b]) => concat(line.subarray(0, i), b, line.subarray(i))), weight: 4 },
    // A byte replaced.
    { arbitrary: fc.tuple(fc.nat({ max: Math.max(len - 1, 0) }), bytePiece).map(([i, b]) => concat(line.subarray(0, i), b, line.subarray(i + 1))), weight: 3 },
    // A range deleted or duplicated.
    {
      arbitrary: fc.tuple(at, at, fc.boolean()).map(([a, b, dup]) => {
        const [i, j] = a <= b ? [a, b] : [b, a];
        return dup ? concat(line.subarray(0, j), line.subarray(i, j), line.subarray(j)) : concat(line.subarray(0, i), line.subarray(j));
      }),
      weight: 2,
    },
    // Framing: BOMs, CR, CRLF, spaces, NUL around the line.
    {
      arbitrary: fc.tuple(
        fc.constantFrom<readonly number[]>([], [0xef, 0xbb, 0xbf], [0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf], [0x20, 0x20], [0x09], [0x00], [0x0d]),
        fc.constantFrom<readonly number[]>([], [0x0d], [0x0d, 0x0d], [0x20], [0x00], [0xef, 0xbb, 0xbf], [0x0d, 0x0a]),
      ).map(([pre, post]) => concat(Uint8Array.from(pre), line, Uint8Array.from(post))),
      weight: 2,
    },
  );
}

/** A seed line mutated 1 to 3 times: JSON-level first (while it still parses), then byte-level. */
export function mutatedLine(seeds: readonly Uint8Array[]): fc.Arbitrary<Uint8Array> {
  return fc
    .tuple(fc.constantFrom(...seeds), fc.nat({ max: 2 }), fc.nat({ max: 2 }))
    .chain(([seed, jsonRounds, byteRounds]) => {
      let arb: fc.Arbitrary<string> = fc.constant(Buffer.from(seed).toString('utf8'));
      const needsBytes = jsonRounds === 0 && byteRounds === 0 ? 1 : byteRounds;
      for (let r = 0; r < jsonRounds; r++) arb = arb.chain(jsonMutation);
      let bytes: fc.Arbitrary<Uint8Array> = arb.map((t) => (jsonRounds === 0 ? seed : Buffer.from(t, 'utf8')));
      for (let r = 0; r < needsBytes; r++) bytes = bytes.chain(byteMutation);
      return bytes;
    });
}

/** Wholly random lines: random bytes, random JSON, random text. */
export const randomLine: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.json({ maxDepth: 4 }).map((t) => Buffer.from(t, 'utf8')),
  fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify({ schema: 'toolcanon.event/v1', ...(typeof v === 'object' && v !== null && !Array.isArray(v) ? v : { v }) }), 'utf8')),
  fc.string({ unit: 'binary', maxLength: 200 }).map((t) => Buffer.from(t, 'utf8')),
  fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', ':', ',', '\\', 'u', '0', '1', 'e', '-', '.', ' ', 'a', 'n', 'u', 'l', 't', 'r', 'f'), maxLength: 80 }).map((t) => Buffer.from(t, 'utf8')),
);
