// Decodes one input line (the bytes of a JSONL line or a Kafka message value) into a tool_call
// row, a usage record or a dead letter. Never throws on bad input: every event ends in exactly
// one of them.
import { sha256Hex } from '../util/hash.ts';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import * as compiled from './validators.generated.ts';
import type { McpStatusEvent, McpToolsChangedEvent, McpToolsEvent, ToolCallEvent, UsageEvent } from './envelope-types.ts';
import { TOOL_META_VERSION } from '../canonical/meta.ts';
import type { UsageRecord } from '../model/records.ts';
import { msToClickHouseTime, toClickHouseTime } from '../util/time.ts';
import { DEFAULT_LIMITS } from './limits.ts';
import { U64_MAX } from '../accounting/arithmetic.ts';
import { classifyContent, type ContentClass } from '../accounting/content-class.ts';
import type { DeadLetterReason, DeadLetterRow, ToolCallRow } from '../model/records.ts';
import type { DiscoveryObservation, McpEventRow, McpToolRegistrationRow } from '../model/mcp.ts';
import { observeDiscovery } from '../discovery/discovery.ts';
import { deriveRegistrations, type SnapshotTool } from '../mcp/registrations.ts';
import { projectToolCall } from '../transform/project.ts';
import { indexArray, indexObject, skipValue } from '../util/json-spans.ts';
import type { TypedEvent } from './typed.ts';
import { redactBytes, redactCounted, redactInputCounted, redactJsonCounted, redactJsonPartCounted, redactJsonText, redactShortCounted, redactText } from '../redact/redact.ts';

// Kept where they were first exported from: callers of the decoder import them here.
export { DEFAULT_LIMITS, toClickHouseTime };

export interface DecodeLimits {
  /** Largest accepted event, in bytes of the encoded line. */
  readonly maxEventBytes: number;
  /** Deepest accepted JSON nesting, the envelope object being depth 1. */
  readonly maxDepth: number;
  /**
   * Replace secrets (src/redact/rules.ts) in everything stored: on unless false (--no-redact,
   * TOOLCANON_REDACT=0). Sizes and estimates are of the event as received.
   */
  readonly redact?: boolean;
  /**
   * The machine to record for events that carry neither `host` nor `device_id` (and for dead
   * letters whose event cannot be read): `toolcanon import` gives the importing machine; replay
   * and consume give none, so such rows say '' (unknown) rather than the reader's machine.
   */
  readonly machine?: Machine;
}

/** Where an event was recorded: a host name and a stable id of the machine ('' when unknown). */
export interface Machine {
  readonly host: string;
  readonly device_id: string;
}

export const UNKNOWN_MACHINE: Machine = { host: '', device_id: '' };

/**
 * The machine an envelope names: both fields from the event when it carries either (a missing
 * one is ''), so the fields of two machines are never mixed; undefined when it carries neither.
 */
export function machineOfEvent(event: unknown): Machine | undefined {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return undefined;
  const { host, device_id: deviceId } = event as { host?: unknown; device_id?: unknown };
  if (host === undefined && deviceId === undefined) return undefined;
  return { host: typeof host === 'string' ? host : '', device_id: typeof deviceId === 'string' ? deviceId : '' };
}

/**
 * The event without the machine fields, for a content id: the same event reported by two
 * machines (or with and without them) is one event, deduplicated as one.
 */
function withoutMachine<T extends object>(event: T): T {
  if (!('host' in event) && !('device_id' in event)) return event;
  const { host: _host, device_id: _device, ...rest } = event as T & { host?: unknown; device_id?: unknown };
  return rest as T;
}

/** Observed usage of one finished request, figures exact (u64 as bigint). */
export type DecodeOutcome =
  | { readonly kind: 'row'; readonly row: ToolCallRow; readonly outputClass: ContentClass; readonly discovery: DiscoveryObservation | undefined }
  | { readonly kind: 'usage'; readonly usage: UsageRecord }
  | { readonly kind: 'mcp'; readonly event: McpEventRow; readonly registrations: readonly McpToolRegistrationRow[] }
  | { readonly kind: 'dead'; readonly dead: DeadLetterRow };

export const EVENT_TYPES = ['tool_call', 'usage', 'mcp_status', 'mcp_tools', 'mcp_tools_changed'] as const;

type McpEvent = McpStatusEvent | McpToolsEvent | McpToolsChangedEvent;

/** Compiled from the schemas by scripts/sync-schemas.ts (src/decode/validator-code.ts), loaded as code. */
const validateToolCall = compiled.tool_call as unknown as ValidateFunction<ToolCallEvent>;
const validateUsage = compiled.usage as unknown as ValidateFunction<UsageEvent>;
const validateMcp = {
  mcp_status: compiled.mcp_status as unknown as ValidateFunction<McpStatusEvent>,
  mcp_tools: compiled.mcp_tools as unknown as ValidateFunction<McpToolsEvent>,
  mcp_tools_changed: compiled.mcp_tools_changed as unknown as ValidateFunction<McpToolsChangedEvent>,
} as const;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The default event id (when the event carries none): stable under re-serialisation. From the
 * identity fields where the event has them (type, harness, session, agent and the call id of a
 * tool call or the request id of a usage record), otherwise from the event's canonical JSON
 * (keys sorted, no whitespace), so another key order or spacing of the same event is the same id.
 */
export function identityEventId(type: string, harness: string, sessionId: string, agentId: string, id: string): string {
  return sha256Hex(`${type}\u0000${harness}\u0000${sessionId}\u0000${agentId}\u0000${id}`, 32);
}

/** Text canonicalJson emits as it is, between the values it still has to render. */
class Emit {
  constructor(readonly text: string) {}
}
const CLOSE_ARRAY = new Emit(']');
const CLOSE_OBJECT = new Emit('}');
const COMMA = new Emit(',');

/**
 * JSON text with object keys sorted at every level (the value as JSON.parse gave it). Iterative,
 * with a stack of its own: a value nested deeper than the call stack allows (--max-depth raised
 * to thousands) is rendered instead of throwing RangeError out of the decoder.
 */
export function canonicalJson(value: unknown): string {
  let out = '';
  const todo: unknown[] = [value];
  while (todo.length > 0) {
    const v = todo.pop();
    if (v instanceof Emit) {
      out += v.text;
    } else if (Array.isArray(v)) {
      out += '[';
      todo.push(CLOSE_ARRAY);
      for (let i = v.length - 1; i >= 0; i--) {
        todo.push(v[i]);
        if (i > 0) todo.push(COMMA);
      }
    } else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o).sort();
      out += '{';
      todo.push(CLOSE_OBJECT);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i] as string;
        todo.push(o[k]);
        todo.push(new Emit(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`));
      }
    } else {
      out += JSON.stringify(v) ?? 'null';
    }
  }
  return out;
}

export function contentEventId(parsed: unknown): string {
  return sha256Hex(`content\u0000${canonicalJson(parsed)}`, 32);
}

export function nowClickHouseTime(): string {
  return msToClickHouseTime(Date.now());
}

/**
 * A dead letter of the bytes received (secrets redacted unless redact is false, in the bytes
 * and in the detail, which may quote a value).
 */
export function deadLetter(raw: Uint8Array, reason: DeadLetterReason, detail: string, source: string, ingestedAt: string, redact = true, machine: Machine = UNKNOWN_MACHINE): DeadLetterRow {
  let bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  let redactions = 0;
  if (redact) {
    const r = redactBytes(bytes);
    const d = redactText(detail);
    bytes = r.bytes;
    detail = d.text;
    redactions = r.count + d.count;
  }
  return {
    // The same bytes from the same place are the same dead letter (a replay does not double it).
    // The place includes the machine when it is known: two machines' files of the same path are
    // two inputs (ids of dead letters without a machine are unchanged).
    dead_letter_id: sha256Hex(
      machine.host === '' && machine.device_id === '' ? `${source}\u0000${sha256Hex(bytes, 64)}` : `${source}\u0000${sha256Hex(bytes, 64)}\u0000${machine.host}\u0000${machine.device_id}`,
      32,
    ),
    // The bytes themselves, not a copy, unless they are a small part of a larger buffer (a read
    // chunk) that the row would keep alive until its batch is written.
    raw: bytes.byteLength * 2 < bytes.buffer.byteLength ? Buffer.from(bytes) : bytes,
    raw_bytes: bytes.byteLength,
    reason,
    detail,
    source,
    ingested_at: ingestedAt,
    redactions,
    host: machine.host,
    device_id: machine.device_id,
  };
}

/** A short rendering of an offending value for a dead letter's detail. */
function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // JSON.stringify recurses: a value nested deeper than the stack (a raised --max-depth).
    text = Array.isArray(value) ? '[...]' : '{...}';
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Ajv's first error as a reason and a detail naming the field, the rule and the value. */
function describeSchemaError(e: ErrorObject, event: unknown): { reason: DeadLetterReason; detail: string } {
  const where = e.instancePath === '' ? '(event)' : e.instancePath;
  const value = e.instancePath === '' ? undefined : e.instancePath.split('/').slice(1).reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], event);
  const got = value === undefined ? '' : ` (got ${preview(value)})`;
  const params = e.params as { allowedValues?: unknown[]; allowedValue?: unknown; additionalProperty?: string };
  if (e.instancePath === '/harness' && e.keyword === 'enum') {
    return { reason: 'unknown_harness', detail: `${where}: unknown harness${got}; expected one of ${(params.allowedValues ?? []).join(', ')}` };
  }
  let message = e.message ?? e.keyword;
  if (e.keyword === 'additionalProperties') message = `unknown field ${JSON.stringify(params.additionalProperty)}`;
  if (e.keyword === 'enum') message = `must be one of ${(params.allowedValues ?? []).join(', ')}`;
  if (e.keyword === 'const') message = `must be ${JSON.stringify(params.allowedValue)}`;
  if (e.keyword === 'pattern' && where === '/ts') message = 'must be an RFC 3339 timestamp with an offset, such as 2026-12-02T10:00:00.123Z';
  return { reason: 'schema', detail: `${where}: ${message}${got}` };
}

/** Removes a trailing CR (CRLF files) and a UTF-8 byte order mark. */
export function trimLine(line: Uint8Array): Uint8Array {
  let start = 0;
  let end = line.byteLength;
  if (end > 0 && line[end - 1] === 0x0d) end--;
  if (end >= 3 && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf) start = 3;
  return start === 0 && end === line.byteLength ? line : line.subarray(start, end);
}

/**
 * The machine `import --to-kafka` puts in front of an event it publishes (`{"host":"…",
 * "device_id":"…",`: importers/machine.ts withMachine), read from the first bytes of a line whose
 * JSON cannot be read as a whole (too large, too deep, not JSON): its dead letter keeps the
 * machine that published it, as the importing machine's own import would record it.
 */
const SPLICED_MACHINE = /^\{"host":("(?:[^"\\]|\\.)*"),"device_id":("(?:[^"\\]|\\.)*")[,}]/;
export function splicedMachine(line: Uint8Array): Machine | undefined {
  if (line[0] !== 0x7b) return undefined;
  // Longest host and device id (256 and 128 characters), each character escaped at most 6 bytes wide.
  const head = Buffer.from(line.buffer, line.byteOffset, Math.min(line.byteLength, 2_400)).toString('utf8');
  const m = SPLICED_MACHINE.exec(head);
  if (!m) return undefined;
  try {
    return { host: JSON.parse(m[1] as string) as string, device_id: JSON.parse(m[2] as string) as string };
  } catch {
    return undefined;
  }
}

export function decodeEvent(received: Uint8Array, source: string, ingestedAt: string, limits: DecodeLimits = DEFAULT_LIMITS): DecodeOutcome {
  // CRLF files and a leading BOM decode (and hash) the same as their plain LF twins.
  const line = trimLine(received);
  // The machine of a dead letter: the event's, once it is read; before that the one spliced in
  // front of it by import --to-kafka, else the caller's.
  let machine = limits.machine ?? UNKNOWN_MACHINE;
  let read = false;
  const dead = (reason: DeadLetterReason, detail: string): DecodeOutcome => ({
    kind: 'dead',
    dead: deadLetter(line, reason, detail, source, ingestedAt, limits.redact !== false, read ? machine : (splicedMachine(line) ?? machine)),
  });
  if (line.byteLength > limits.maxEventBytes) {
    return dead('oversized', `event is ${line.byteLength} bytes, limit is ${limits.maxEventBytes} (--max-event-bytes)`);
  }
  let text: string;
  try {
    text = utf8.decode(line);
  } catch {
    const at = firstInvalidUtf8(line);
    return dead('invalid_utf8', `invalid UTF-8 at byte ${at}`);
  }
  const index = indexObject(text);
  if (index && index.maxDepth > limits.maxDepth) {
    return dead('too_deep', `JSON nesting depth ${index.maxDepth} exceeds ${limits.maxDepth} (--max-depth)`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return dead('invalid_json', (error as Error).message);
  }
  read = true;
  const named = machineOfEvent(parsed);
  if (named !== undefined) machine = named;
  const type = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as { type?: unknown }).type : undefined;
  if (type === 'usage') {
    if (!validateUsage(parsed)) return schemaDeadLetter(validateUsage.errors, parsed, dead);
    const members = index?.members;
    const figureText = (field: TokenField): string | undefined => {
      const span = members?.get(field);
      return span === undefined ? undefined : text.slice(span.start, span.end);
    };
    return decodeUsage(parsed, figureText, source, ingestedAt, dead, limits.redact === false ? KEEP : new Redaction(), machine);
  }
  if (type === 'mcp_status' || type === 'mcp_tools' || type === 'mcp_tools_changed') {
    const validate = validateMcp[type];
    if (!validate(parsed)) return schemaDeadLetter(validate.errors, parsed, dead);
    return decodeMcp(parsed as McpEvent, text, source, ingestedAt, dead, limits.redact !== false, machine);
  }
  if (type !== undefined && type !== 'tool_call') {
    return dead('schema', `/type: must be one of ${EVENT_TYPES.map((t) => JSON.stringify(t)).join(', ')} (got ${preview(type)})`);
  }
  if (!validateToolCall(parsed)) return schemaDeadLetter(validateToolCall.errors, parsed, dead);
  // An object input is its own text in the line.
  const inputSpan = index?.members.get('input');
  return decodeToolCall(parsed, text, inputSpan?.start ?? 0, inputSpan?.end ?? 0, source, ingestedAt, limits, machine, dead);
}

/**
 * Decodes an importer's typed event (src/decode/typed.ts): exactly the outcome decodeEvent gives
 * its line, without making the line, reading it back and parsing it again. What only the line
 * can tell is decoded from the line: a size that may pass the limit, an input whose JSON text
 * is not one plain object (or is not well-formed UTF-16, which the line's UTF-8 would change), a
 * number JSON would not write as itself, a figure beyond 2^53, and every dead letter (its bytes
 * are the line's).
 */
export function decodeEnvelope(typed: TypedEvent, source: string, ingestedAt: string, limits: DecodeLimits = DEFAULT_LIMITS): DecodeOutcome {
  const viaLine = (): DecodeOutcome => decodeEvent(Buffer.from(typed.text, 'utf8'), source, ingestedAt, limits);
  const e = typed.event;
  if (e.type === 'line' || typed.mostBytes > limits.maxEventBytes) return viaLine();
  const parsed = plainEvent(e.type, e.fields);
  if (parsed === undefined) return viaLine();
  const machine = machineOfEvent(parsed) ?? limits.machine ?? UNKNOWN_MACHINE;
  if (e.type === 'usage') {
    const fields = e.fields;
    // A figure's text is its digits only while the number is exact.
    for (const field of TOKEN_FIELDS) if (fields[field] !== undefined && !Number.isSafeInteger(fields[field])) return viaLine();
    if (!validateUsage(parsed)) return viaLine();
    const figureText = (field: TokenField): string | undefined => (fields[field] === undefined ? undefined : String(fields[field]));
    return decodeUsage(parsed, figureText, source, ingestedAt, viaLine, limits.redact === false ? KEEP : new Redaction(), machine);
  }
  const input = e.input;
  if ('string' in input) {
    parsed['input'] = input.string;
    return validateToolCall(parsed) ? decodeToolCall(parsed, '', 0, 0, source, ingestedAt, limits, machine, viaLine) : viaLine();
  }
  const json = input.json;
  // The line's depth is its input's plus one (its other members are scalars).
  if (json.charCodeAt(0) !== 0x7b || json.charCodeAt(json.length - 1) !== 0x7d || !isWellFormed(json)) return viaLine();
  const { end, depth } = skipValue(json, 0);
  if (end !== json.length || depth + 1 > limits.maxDepth) return viaLine();
  try {
    parsed['input'] = JSON.parse(json) as unknown;
  } catch {
    return viaLine();
  }
  return validateToolCall(parsed) ? decodeToolCall(parsed, json, 0, json.length, source, ingestedAt, limits, machine, viaLine) : viaLine();
}

/** String.prototype.isWellFormed (ES2024; Node 20 has it): no lone surrogate. */
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * The event JSON.parse would give its line, without its input: the fields JSON writes (an
 * undefined one is left out), scalars only; undefined when a value is not one JSON writes as
 * itself (a number that is not finite, an object).
 */
function plainEvent(type: 'tool_call' | 'usage', fields: object): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = { schema: 'toolcanon.event/v1', type };
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue;
    const v = (fields as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return undefined;
    } else if (typeof v !== 'string' && typeof v !== 'boolean' && v !== null) return undefined;
    out[key] = v;
  }
  return out;
}

/**
 * A valid tool_call event as a row. The raw input verbatim: a string input's content, or an
 * object input's own JSON text, `text[from, to)`.
 */
function decodeToolCall(
  event: ToolCallEvent,
  text: string,
  from: number,
  to: number,
  source: string,
  ingestedAt: string,
  limits: DecodeLimits,
  machine: Machine,
  dead: (reason: DeadLetterReason, detail: string) => DecodeOutcome,
): DecodeOutcome {
  const ts = toClickHouseTime(event.ts);
  if (ts === undefined) return dead('schema', `/ts: not a valid date: ${event.ts}`);
  // Ids are derived from the event as received (hashes: no secret shows through them); what is
  // stored is redacted, the projection included (it reads the redacted input).
  const agentId = event.agent_id ?? '';
  const eventId = event.event_id ?? (event.call_id === '' ? contentEventId(withoutMachine(event)) : identityEventId('tool_call', event.harness, event.session_id, agentId, event.call_id));
  const wasString = typeof event.input === 'string';
  const receivedInput = wasString ? (event.input as string) : text.slice(from, to);
  const r = limits.redact === false ? KEEP : new Redaction();
  // An object's JSON text is redacted in its decoded strings (escapes read), a string as text.
  const rawInput = wasString ? r.input(receivedInput) : r.jsonPart(text, from, to);
  // The string input returned as it came and parsed as JSON text by redaction: not parsed again.
  const knownJson = wasString && r.inputJson;
  const error = r.text(event.error ?? '');
  const sessionId = r.short(event.session_id);
  const storedAgentId = r.short(agentId);
  const host = r.short(machine.host);
  const deviceId = r.short(machine.device_id);
  const turnId = r.short(event.turn_id ?? '');
  const callId = r.text(event.call_id);
  const model = r.short(event.model ?? '');
  const tool = r.short(event.tool);
  const p = projectToolCall(event.harness, tool, { text: rawInput, wasString, knownJson });
  // A user's own event id is stored redacted (a derived one is a hash); counted before the flags.
  const storedEventId = event.event_id === undefined ? eventId : r.short(eventId);
  // No model named: stored as '' and flagged, so a row of an unknown model is found as such.
  let flags = r.count === 0 ? p.flags : [...p.flags, 'redacted' as const];
  if (model === '') flags = [...flags, 'model_unknown' as const];
  const row: ToolCallRow = {
    event_id: storedEventId,
    ts,
    harness: event.harness,
    namespace: p.namespace,
    session_id: sessionId,
    agent_id: storedAgentId,
    host,
    device_id: deviceId,
    turn_id: turnId,
    call_id: callId,
    model,
    tool_name: p.toolName,
    kind: p.kind,
    label: p.label,
    read_only: p.readOnly,
    meta_version: TOOL_META_VERSION,
    canonical_input: p.canonicalInput,
    // Listed one by one: spreading into a literal this large is slow in V8.
    path: p.columns.path,
    offset: p.columns.offset,
    limit: p.columns.limit,
    command: p.columns.command,
    description: p.columns.description,
    cwd: p.columns.cwd,
    directory: p.columns.directory,
    pattern: p.columns.pattern,
    raw_input: rawInput,
    status: event.status,
    error,
    duration_ms: event.duration_ms ?? null,
    images: event.images ?? 0,
    via: p.via,
    mcp_server: p.mcpServer,
    mcp_tool: p.mcpTool,
    flags,
    redactions: r.count,
    // Sizes are of the call as received: estimates do not change with redaction.
    input_bytes: Buffer.byteLength(receivedInput, 'utf8'),
    output_bytes: event.output === undefined ? 0 : Buffer.byteLength(event.output, 'utf8'),
    source,
    ingested_at: ingestedAt,
  };
  return {
    kind: 'row',
    outputClass: event.output === undefined ? 'empty' : classifyContent(event.output),
    discovery: observeDiscovery(row, tool, event.output, event.error === undefined ? undefined : error),
    row,
  };
}

/** Redacts texts one by one and counts the secrets replaced. */
class Redaction {
  count = 0;
  /** Set by input(): what it returned is the input unchanged and JSON text. */
  inputJson = false;
  text(s: string): string {
    return s === '' ? s : redactCounted(s, this);
  }
  /** text() of a tool call's string input, saying in `inputJson` whether it returned JSON text unchanged. */
  input(s: string): string {
    if (s !== '') return redactInputCounted(s, this);
    this.inputJson = false;
    return s;
  }
  /** A field whose values repeat from event to event (session, model, tool, …): remembered. */
  short(s: string): string {
    return s === '' ? s : redactShortCounted(s, this);
  }
  /** JSON text: the secrets in its strings, decoded, replaced over the characters that encode them. */
  json(s: string): string {
    return s === '' ? s : redactJsonCounted(s, this);
  }
  /** json() of text[from, to), read in place (the line the input came in). */
  jsonPart(text: string, from: number, to: number): string {
    return from === to ? '' : redactJsonPartCounted(text, from, to, this);
  }
}

/** Redaction off (--no-redact): texts stay as received. */
const KEEP = { count: 0, inputJson: false, text: (s: string): string => s, input: (s: string): string => s, short: (s: string): string => s, json: (s: string): string => s, jsonPart: (t: string, from: number, to: number): string => t.slice(from, to) } as const;

function schemaDeadLetter(errors: ErrorObject[] | null | undefined, parsed: unknown, dead: (reason: DeadLetterReason, detail: string) => DecodeOutcome): DecodeOutcome {
  const first = errors?.[0];
  const { reason, detail } = first ? describeSchemaError(first, parsed) : { reason: 'schema' as const, detail: 'invalid event' };
  return dead(reason, detail);
}

/** An MCP lifecycle event: the raw event as a row, and a snapshot's registrations. */
function decodeMcp(
  received: McpEvent,
  text: string,
  source: string,
  ingestedAt: string,
  dead: (reason: DeadLetterReason, detail: string) => DecodeOutcome,
  redact: boolean,
  machine: Machine,
): DecodeOutcome {
  const ts = toClickHouseTime(received.ts);
  if (ts === undefined) return dead('schema', `/ts: not a valid date: ${received.ts}`);
  const eventId = received.event_id ?? contentEventId(withoutMachine(received));
  // The stored event is the redacted text (still the same JSON but for the secrets), read again.
  const r = redact ? redactJsonText(text) : { text, count: 0 };
  const event = r.count === 0 ? received : (JSON.parse(r.text) as McpEvent);
  const agentId = event.agent_id ?? '';
  // The event's own fields as redacted (read again from the redacted text), else the caller's.
  const m = machineOfEvent(event) ?? machine;
  const status = event.type === 'mcp_status' ? event : undefined;
  const tools = event.type === 'mcp_tools' ? event : undefined;
  const row: McpEventRow = {
    event_id: redact && received.event_id !== undefined ? redactText(eventId).text : eventId,
    ts,
    harness: event.harness,
    session_id: event.session_id,
    agent_id: agentId,
    host: m.host,
    device_id: m.device_id,
    server: event.server,
    client_id: event.client_id,
    event_kind: status ? 'status' : tools ? 'tools' : 'tools_changed',
    transport: status?.transport ?? '',
    state: status?.state ?? '',
    attempt: status?.attempt ?? null,
    backoff_ms: status?.backoff_ms ?? null,
    error: status?.error ?? '',
    mcp_initialized: tools?.mcp_initialized ?? null,
    tool_count: tools ? tools.tools.length : null,
    raw: r.text,
    redactions: r.count,
    source,
    ingested_at: ingestedAt,
  };
  const registrations = tools
    ? deriveRegistrations(eventId, { ts, harness: event.harness, session_id: event.session_id, agent_id: agentId, host: m.host, device_id: m.device_id, server: event.server, client_id: event.client_id, mcp_initialized: tools.mcp_initialized, source, ingested_at: ingestedAt }, withDefinitions(tools.tools, received as McpToolsEvent, text))
    : [];
  return { kind: 'mcp', event: row, registrations };
}

/**
 * The snapshot's tools with what their definition size is measured from, as received (sizes do
 * not change with redaction): the description, and input_schema's own JSON text from the line
 * (its key order and numbers as listed, which a parsed value would not keep).
 */
function withDefinitions(stored: McpToolsEvent['tools'], received: McpToolsEvent, text: string): McpToolsEvent['tools'] | SnapshotTool[] {
  if (!received.tools.some((t) => t.description !== undefined || t.input_schema !== undefined)) return stored;
  const toolsSpan = indexObject(text)?.members.get('tools');
  const spans = toolsSpan === undefined ? undefined : indexArray(text, toolsSpan.start);
  return stored.map((tool, i) => {
    const got = received.tools[i];
    const span = got?.input_schema === undefined ? undefined : spans?.[i];
    const schema = span === undefined ? undefined : indexObject(text, span.start)?.members.get('input_schema');
    return {
      ...tool,
      ...(got?.description === undefined ? {} : { description: got.description }),
      ...(schema === undefined ? {} : { input_schema_json: text.slice(schema.start, schema.end) }),
    };
  });
}

const TOKEN_FIELDS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'context_window_tokens'] as const;
type TokenField = (typeof TOKEN_FIELDS)[number];

/** A usage event's figures, exact: read from the line's text (figureText), so counts beyond 2^53 stay exact. */
function decodeUsage(
  event: UsageEvent,
  figureText: (field: TokenField) => string | undefined,
  source: string,
  ingestedAt: string,
  dead: (reason: DeadLetterReason, detail: string) => DecodeOutcome,
  r: Redaction | typeof KEEP,
  machine: Machine,
): DecodeOutcome {
  const ts = toClickHouseTime(event.ts);
  if (ts === undefined) return dead('schema', `/ts: not a valid date: ${event.ts}`);
  const figures: Partial<Record<(typeof TOKEN_FIELDS)[number], bigint>> = {};
  for (const field of TOKEN_FIELDS) {
    if (event[field] === undefined) continue;
    const raw = figureText(field);
    if (raw === undefined) continue;
    let value: bigint;
    if (/^[0-9]+$/.test(raw)) value = BigInt(raw);
    else if (Number.isSafeInteger(event[field])) value = BigInt(event[field] as number);
    else return dead('schema', `/${field}: must be an exact integer (got ${raw})`);
    if (value > U64_MAX) return dead('schema', `/${field}: must be at most 2^64 - 1 (got ${raw})`);
    figures[field] = value;
  }
  return {
    kind: 'usage',
    usage: {
      event_id: event.event_id !== undefined ? r.short(event.event_id) : identityEventId('usage', event.harness, event.session_id, event.agent_id ?? '', event.request_id),
      ts,
      harness: event.harness,
      session_id: r.short(event.session_id),
      agent_id: r.short(event.agent_id ?? ''),
      host: r.short(machine.host),
      device_id: r.short(machine.device_id),
      turn_id: r.short(event.turn_id ?? ''),
      model: r.short(event.model ?? ''),
      request_id: r.text(event.request_id),
      input_tokens: figures.input_tokens ?? 0n,
      output_tokens: figures.output_tokens ?? 0n,
      cache_read_tokens: figures.cache_read_tokens ?? null,
      cache_write_tokens: figures.cache_write_tokens ?? null,
      reasoning_tokens: figures.reasoning_tokens ?? null,
      context_window_tokens: figures.context_window_tokens ?? null,
      source,
      ingested_at: ingestedAt,
    },
  };
}

/** Byte offset of the first invalid UTF-8 sequence (for the dead letter's detail). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.byteLength) {
    const b = bytes[i] as number;
    let need: number;
    let min: number;
    if (b < 0x80) { i++; continue; }
    else if (b >= 0xc2 && b <= 0xdf) { need = 1; min = 0x80; }
    else if (b >= 0xe0 && b <= 0xef) { need = 2; min = 0x800; }
    else if (b >= 0xf0 && b <= 0xf4) { need = 3; min = 0x10000; }
    else return i;
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}
