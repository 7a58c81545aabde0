// Generated envelope events of every type (tool_call, usage, mcp_status, mcp_tools,
// mcp_tools_changed): valid by construction, or with one member replaced, removed, added or
// given twice. Values are spliced in as text, so numbers beyond 2^53 and escapes stay as written.
import fc from 'fast-check';
import { CATALOGUE_ROWS } from '../../src/catalogue/index.ts';
import { HARNESSES } from '../../src/canonical/meta.ts';
import { DEFAULT_LIMITS } from '../../src/decode/event.ts';
import { depthOfText, valueText } from './lines.ts';

const U64_MAX = 2n ** 64n - 1n;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// Generated events of every type: valid by construction (then they must not be dead letters),
// or with one member replaced.

/** A member as key and value text; the event is their join, so values may be raw numbers. */
type Member = readonly [string, string];

const text = (min: number, max: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: 'binary', minLength: min, maxLength: max }),
    fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: max }),
    fc.constantFrom(...(min === 0 ? [''] : []), 'x', "'); DROP TABLE tool_calls; --", '-- {serverError:1}', '#! { echo }', 'a\\b', 'tab\there', 'line\nbreak', '\u0000', 'ünï©ødé', '😀'.repeat(Math.max(min, 1))),
  ).filter((s) => [...s].length >= min && [...s].length <= max);

const tsArb: fc.Arbitrary<string> = fc
  .tuple(
    fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2299-12-31T23:59:59Z'), noInvalidDate: true }),
    fc.constantFrom('Z', 'z', '+00:00', '+05:30', '-08:00', '+14:00'),
    fc.constantFrom('', '.1', '.123', '.123456', '.123456789'),
    fc.constantFrom('T', 't', ' '),
  )
  .map(([d, offset, frac, sep]) => {
    const iso = d.toISOString(); // UTC
    const shiftMin = offset === 'Z' || offset === 'z' ? 0 : (offset.startsWith('-') ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
    const local = new Date(d.getTime() + shiftMin * 60_000).toISOString();
    void iso;
    return `${local.slice(0, 10)}${sep}${local.slice(11, 19)}${frac}${offset}`;
  });

const str = (s: string): string => JSON.stringify(s);
const opt = (key: string, value: fc.Arbitrary<string>): fc.Arbitrary<Member | null> => fc.option(value.map((v): Member => [key, v]), { nil: null });

function common(type: string): fc.Arbitrary<(Member | null)[]> {
  return fc.tuple(
    fc.constant<Member>(['schema', str('toolcanon.event/v1')]),
    fc.constant<Member>(['type', str(type)]),
    tsArb.map((t): Member => ['ts', str(t)]),
    fc.constantFrom(...HARNESSES).map((h): Member => ['harness', str(h)]),
    text(1, 64).map((s): Member => ['session_id', str(s)]),
    opt('agent_id', text(0, 64).map(str)),
    opt('event_id', text(1, 128).map(str)),
  );
}

const counts = (min: bigint): fc.Arbitrary<string> =>
  fc.oneof(
    fc.bigInt({ min, max: U64_MAX }).map(String),
    fc.constantFrom(String(min), '9007199254740993', String(U64_MAX), '1.0', '1e3', '0'),
  ).filter((t) => BigInt(Math.round(Number(t))) >= min || /^[0-9]+$/.test(t));

const inputArb: fc.Arbitrary<string> = fc.oneof(
  // The catalogue's own parameter names, with plausible or odd values.
  fc
    .tuple(fc.constantFrom(...CATALOGUE_ROWS), fc.array(fc.tuple(fc.nat(), fc.oneof({ arbitrary: fc.oneof(text(0, 40).map(str), fc.integer().map(String)), weight: 3 }, { arbitrary: valueText.filter((v) => isJsonWithin(v, DEFAULT_LIMITS.maxDepth - 2)), weight: 1 })), { maxLength: 6 }))
    .map(([row, picks]) => {
      const names = [...Object.values(row.input ?? {}).flat(), ...row.large, ...row.specific, 'tool_name', 'tool_input', 'query', 'command'];
      return `{${picks.map(([i, v]) => `${str(names[i % names.length] as string)}:${v}`).join(',')}}`;
    }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(isObject(v) ? v : { v })),
  // A string holding JSON, or plain text (freeform tools).
  fc.jsonValue({ maxDepth: 3 }).map((v) => str(JSON.stringify(v) ?? 'null')),
  text(0, 80).map(str),
);

const toolArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...CATALOGUE_ROWS.map((r) => r.name)),
  fc.constantFrom('mcp__github__create_issue', 'github__search', 'a__b__c', 'mcp__x', 'use_tool', 'search_tool', 'ToolSearch'),
  text(1, 40),
);

const toolCallMembers = fc
  .tuple(
    common('tool_call'),
    fc.tuple(
      opt('turn_id', text(0, 64).map(str)),
      text(0, 64).map((s): Member => ['call_id', str(s)]),
      opt('model', text(0, 64).map(str)),
      toolArb.map((t): Member => ['tool', str(t)]),
      inputArb.map((i): Member => ['input', i]),
      fc.constantFrom('ok', 'error', 'pending').map((s): Member => ['status', str(s)]),
      opt('output', text(0, 200).map(str)),
      opt('error', text(0, 80).map(str)),
      opt('duration_ms', counts(0n).filter((t) => Number(t) <= Number.MAX_SAFE_INTEGER)),
      opt('images', fc.integer({ min: 0, max: 10_000 }).map(String)),
    ),
  )
  .map(([a, b]) => [...a, ...b]);

const usageMembers = fc
  .tuple(
    common('usage'),
    fc.tuple(
      opt('turn_id', text(0, 64).map(str)),
      opt('model', text(0, 64).map(str)),
      text(1, 64).map((s): Member => ['request_id', str(s)]),
      counts(0n).map((c): Member => ['input_tokens', c]),
      counts(0n).map((c): Member => ['output_tokens', c]),
      opt('cache_read_tokens', counts(0n)),
      opt('cache_write_tokens', counts(0n)),
      opt('reasoning_tokens', counts(0n)),
      opt('context_window_tokens', counts(0n)),
    ),
  )
  .map(([a, b]) => [...a, ...b]);

const mcpBase = (type: string) =>
  fc.tuple(common(type), text(1, 40).map((s): Member => ['server', str(s)]), text(1, 40).map((s): Member => ['client_id', str(s)])).map(([a, s, c]) => [...a, s, c]);

const mcpStatusMembers = fc
  .tuple(
    mcpBase('mcp_status'),
    fc.constantFrom('stdio', 'http').map((t): Member => ['transport', str(t)]),
    fc.constantFrom('connecting', 'connected', 'disconnected', 'restarting', 'failed', 'disabled', 'removed').map((t): Member => ['state', str(t)]),
    opt('attempt', fc.integer({ min: 1, max: 1000 }).map(String)),
    opt('backoff_ms', fc.integer({ min: 0, max: 2 ** 31 }).map(String)),
    opt('error', text(0, 80).map(str)),
  )
  .map(([base, ...rest]) => [...base, ...rest]);

const toolItem = fc
  .tuple(text(1, 60), fc.boolean(), fc.boolean(), fc.option(text(1, 60), { nil: undefined }))
  .map(([name, visible, disabled, ui]) => JSON.stringify({ name, model_visible: visible, disabled, ...(ui === undefined ? {} : { ui_resource_uri: ui }) }));

const mcpToolsMembers = fc
  .tuple(mcpBase('mcp_tools'), fc.boolean().map((b): Member => ['mcp_initialized', String(b)]), fc.array(toolItem, { maxLength: 8 }).map((items): Member => ['tools', `[${items.join(',')}]`]))
  .map(([base, ...rest]) => [...base, ...rest]);

const mcpChangedMembers = mcpBase('mcp_tools_changed');

const validEvent: fc.Arbitrary<{ type: string; members: Member[] }> = fc
  .oneof(
    toolCallMembers.map((m) => ({ type: 'tool_call', m })),
    usageMembers.map((m) => ({ type: 'usage', m })),
    mcpStatusMembers.map((m) => ({ type: 'mcp_status', m })),
    mcpToolsMembers.map((m) => ({ type: 'mcp_tools', m })),
    mcpChangedMembers.map((m) => ({ type: 'mcp_tools_changed', m })),
  )
  .chain(({ type, m }) => fc.shuffledSubarray(m.filter((x): x is Member => x !== null), { minLength: m.filter((x) => x !== null).length }).map((members) => ({ type, members })));

export function isJsonWithin(text: string, depth: number): boolean {
  try {
    JSON.parse(text);
  } catch {
    return false;
  }
  return depthOfText(text) <= depth;
}

const join = (members: readonly Member[], ws = ''): string => `{${members.map(([k, v]) => `${str(k)}:${ws}${v}`).join(`,${ws}`)}}`;

/** A generated event: valid, or with one member replaced, removed or added (maybe a duplicate key). */
export const generatedLine: fc.Arbitrary<{ bytes: Uint8Array; valid: boolean; type: string }> = fc
  .tuple(validEvent, fc.nat(), fc.constantFrom('valid', 'valid', 'replace', 'remove', 'add', 'duplicate'), valueText, fc.constantFrom('', ' ', '\t'))
  .map(([{ type, members }, pick, how, value, ws]) => {
    const i = pick % members.length;
    const key = members[i]?.[0] ?? 'x';
    let out = members;
    if (how === 'replace') out = members.map((m, j): Member => (j === i ? [m[0], value] : m));
    else if (how === 'remove') out = members.filter((_, j) => j !== i);
    else if (how === 'add') out = [...members, [`extra_${pick % 3}`, value]];
    else if (how === 'duplicate') out = [[key, value], ...members]; // the first of two: JSON.parse keeps the last
    // A duplicate key is still valid when its first (discarded) value is JSON within the depth limit.
    const duplicateValid = how === 'duplicate' && isJsonWithin(value, DEFAULT_LIMITS.maxDepth - 1);
    return { bytes: Buffer.from(join(out, ws), 'utf8'), valid: how === 'valid' || duplicateValid, type };
  });

