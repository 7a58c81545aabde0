// Fuzzing the envelope decoder (every event type: tool_call, usage, mcp_status, mcp_tools,
// mcp_tools_changed) with mutated fixture lines, generated events, random bytes and fixed
// pathological inputs. For every case: decodeEvent does not throw and returns exactly one
// outcome; a dead letter carries the bytes received (the trimmed line) and a listed reason that
// agrees with an independent reading of the line; a row's raw input is the line's own text;
// usage figures are exact; BOM + line + CR decodes as the line; redaction changes what is
// stored, never what an event becomes.
import { isUtf8 } from 'node:buffer';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HARNESSES } from '../../src/canonical/meta.ts';
import { canonicalJson, decodeEvent, DEFAULT_LIMITS, trimLine, type DecodeLimits, type DecodeOutcome } from '../../src/decode/event.ts';
import { DEAD_LETTER_REASONS } from '../../src/model/records.ts';
import { deadLetterRowSchema, toolCallRowSchema } from '../../src/model/record-schemas.ts';
import { fuzz, log, runsOf, slowness, timed, SLOW_FACTOR } from './harness.ts';
import { generatedLine } from './events.ts';
import { depthOfText, envelopeSeeds, mutatedLine, nested, randomLine } from './lines.ts';

const SOURCE = 'fuzz.jsonl:1';
const AT = '2026-12-10 12:00:00.000';
const NO_REDACT: DecodeLimits = { ...DEFAULT_LIMITS, redact: false };
const U64_MAX = 2n ** 64n - 1n;
const OUTCOME_KEYS = {
  row: ['discovery', 'kind', 'outputClass', 'row'],
  usage: ['kind', 'usage'],
  mcp: ['event', 'kind', 'registrations'],
  dead: ['dead', 'kind'],
} as const;
const TOKEN_FIELDS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'context_window_tokens'] as const;
/** The decoder's own text decoding: fatal on bad UTF-8, and (as TextDecoder does) a BOM dropped. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Equality of two parsed JSON values that does not recurse (inputs may be nested very deep). */
const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type Reading =
  | { readonly stage: 'oversized' | 'invalid_utf8' }
  | { readonly stage: 'not_json'; readonly text: string }
  | { readonly stage: 'json'; readonly text: string; readonly parsed: unknown; readonly depth: number };

/** What the line is, read independently of the decoder. */
function read(trimmed: Uint8Array, limits: DecodeLimits): Reading {
  if (trimmed.byteLength > limits.maxEventBytes) return { stage: 'oversized' };
  if (!isUtf8(trimmed)) return { stage: 'invalid_utf8' };
  const text = utf8.decode(trimmed);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { stage: 'not_json', text };
  }
  return { stage: 'json', text, parsed, depth: depthOfText(text) };
}

/**
 * A given event id is kept as given, unless it holds a secret (issue 30: a token used as an id is
 * redacted): then it differs only where a redaction marker stands.
 */
function sameIdOrRedacted(got: string, want: unknown, what: string): void {
  if (got === want || typeof want !== 'string' || !got.includes('[REDACTED:')) {
    same(got, want, what);
    return;
  }
  const [head = '', ...rest] = got.split(/\[REDACTED:[a-z0-9_]+:[0-9a-f]{4}\]/);
  ok(want.startsWith(head) && want.endsWith(rest.at(-1) ?? '') && want !== got, () => `${what}: ${show(got)} is ${show(want)} with a secret redacted`);
}

/** A failed property, with what was expected (vitest's matchers are too slow for 100 000 cases). */
function ok(condition: boolean, message: string | (() => string)): asserts condition {
  if (!condition) throw new Error(typeof message === 'string' ? message : message());
}

function same(got: unknown, want: unknown, what: string): void {
  // === (not Object.is): -0 sent is 0 stored.
  ok(got === want, () => `${what}: got ${show(got)}, expected ${show(want)}`);
}

const show = (v: unknown): string => {
  const t = typeof v === 'bigint' ? `${v}n` : (JSON.stringify(v) ?? String(v));
  return t.length > 200 ? `${t.slice(0, 197)}...` : t;
};

const KNOWN_REASONS: ReadonlySet<string> = new Set(DEAD_LETTER_REASONS);

/**
 * Every property of one decoded line. With redaction off, what is stored is what was received.
 * Returns the outcome for further checks.
 */
function checkOutcome(bytes: Uint8Array, o: DecodeOutcome, limits: DecodeLimits): DecodeOutcome {
  const exact = limits.redact === false;
  // Exactly one outcome, of one of the four kinds, with only that kind's parts.
  const keys = Object.keys(o).sort().join(',');
  same(keys, OUTCOME_KEYS[o.kind]?.join(','), 'the outcome\'s parts');
  const trimmed = trimLine(bytes);
  const r = read(trimmed, limits);

  if (o.kind === 'dead') {
    const d = o.dead;
    ok(KNOWN_REASONS.has(d.reason) && d.reason !== 'import_malformed', `unlisted reason ${d.reason}`);
    ok(deadLetterRowSchema.safeParse(d).success, 'the dead letter fits its record schema');
    ok(d.detail.length > 0, 'a dead letter has a detail');
    same(d.source, SOURCE, 'source');
    same(d.ingested_at, AT, 'ingested_at');
    const stored = Buffer.from(d.raw);
    same(d.raw_bytes, stored.byteLength, 'raw_bytes');
    if (exact || d.redactions === 0) {
      // The bytes received, exactly: the line less one trailing CR and one leading BOM.
      ok(stored.equals(trimmed), () => `the dead letter's bytes differ from the line's: ${stored.toString('base64')}`);
      same(d.redactions, 0, 'redactions');
    } else {
      ok(stored.toString('latin1').includes('[REDACTED:'), 'a redacted dead letter shows its marker');
    }
    // The reason agrees with what the line is.
    switch (r.stage) {
      case 'oversized':
      case 'invalid_utf8':
        same(d.reason, r.stage, 'reason');
        break;
      case 'not_json':
        // A malformed line deeper than the limit before its error may be refused as too deep first.
        ok(d.reason === 'invalid_json' || d.reason === 'too_deep', `reason ${d.reason} for a line that is no JSON`);
        break;
      case 'json':
        if (isObject(r.parsed) && r.depth > limits.maxDepth) same(d.reason, 'too_deep', 'reason');
        else ok(d.reason === 'schema' || d.reason === 'unknown_harness', `reason ${d.reason} for JSON within the depth limit: ${d.detail}`);
        if (d.reason === 'unknown_harness') ok(isObject(r.parsed) && !(HARNESSES as readonly unknown[]).includes(r.parsed['harness']), 'unknown_harness with a known harness');
        break;
    }
    return o;
  }

  // Not a dead letter: the line is JSON, an object within the limits, of the type decoded.
  if (r.stage !== 'json' || !isObject(r.parsed)) throw new Error(`a ${o.kind} outcome from a line that is ${r.stage === 'json' ? 'JSON but not an object' : r.stage}`);
  const { text, parsed } = r;
  ok(r.depth <= limits.maxDepth, `a ${o.kind} outcome nested ${r.depth} deep`);
  same(parsed['schema'], 'toolcanon.event/v1', 'schema');
  ok((HARNESSES as readonly unknown[]).includes(parsed['harness']), 'a known harness');
  const type = parsed['type'];
  same(o.kind, type === 'tool_call' ? 'row' : type === 'usage' ? 'usage' : 'mcp', `the outcome of type ${show(type)}`);

  if (o.kind === 'row') {
    const row = o.row;
    ok(toolCallRowSchema.safeParse(row).success, () => `the row fits its record schema: ${toolCallRowSchema.safeParse(row).error?.message ?? ''}`);
    ok(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/.test(row.ts), `ts ${row.ts}`);
    same(row.harness, parsed['harness'], 'harness');
    same(row.status, parsed['status'], 'status');
    same(row.source, SOURCE, 'source');
    same(row.ingested_at, AT, 'ingested_at');
    same(row.images, parsed['images'] ?? 0, 'images');
    same(row.duration_ms, parsed['duration_ms'] ?? null, 'duration_ms');
    if (parsed['event_id'] !== undefined) sameIdOrRedacted(row.event_id, parsed['event_id'], 'event_id');
    else ok(/^[0-9a-f]{32}$/.test(row.event_id), `event_id ${row.event_id}`);
    const input = parsed['input'];
    if (exact || row.redactions === 0) {
      same(row.redactions, 0, 'redactions');
      ok(!row.flags.includes('redacted'), 'not flagged redacted');
      same(row.session_id, parsed['session_id'], 'session_id');
      same(row.agent_id, parsed['agent_id'] ?? '', 'agent_id');
      same(row.turn_id, parsed['turn_id'] ?? '', 'turn_id');
      same(row.call_id, parsed['call_id'], 'call_id');
      same(row.model, parsed['model'] ?? '', 'model');
      same(row.error, parsed['error'] ?? '', 'error');
      // The raw input verbatim: the object's own text from the line, or the string's content.
      if (typeof input === 'string') same(row.raw_input, input, 'raw_input');
      else {
        ok(text.includes(row.raw_input), 'raw_input is a substring of the line');
        ok(sameJson(JSON.parse(row.raw_input), input), 'raw_input is the input the line carries');
      }
      same(row.input_bytes, Buffer.byteLength(row.raw_input, 'utf8'), 'input_bytes');
    } else {
      ok(row.flags.includes('redacted'), 'a redacted row is flagged');
      // Redacted, the input stays JSON where it was JSON.
      if (typeof input !== 'string') JSON.parse(row.raw_input);
    }
    same(row.output_bytes, typeof parsed['output'] === 'string' ? Buffer.byteLength(parsed['output'], 'utf8') : 0, 'output_bytes');
    if (row.canonical_input !== '') JSON.parse(row.canonical_input);
  } else if (o.kind === 'usage') {
    const u = o.usage;
    same(u.harness, parsed['harness'], 'harness');
    same(u.source, SOURCE, 'source');
    same(u.ingested_at, AT, 'ingested_at');
    if (exact) {
      same(u.session_id, parsed['session_id'], 'session_id');
      same(u.request_id, parsed['request_id'], 'request_id');
      same(u.model, parsed['model'] ?? '', 'model');
      same(u.turn_id, parsed['turn_id'] ?? '', 'turn_id');
      same(u.agent_id, parsed['agent_id'] ?? '', 'agent_id');
    }
    for (const field of TOKEN_FIELDS) {
      const got = u[field];
      const sent = parsed[field];
      if (sent === undefined) {
        ok(got === null || got === 0n, `${field} absent is ${show(got)}`);
        continue;
      }
      // Exact: within u64, and the same number as the text (as a double) when compared so.
      ok(got !== null && got >= 0n && got <= U64_MAX, `${field} ${show(got)} within u64`);
      same(Number(got), sent, field);
    }
  } else {
    const e = o.event;
    same(e.harness, parsed['harness'], 'harness');
    same(e.source, SOURCE, 'source');
    same(e.ingested_at, AT, 'ingested_at');
    if (exact || e.redactions === 0) same(e.raw, text, 'raw');
    else JSON.parse(e.raw);
    same(e.tool_count, Array.isArray(parsed['tools']) ? parsed['tools'].length : null, 'tool_count');
    if (parsed['event_id'] !== undefined) sameIdOrRedacted(e.event_id, parsed['event_id'], 'event_id');
  }
  return o;
}

/** The same line with a BOM before it and a CR after it: the twin must decode the same. */
function framed(bytes: Uint8Array): Uint8Array {
  return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes, Buffer.from([0x0d])]);
}

function decodeChecked(bytes: Uint8Array, limits: DecodeLimits): DecodeOutcome {
  return checkOutcome(bytes, decodeEvent(bytes, SOURCE, AT, limits), limits);
}

const startsWithBom = (b: Uint8Array): boolean => b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;

/**
 * The full check of one line: outcome properties, and the BOM/CR twin equal to it. (A line that
 * already starts with a BOM or ends with a CR is left out of the twin check: one of each is
 * dropped. The UTF-8 decoding drops a second BOM, so BOM BOM line decodes as the line too.)
 */
function checkLine(bytes: Uint8Array, twin: boolean, limits: DecodeLimits = NO_REDACT): void {
  const o = decodeChecked(bytes, limits);
  if (twin && !startsWithBom(bytes) && bytes[bytes.byteLength - 1] !== 0x0d) ok(isDeepStrictEqual(decodeEvent(framed(bytes), SOURCE, AT, limits), o), 'BOM + line + CR decodes as the line');
}

// ---------------------------------------------------------------------------------------------

const seeds = envelopeSeeds();
const allSeeds = [...seeds.valid, ...seeds.bad];
const bytesOf = (b: Uint8Array): Uint8Array => b;

describe('fuzz: the envelope of every event type', () => {
  it('has seeds of every event type', () => {
    const types = new Set(seeds.valid.map((l) => (JSON.parse(l.toString('utf8')) as { type?: string }).type ?? 'tool_call'));
    expect([...types].sort()).toEqual(['mcp_status', 'mcp_tools', 'mcp_tools_changed', 'tool_call', 'usage']);
    expect(seeds.bad.length).toBeGreaterThan(10);
  });

  it('mutated seed lines: no throw, one outcome, exact dead letters and raw inputs, BOM/CR twins equal', () => {
    const arb = fc.tuple(mutatedLine(allSeeds), fc.boolean());
    fuzz('envelope: mutated seed lines', arb, runsOf('envelope: mutated seed lines'), ([b]) => b, ([b, twin]) => checkLine(b, twin));
  });

  it('generated events of every type: valid ones are never dead letters; damaged ones are accounted', () => {
    fuzz('envelope: generated events of every type', generatedLine, runsOf('envelope: generated events of every type'), (g) => g.bytes, (g) => {
      const o = decodeChecked(g.bytes, NO_REDACT);
      if (g.valid && o.kind === 'dead') throw new Error(`a valid ${g.type} event is a dead letter: ${o.dead.reason}: ${o.dead.detail}`);

    });
  });

  it('random bytes and random JSON: no throw, one outcome, exact dead letters', () => {
    fuzz('envelope: random bytes and JSON', fc.tuple(randomLine, fc.boolean()), runsOf('envelope: random bytes and JSON'), ([b]) => b, ([b, twin]) => checkLine(b, twin));
  });

  it('redaction on (the default): the same outcome kind, reason and id as with it off; redacted texts stay JSON', () => {
    const arb = fc.oneof(mutatedLine(allSeeds), generatedLine.map((g) => g.bytes));
    fuzz('envelope: redaction on', arb, runsOf('envelope: redaction on'), bytesOf, (b) => {
      const on = decodeChecked(b, DEFAULT_LIMITS);
      const off = decodeEvent(b, SOURCE, AT, NO_REDACT);
      same(on.kind, off.kind, 'the outcome with redaction on');
      if (on.kind === 'dead' && off.kind === 'dead') same(on.dead.reason, off.dead.reason, 'the reason with redaction on');
      if (on.kind === 'row' && off.kind === 'row') sameIdOrRedacted(on.row.event_id, off.row.event_id, 'the event id with redaction on');
      if (on.kind === 'mcp' && off.kind === 'mcp') sameIdOrRedacted(on.event.event_id, off.event.event_id, 'the event id with redaction on');
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Pathological inputs, fixed: each must decode (no stack overflow, no hang) in at most SLOW_FACTOR
// times what a plain event of its size takes in the same run.

const BASE = '{"schema":"toolcanon.event/v1","type":"tool_call","ts":"2026-12-02T10:00:00.123Z","harness":"claude_code","session_id":"s-1","call_id":"c-1","tool":"Read","status":"ok"';
const withInput = (input: string, extra = ''): string => `${BASE}${extra},"input":${input}}`;
const MiB = 1024 * 1024;

const PATHOLOGICAL: readonly { name: string; line: () => Uint8Array; expect: string; limits?: DecodeLimits; knownSlowWithRedaction?: string }[] = [
  { name: 'a 1 MiB string in the input', line: () => Buffer.from(withInput(`{"file_path":"${'x'.repeat(MiB)}"}`)), expect: 'row' },
  // Every `key=` a candidate assignment whose unquoted value ran to the token's end: quadratic
  // (the fuzz suite's hang of 2026-12-06: 300 KB took over 15 s); unquoted values are capped.
  { name: '300 KB of key=key=… in the input', line: () => Buffer.from(withInput(`{"command":"${'key='.repeat(75_000)}"}`)), expect: 'row' },
  { name: 'a 1 MiB output of escapes', line: () => Buffer.from(withInput('{}', `,"output":"${'\\n\\u0000'.repeat(MiB / 8)}"`)), expect: 'row' },
  { name: 'a 1 MiB session_id', line: () => Buffer.from(BASE.replace('"s-1"', `"${'s'.repeat(MiB)}"`) + ',"input":{}}'), expect: 'dead:schema' },
  { name: 'a 1 MiB number as duration_ms', line: () => Buffer.from(withInput('{}', `,"duration_ms":${'9'.repeat(MiB)}`)), expect: 'dead:schema' },
  { name: 'a 1 MiB number as input_tokens', line: () => Buffer.from(`{"schema":"toolcanon.event/v1","type":"usage","ts":"2026-12-02T10:00:00Z","harness":"codex","session_id":"s","request_id":"r","output_tokens":1,"input_tokens":${'9'.repeat(MiB)}}`), expect: 'dead:schema' },
  { name: '2^64 as input_tokens', line: () => Buffer.from('{"schema":"toolcanon.event/v1","type":"usage","ts":"2026-12-02T10:00:00Z","harness":"codex","session_id":"s","request_id":"r","output_tokens":1,"input_tokens":18446744073709551616}'), expect: 'dead:schema' },
  { name: '2^64 - 1 as input_tokens', line: () => Buffer.from('{"schema":"toolcanon.event/v1","type":"usage","ts":"2026-12-02T10:00:00Z","harness":"codex","session_id":"s","request_id":"r","output_tokens":1,"input_tokens":18446744073709551615}'), expect: 'usage' },
  { name: 'input nested 10 000 deep (arrays)', line: () => Buffer.from(withInput(`{"x":${nested(10_000, 'array')}}`)), expect: 'dead:too_deep' },
  { name: 'input nested 10 000 deep (objects)', line: () => Buffer.from(withInput(nested(10_000, 'object'))), expect: 'dead:too_deep' },
  { name: 'a top-level array 10 000 deep', line: () => Buffer.from(nested(10_000, 'array')), expect: 'dead:schema' },
  { name: '1 MiB of unclosed brackets', line: () => Buffer.from(withInput(`{"x":${'['.repeat(MiB)}`)), expect: 'dead:too_deep' },
  { name: '1 MiB of unclosed brackets, no envelope', line: () => Buffer.from('['.repeat(MiB)), expect: 'dead:invalid_json' },
  { name: '1 MiB of NUL bytes', line: () => Buffer.alloc(MiB, 0), expect: 'dead:invalid_json' },
  { name: '1 MiB of 0xFF', line: () => Buffer.alloc(MiB, 0xff), expect: 'dead:invalid_utf8' },
  { name: '1 MiB of BOMs', line: () => Buffer.concat(Array.from({ length: MiB / 3 }, () => Buffer.from([0xef, 0xbb, 0xbf]))), expect: 'dead:invalid_json' },
  // The private_key rule scans up to 16 KiB after every BEGIN line for its END: about 7 ms per
  // KiB of such text, 30 s for one 4 MiB event (src/redact/rules.ts; reported, not fixed here).
  { name: '1 MiB of -----BEGIN PRIVATE KEY----- lines', line: () => Buffer.from(withInput(JSON.stringify({ command: '-----BEGIN PRIVATE KEY-----'.repeat(MiB / 27) }))), expect: 'row' }, // was 7.7 s with redaction on (the private_key rule rescanned from every BEGIN): now linear
  { name: '100 000 duplicate keys', line: () => Buffer.from(withInput('{}', ',"tool":"Read"'.repeat(100_000))), expect: 'row' },
  { name: 'an input of 100 000 members', line: () => Buffer.from(withInput(`{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`)), expect: 'row' },
  { name: 'exactly max-event-bytes', line: () => Buffer.from(withInput(`{"file_path":"${'x'.repeat(4 * MiB - withInput('{"file_path":""}').length)}"}`)), expect: 'row' },
  { name: 'max-event-bytes + 1', line: () => Buffer.from(withInput(`{"file_path":"${'x'.repeat(4 * MiB - withInput('{"file_path":""}').length + 1)}"}`)), expect: 'dead:oversized' },
  { name: 'an 8 MiB line', line: () => Buffer.alloc(8 * MiB, 0x7b), expect: 'dead:oversized' },
  // --max-depth raised far beyond the default: nothing in the decoder may recurse on the value.
  { name: 'no call_id, input 100 000 deep, --max-depth 1 000 000 (content id)', line: () => Buffer.from(withInput(nested(100_000, 'object')).replace('"call_id":"c-1"', '"call_id":""')), expect: 'row', limits: { ...DEFAULT_LIMITS, maxDepth: 1_000_000 } },
  { name: 'an MCP snapshot with a tool 100 000 deep, --max-depth 1 000 000 (error detail)', line: () => Buffer.from(`{"schema":"toolcanon.event/v1","type":"mcp_tools","ts":"2026-12-02T10:00:00Z","harness":"mcp","session_id":"s","server":"a","client_id":"c","mcp_initialized":true,"tools":[${nested(100_000, 'array')}]}`), expect: 'dead:schema', limits: { ...DEFAULT_LIMITS, maxDepth: 1_000_000 } },
  { name: 'type 100 000 deep, --max-depth 1 000 000 (error detail)', line: () => Buffer.from(`{"schema":"toolcanon.event/v1","type":${nested(100_000, 'object')}}`), expect: 'dead:schema', limits: { ...DEFAULT_LIMITS, maxDepth: 1_000_000 } },
];

describe('fuzz: pathological inputs decode without overflowing the stack or hanging', () => {
  const cases = PATHOLOGICAL.flatMap((p) => [{ ...p, redact: false }, { ...p, redact: true }]);
  for (const p of cases.filter((c) => c.redact && c.knownSlowWithRedaction !== undefined)) {
    it.skip(`KNOWN SLOW, reported: ${p.name} (redaction on): ${p.knownSlowWithRedaction ?? ''}`, () => {});
  }
  it.each(cases.filter((c) => !(c.redact && c.knownSlowWithRedaction !== undefined)).map((p) => [`${p.name}${p.redact ? ' (redaction on)' : ''}`, p] as const))('%s', (_, p) => {
    const bytes = p.line();
    const limits: DecodeLimits = { ...(p.limits ?? DEFAULT_LIMITS), redact: p.redact };
    const { value: o, ms } = timed(`pathological: ${p.name}`, bytes, () => decodeEvent(bytes, SOURCE, AT, limits));
    checkOutcome(bytes, o, limits);
    expect(o.kind === 'dead' ? `dead:${o.dead.reason}` : o.kind).toBe(p.expect);
    const ratio = slowness(ms, bytes.byteLength);
    log(`pathological: ${p.name}${p.redact ? ' (redaction on)' : ''}: ${ms.toFixed(1)} ms, ${ratio.toFixed(1)}x a plain event of its size`);
    expect(ratio, `${p.name} took ${ms.toFixed(0)} ms, ${ratio.toFixed(0)}x a plain event of its size`).toBeLessThan(SLOW_FACTOR);
  });
});
