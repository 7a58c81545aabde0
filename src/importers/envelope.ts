// Builds toolcanon.event/v1 lines for importers. The raw input is spliced in as text, so what
// the harness logged reaches raw_input byte for byte (big integers, escapes, key order).
import type { Harness } from '../canonical/meta.ts';
import { toClickHouseTime } from '../decode/event.ts';
import { idOf } from '../util/hash.ts';

/** A deterministic event id from the parts that identify an event in its harness. */
export function stableEventId(...parts: readonly string[]): string {
  return idOf(...parts);
}

export interface ToolCallFields {
  readonly event_id: string;
  readonly ts: string;
  readonly harness: Harness;
  readonly session_id: string;
  /** A subagent with a context window of its own; omit for the main agent. */
  readonly agent_id?: string;
  /** Optional in envelope v1 (the row stores ''), as `model` is: runtimes without turns exist. */
  readonly turn_id?: string;
  readonly call_id: string;
  readonly model?: string;
  readonly tool: string;
  readonly status: 'ok' | 'error' | 'pending';
  readonly output?: string;
  readonly error?: string;
  readonly duration_ms?: number;
  readonly images?: number;
}

/**
 * The raw input: `json` is the verbatim JSON text of an object as the harness logged it;
 * `string` is input the harness logged as a string (JSON-in-a-string, or freeform text).
 */
export type RawToolInput = { readonly json: string } | { readonly string: string };

export function toolCallLine(fields: ToolCallFields, input: RawToolInput): string {
  const head = JSON.stringify({ schema: 'toolcanon.event/v1', type: 'tool_call', ...fields });
  const raw = 'json' in input ? input.json : JSON.stringify(input.string);
  return `${head.slice(0, -1)},"input":${raw}}`;
}

export interface UsageFields {
  readonly event_id: string;
  readonly ts: string;
  readonly harness: Harness;
  readonly session_id: string;
  readonly agent_id?: string;
  readonly turn_id?: string;
  readonly model?: string;
  readonly request_id: string;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_read_tokens?: number;
  readonly cache_write_tokens?: number;
  readonly reasoning_tokens?: number;
  readonly context_window_tokens?: number;
}

export function usageLine(fields: UsageFields): string {
  return JSON.stringify({ schema: 'toolcanon.event/v1', type: 'usage', ...fields });
}

const RFC3339 = /^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})$/;

/**
 * A harness's timestamp as the envelope's RFC 3339 `ts`: kept as written when it already is
 * one (sub-millisecond digits and offsets survive), else whatever Date.parse reads, in UTC.
 * Undefined when absent or not a date (a well-formed but impossible one, such as month 13,
 * included), so the caller falls back on what it knows instead of writing a line that fails.
 */
export function normaliseTimestamp(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over into March: kept as written, the decoder would refuse it.
  if (RFC3339.test(value)) return toClickHouseTime(value) === undefined ? undefined : value;
  return new Date(ms).toISOString();
}

/**
 * Largest event line an importer writes. The pipeline refuses events over 4 MiB (its default
 * limit); a tool output that would push a call past this is cut, so the call is kept.
 */
export const MAX_EVENT_LINE_BYTES = 3.5 * 1024 * 1024;

/**
 * The call's event line; when it would pass `maxBytes`, the output is cut with a marker
 * (truncateOutput) to what the rest of the line leaves room for, and `truncated` says so.
 */
export function toolCallLineWithin(fields: ToolCallFields, input: RawToolInput, maxBytes: number = MAX_EVENT_LINE_BYTES): { line: string; truncated: boolean } {
  const line = toolCallLine(fields, input);
  const size = Buffer.byteLength(line, 'utf8');
  if (size <= maxBytes || fields.output === undefined) return { line, truncated: false };
  const room = maxBytes - (size - Buffer.byteLength(JSON.stringify(fields.output), 'utf8'));
  return { line: toolCallLine({ ...fields, output: room > 0 ? truncateOutput(fields.output, room) : '' }, input), truncated: true };
}

/** Cuts a tool output so its event line stays under the importer's line limit (a marker says how much was kept). */
export function truncateOutput(output: string, maxJsonBytes: number): string {
  const total = Buffer.byteLength(output, 'utf8');
  const marker = (kept: number): string => `\n[toolcanon: output truncated, ${kept} of ${total} bytes kept]`;
  const budget = maxJsonBytes - Buffer.byteLength(JSON.stringify(marker(total)), 'utf8');
  // Binary search the longest prefix whose JSON encoding fits (escapes make bytes ≠ length).
  let lo = 0;
  let hi = output.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (Buffer.byteLength(JSON.stringify(output.slice(0, mid)), 'utf8') <= budget) lo = mid;
    else hi = mid - 1;
  }
  // Never split a surrogate pair.
  const code = output.charCodeAt(lo - 1);
  if (lo > 0 && code >= 0xd800 && code <= 0xdbff) lo--;
  const kept = output.slice(0, lo);
  return kept + marker(Buffer.byteLength(kept, 'utf8'));
}

/** Longest error text a call keeps as its `error` (the first line of what the harness said). */
export const MAX_ERROR_CHARS = 2000;

/** The first line of an error text, trimmed, at most MAX_ERROR_CHARS characters. */
export function errorSummary(text: string): string {
  const nl = text.indexOf('\n');
  const first = (nl < 0 ? text : text.slice(0, nl)).trim();
  return first.length > MAX_ERROR_CHARS ? first.slice(0, MAX_ERROR_CHARS) : first;
}
