// Decodes one input line (the bytes of a JSONL line or a Kafka message value) into a tool_call
// row or a dead letter. Never throws on bad input: every event ends in exactly one of the two.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { TOOL_META_VERSION, type Harness } from '../canonical/meta.ts';
import type { DeadLetterReason, DeadLetterRow, ToolCallRow } from '../model/records.ts';
import { projectToolCall } from '../transform/project.ts';
import { indexObject } from './spans.ts';

export interface DecodeLimits {
  /** Largest accepted event, in bytes of the encoded line. */
  readonly maxEventBytes: number;
  /** Deepest accepted JSON nesting, the envelope object being depth 1. */
  readonly maxDepth: number;
}

export const DEFAULT_LIMITS: DecodeLimits = { maxEventBytes: 4 * 1024 * 1024, maxDepth: 128 };

export type DecodeOutcome =
  | { readonly kind: 'row'; readonly row: ToolCallRow }
  | { readonly kind: 'dead'; readonly dead: DeadLetterRow };

interface ToolCallEvent {
  schema: 'toolcanon.event/v1';
  type: 'tool_call';
  ts: string;
  harness: Harness;
  session_id: string;
  turn_id: string;
  call_id: string;
  model: string;
  tool: string;
  input: Record<string, unknown> | string;
  status: 'ok' | 'error' | 'pending';
  output?: string;
  error?: string;
  duration_ms?: number;
  images?: number;
  event_id?: string;
}

const schemaUrl = new URL('../../schemas/tool-call-event.v1.schema.json', import.meta.url);
const ajv = new Ajv2020({ allErrors: false, strict: true, allowUnionTypes: true });
/** Compiled once per process. */
const validateToolCall = ajv.compile<ToolCallEvent>(JSON.parse(readFileSync(schemaUrl, 'utf8')) as object);
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function sha256Hex(data: Uint8Array | string, chars: number): string {
  return createHash('sha256').update(data).digest('hex').slice(0, chars);
}

/** ClickHouse DateTime64(3) text in UTC, from an RFC 3339 timestamp; undefined when invalid. */
export function toClickHouseTime(ts: string): string | undefined {
  const ms = Date.parse(ts);
  if (Number.isNaN(ms)) return undefined;
  const iso = new Date(ms).toISOString(); // 2026-12-02T10:00:00.123Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}

export function nowClickHouseTime(): string {
  return toClickHouseTime(new Date().toISOString()) as string;
}

export function deadLetter(raw: Uint8Array, reason: DeadLetterReason, detail: string, source: string, ingestedAt: string): DeadLetterRow {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  return {
    // The same bytes from the same place are the same dead letter (a replay does not double it).
    dead_letter_id: sha256Hex(`${source}\u0000${sha256Hex(bytes, 64)}`, 32),
    raw_base64: bytes.toString('base64'),
    raw_bytes: bytes.byteLength,
    reason,
    detail,
    source,
    ingested_at: ingestedAt,
  };
}

function describeSchemaError(e: ErrorObject): { reason: DeadLetterReason; detail: string } {
  const where = e.instancePath === '' ? '(event)' : e.instancePath;
  if (e.instancePath === '/harness' && e.keyword === 'enum') {
    return { reason: 'unknown_harness', detail: `${where}: harness is not one of ${(e.params as { allowedValues: string[] }).allowedValues.join(', ')}` };
  }
  let message = e.message ?? e.keyword;
  if (e.keyword === 'additionalProperties') message += `: ${(e.params as { additionalProperty: string }).additionalProperty}`;
  if (e.keyword === 'enum') message += `: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  return { reason: 'schema', detail: `${where}: ${message}` };
}

/** Removes a trailing CR (CRLF files) and a UTF-8 byte order mark. */
export function trimLine(line: Uint8Array): Uint8Array {
  let start = 0;
  let end = line.byteLength;
  if (end > 0 && line[end - 1] === 0x0d) end--;
  if (end >= 3 && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf) start = 3;
  return start === 0 && end === line.byteLength ? line : line.subarray(start, end);
}

export function decodeToolCall(line: Uint8Array, source: string, ingestedAt: string, limits: DecodeLimits = DEFAULT_LIMITS): DecodeOutcome {
  const dead = (reason: DeadLetterReason, detail: string): DecodeOutcome => ({
    kind: 'dead',
    dead: deadLetter(line, reason, detail, source, ingestedAt),
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
  if (!validateToolCall(parsed)) {
    const first = validateToolCall.errors?.[0];
    const { reason, detail } = first ? describeSchemaError(first) : { reason: 'schema' as const, detail: 'invalid event' };
    return dead(reason, detail);
  }
  const event = parsed;
  const ts = toClickHouseTime(event.ts);
  if (ts === undefined) return dead('schema', `/ts: not a valid date: ${event.ts}`);

  // The raw input verbatim: the object's own text from the line, or the string's content.
  const inputSpan = index?.members.get('input');
  const wasString = typeof event.input === 'string';
  const rawInput = wasString ? (event.input as string) : text.slice(inputSpan?.start ?? 0, inputSpan?.end ?? 0);
  const p = projectToolCall(event.harness, event.tool, { text: rawInput, wasString });
  return {
    kind: 'row',
    row: {
      event_id: event.event_id ?? sha256Hex(line, 32),
      ts,
      harness: event.harness,
      namespace: p.namespace,
      session_id: event.session_id,
      turn_id: event.turn_id,
      call_id: event.call_id,
      model: event.model,
      tool_name: p.toolName,
      kind: p.kind,
      label: p.label,
      read_only: p.readOnly,
      meta_version: TOOL_META_VERSION,
      canonical_input: p.canonicalInput,
      ...p.columns,
      raw_input: rawInput,
      status: event.status,
      error: event.error ?? '',
      duration_ms: event.duration_ms ?? null,
      images: event.images ?? 0,
      via: p.via,
      mcp_server: p.mcpServer,
      mcp_tool: p.mcpTool,
      flags: p.flags,
      input_bytes: Buffer.byteLength(rawInput, 'utf8'),
      output_bytes: event.output === undefined ? 0 : Buffer.byteLength(event.output, 'utf8'),
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
