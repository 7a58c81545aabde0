import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeEvent, DEFAULT_LIMITS, firstInvalidUtf8, toClickHouseTime, trimLine } from '../../src/decode/event.ts';
import { deadLetterRowSchema } from '../../src/model/record-schemas.ts';
import { bytes, eventLine } from '../helpers/events.ts';

const AT = '2026-12-02 10:00:01.000';

function reasonsOf(file: string): (string | undefined)[] {
  const data = readFileSync(new URL(`../../fixtures/bad/${file}`, import.meta.url));
  const lines: Buffer[] = [];
  let start = 0;
  for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a, start)) {
    lines.push(data.subarray(start, nl));
    start = nl + 1;
  }
  return lines.map((l, i) => {
    const o = decodeEvent(l, `${file}:${i + 1}`, AT);
    // Every dead letter conforms to the dead_letters record schema (zod).
    if (o.kind === 'dead') expect(deadLetterRowSchema.safeParse(o.dead).success).toBe(true);
    return o.kind === 'dead' ? o.dead.reason : o.kind === 'row' ? `row:${o.row.flags.join(',')}` : 'usage';
  });
}

describe('bad fixtures each end with their reason', () => {
  it.each([
    ['invalid-json.jsonl', ['invalid_json', 'invalid_json', 'invalid_json', 'invalid_json']],
    ['wrong-types.jsonl', ['schema', 'schema', 'schema', 'schema', 'schema', 'schema', 'schema', 'schema', 'schema']],
    ['missing-fields.jsonl', ['schema', 'schema', 'schema']],
    ['unknown-harness.jsonl', ['unknown_harness', 'unknown_harness']],
    ['oversized-field.jsonl', ['oversized']],
    ['deep-nesting.jsonl', ['too_deep']],
    ['invalid-utf8.jsonl', ['invalid_utf8', 'invalid_utf8']],
    ['mcp-lifecycle.jsonl', ['schema', 'schema', 'schema', 'schema', 'schema']],
    ['mcp-names.jsonl', ['row:bad_mcp_name', 'row:bad_mcp_name', 'row:bad_mcp_name', 'row:bad_mcp_name', 'row:bad_mcp_name']],
  ])('%s', (file, expected) => {
    expect(reasonsOf(file)).toEqual(expected);
  });
});

describe('dead letters', () => {
  it('carry the raw bytes exactly, the reason, a detail naming the field, and the source', () => {
    const raw = Buffer.concat([Buffer.from('{"a":"caf'), Buffer.from([0xe9, 0xff]), Buffer.from('"}')]);
    const o = decodeEvent(raw, 'in.jsonl:7', AT);
    expect(o.kind).toBe('dead');
    if (o.kind !== 'dead') return;
    expect(Buffer.from(o.dead.raw).equals(raw)).toBe(true);
    expect(o.dead).toMatchObject({ reason: 'invalid_utf8', source: 'in.jsonl:7', raw_bytes: raw.byteLength, detail: 'invalid UTF-8 at byte 9' });
  });

  it('name the field and the value that broke the schema', () => {
    const o = decodeEvent(bytes(eventLine({ duration_ms: 'soon' })), 'x:1', AT);
    expect(o.kind === 'dead' && o.dead.detail).toBe('/duration_ms: must be integer (got "soon")');
  });

  it('have the same id for the same bytes from the same place, and a different one elsewhere', () => {
    const a = decodeEvent(bytes('nope'), 'f:1', AT);
    const b = decodeEvent(bytes('nope'), 'f:1', '2027-01-01 00:00:00.000');
    const c = decodeEvent(bytes('nope'), 'f:2', AT);
    if (a.kind !== 'dead' || b.kind !== 'dead' || c.kind !== 'dead') throw new Error('expected dead letters');
    expect(a.dead.dead_letter_id).toBe(b.dead.dead_letter_id);
    expect(a.dead.dead_letter_id).not.toBe(c.dead.dead_letter_id);
  });
});

describe('limits, both sides of each edge', () => {
  it('an event of exactly max-event-bytes passes; one byte more is oversized', () => {
    const line = bytes(eventLine());
    expect(decodeEvent(line, 'x:1', AT, { ...DEFAULT_LIMITS, maxEventBytes: line.byteLength }).kind).toBe('row');
    const o = decodeEvent(line, 'x:1', AT, { ...DEFAULT_LIMITS, maxEventBytes: line.byteLength - 1 });
    expect(o.kind === 'dead' && o.dead.reason).toBe('oversized');
  });

  it('nesting of exactly max-depth passes; one level more is too deep', () => {
    // The envelope is depth 1 and input depth 2, so an input holding n arrays reaches 2 + n.
    const nested = (n: number): string => `{"file_path":"a","x":${'['.repeat(n)}${']'.repeat(n)}}`;
    const limit = DEFAULT_LIMITS.maxDepth;
    expect(decodeEvent(bytes(eventLine({}, nested(limit - 2))), 'x:1', AT).kind).toBe('row');
    const o = decodeEvent(bytes(eventLine({}, nested(limit - 1))), 'x:1', AT);
    expect(o.kind === 'dead' && o.dead.reason).toBe('too_deep');
  });
});

describe('event ids and timestamps', () => {
  it('derives the default id from the identity fields: the same call re-serialised, or with other content, is the same id', () => {
    const line = eventLine({ output: 'a' });
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(line) as Record<string, unknown>).reverse()), null, 2).replaceAll('\n', ' ');
    const id = (text: string): string => {
      const o = decodeEvent(bytes(text), 'x:1', AT);
      if (o.kind === 'dead') throw new Error(o.dead.detail);
      return o.kind === 'row' ? o.row.event_id : o.kind === 'usage' ? o.usage.event_id : o.event.event_id;
    };
    expect(id(reordered)).toBe(id(line));
    expect(id(eventLine({ output: 'a longer output', status: 'ok' }))).toBe(id(line)); // a later, more complete copy of the call
    expect(id(eventLine({ agent_id: 'sub-1' }))).not.toBe(id(line));
    expect(id(eventLine({ session_id: 's-2' }))).not.toBe(id(line));
    expect(id(eventLine({ harness: 'codex', tool: 'shell', input: { command: ['ls'] } }))).not.toBe(id(line));
    // Without a call id, the event's canonical JSON: key order and spacing do not matter, content does.
    const noCall = eventLine({ call_id: '' });
    const noCallReordered = JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(noCall) as Record<string, unknown>).reverse()), null, 1);
    expect(id(noCallReordered.replaceAll('\n', ''))).toBe(id(noCall));
    expect(id(eventLine({ call_id: '', output: 'x' }))).not.toBe(id(noCall));
    // A usage record is identified by its request id; an MCP event by its canonical JSON.
    const usage = { schema: 'toolcanon.event/v1', type: 'usage', ts: '2026-12-02T10:00:00Z', harness: 'codex', session_id: 's', model: 'm', request_id: 'r-1', input_tokens: 1, output_tokens: 2 };
    expect(id(JSON.stringify({ ...usage, output_tokens: 9 }))).toBe(id(JSON.stringify(usage)));
    expect(id(JSON.stringify({ ...usage, request_id: 'r-2' }))).not.toBe(id(JSON.stringify(usage)));
    const mcp = { schema: 'toolcanon.event/v1', type: 'mcp_tools_changed', ts: '2026-12-02T10:00:00Z', harness: 'grok_build', session_id: 's', server: 'g', client_id: 'c' };
    expect(id(JSON.stringify(Object.fromEntries(Object.entries(mcp).reverse())))).toBe(id(JSON.stringify(mcp)));
    expect(id(JSON.stringify({ ...mcp, ts: '2026-12-02T10:00:00.001Z' }))).not.toBe(id(JSON.stringify(mcp)));
  });

  it('uses the given event_id, else a deterministic id', () => {
    const given = decodeEvent(bytes(eventLine({ event_id: 'evt-42' })), 'x:1', AT);
    expect(given.kind === 'row' && given.row.event_id).toBe('evt-42');
    const a = decodeEvent(bytes(eventLine()), 'x:1', AT);
    const b = decodeEvent(bytes(eventLine()), 'y:9', '2030-01-01 00:00:00.000');
    const c = decodeEvent(bytes(eventLine({ call_id: 'other' })), 'x:1', AT);
    if (a.kind !== 'row' || b.kind !== 'row' || c.kind !== 'row') throw new Error('expected rows');
    expect(a.row.event_id).toMatch(/^[0-9a-f]{32}$/);
    expect(a.row.event_id).toBe(b.row.event_id);
    expect(a.row.event_id).not.toBe(c.row.event_id);
  });

  it('converts RFC 3339 with offsets to UTC milliseconds and rejects impossible dates', () => {
    expect(toClickHouseTime('2026-12-02T10:00:00.123456Z')).toBe('2026-12-02 10:00:00.123');
    expect(toClickHouseTime('2026-12-02T12:00:00+02:00')).toBe('2026-12-02 10:00:00.000');
    expect(toClickHouseTime('2026-02-30T10:00:00Z')).toBeUndefined();
    expect(toClickHouseTime('2028-02-29T10:00:00Z')).toBe('2028-02-29 10:00:00.000');
    expect(toClickHouseTime('2026-12-02T24:00:00Z')).toBeUndefined();
  });

  it('strips a trailing CR and a BOM before decoding', () => {
    const line = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(eventLine()), Buffer.from('\r')]);
    expect(Buffer.from(trimLine(line)).toString()).toBe(eventLine());
  });

  it('finds the first invalid UTF-8 byte (overlongs and surrogates included)', () => {
    expect(firstInvalidUtf8(Buffer.from('héllo 😀'))).toBe(-1);
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xc0, 0x80]))).toBe(1);
    expect(firstInvalidUtf8(Buffer.from([0x61, 0x62, 0xed, 0xa0, 0x80]))).toBe(2);
    expect(firstInvalidUtf8(Buffer.from([0xe2, 0x82]))).toBe(0);
  });
});

describe('line endings', () => {
  it('a CRLF line decodes to the same row and event_id as its LF twin', () => {
    const lf = decodeEvent(bytes(eventLine()), 'x:1', AT);
    const crlf = decodeEvent(bytes(`\uFEFF${eventLine()}\r`), 'x:1', AT);
    if (lf.kind !== 'row' || crlf.kind !== 'row') throw new Error('expected rows');
    expect(crlf.row).toEqual(lf.row);
  });
});

describe('turn_id and model are optional (envelope v1, default empty)', () => {
  const without = (event: Record<string, unknown>, ...keys: string[]): string => JSON.stringify(Object.fromEntries(Object.entries(event).filter(([k]) => !keys.includes(k))));

  it('a tool_call without turn_id and model is a row with both empty, the same row as one that sends them empty', () => {
    const line = without(JSON.parse(eventLine()) as Record<string, unknown>, 'turn_id', 'model');
    expect(line).not.toMatch(/turn_id|model/);
    const o = decodeEvent(bytes(line), 'x:1', AT);
    if (o.kind !== 'row') throw new Error(o.kind === 'dead' ? o.dead.detail : o.kind);
    expect(o.row).toMatchObject({ turn_id: '', model: '', tool_name: 'Read', raw_input: '{"file_path":"README.md"}' });
    const empty = decodeEvent(bytes(eventLine({ turn_id: '', model: '' })), 'x:1', AT);
    if (empty.kind !== 'row') throw new Error('expected a row');
    expect(o.row).toEqual(empty.row);
    // Each one alone, too.
    for (const key of ['turn_id', 'model']) {
      const one = decodeEvent(bytes(without(JSON.parse(eventLine()) as Record<string, unknown>, key)), 'x:1', AT);
      expect(one.kind === 'row' && one.row[key as 'turn_id' | 'model']).toBe('');
    }
  });

  it('the discovery observation of an MCP call without turn_id or model gets them empty', () => {
    const line = without(JSON.parse(eventLine({ tool: 'mcp__github__create_issue', input: { title: 'x' } })) as Record<string, unknown>, 'turn_id', 'model');
    const o = decodeEvent(bytes(line), 'x:1', AT);
    if (o.kind !== 'row') throw new Error(o.kind === 'dead' ? o.dead.detail : o.kind);
    expect(o.row).toMatchObject({ turn_id: '', model: '', mcp_server: 'github', mcp_tool: 'create_issue' });
    expect(o.discovery).toMatchObject({ discovery_kind: 'call', turn_id: '', model: '' });
  });

  it('a usage event without model (and without turn_id) is a usage record with both empty', () => {
    const usage = { schema: 'toolcanon.event/v1', type: 'usage', ts: '2026-12-02T10:00:00Z', harness: 'codex', session_id: 's', request_id: 'r-1', input_tokens: 1, output_tokens: 2 };
    const o = decodeEvent(bytes(JSON.stringify(usage)), 'x:1', AT);
    if (o.kind !== 'usage') throw new Error(o.kind === 'dead' ? o.dead.detail : o.kind);
    expect(o.usage).toMatchObject({ model: '', turn_id: '', request_id: 'r-1', input_tokens: 1n, output_tokens: 2n });
  });

  it('still refuses them of the wrong type or too long', () => {
    for (const [key, value] of [['turn_id', 7], ['model', null], ['model', 'm'.repeat(257)]] as const) {
      const o = decodeEvent(bytes(eventLine({ [key]: value })), 'x:1', AT);
      expect(o.kind === 'dead' && o.dead.reason).toBe('schema');
      expect(o.kind === 'dead' && o.dead.detail).toMatch(new RegExp(`^/${key}: `));
    }
  });
});
