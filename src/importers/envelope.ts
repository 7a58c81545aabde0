// Builds toolcanon.event/v1 events for importers, typed (Envelope); as a line the raw input is
// spliced in as text, so what the harness logged reaches raw_input byte for byte (big integers,
// escapes, key order), and the typed decode keeps it the same way.
import type { EnvelopeEvent, RawToolInput, ToolCallFields, TypedEvent, UsageFields } from '../decode/typed.ts';
import { toClickHouseTime } from '../util/time.ts';
import { idOf } from '../util/hash.ts';

export type { EnvelopeEvent, RawToolInput, ToolCallFields, UsageFields } from '../decode/typed.ts';

/** A deterministic event id from the parts that identify an event in its harness. */
export function stableEventId(...parts: readonly string[]): string {
  return idOf(...parts);
}

/**
 * An importer's event, typed: the pipeline decodes it as it is (src/decode/event.ts
 * decodeEnvelope); its toolcanon.event/v1 line is made only where it is asked for (a Kafka topic,
 * a dead letter, watch's record of what it handed out) and then kept.
 */
export class Envelope implements TypedEvent {
  #text: string | undefined;
  /** Characters of the event's strings: its fields' and its input's (counted once, when first asked). */
  #strings: { readonly fields: number; readonly input: number; readonly inputIsJson: boolean } | undefined;
  constructor(readonly event: EnvelopeEvent) {}

  /** The event as one toolcanon.event/v1 line (the raw input spliced in as text). */
  get text(): string {
    return (this.#text ??= lineOf(this.event));
  }

  /**
   * At least the UTF-8 bytes of `text`, without making it: a character is at most 6 bytes of
   * JSON (an escape) and an input's verbatim JSON text 3 a UTF-16 unit; the keys, the numbers
   * and the quotes fit the constant.
   */
  get mostBytes(): number {
    if (this.#text !== undefined) return 3 * this.#text.length;
    if (this.event.type === 'line') return 3 * this.event.line.length;
    const n = this.strings();
    return 6 * n.fields + (n.inputIsJson ? 3 : 6) * n.input + ENVELOPE_OVERHEAD_BYTES;
  }

  /** About the characters of `text` (what a batch or a held queue counts it as). */
  get chars(): number {
    if (this.#text !== undefined) return this.#text.length;
    if (this.event.type === 'line') return this.event.line.length;
    const n = this.strings();
    return n.fields + n.input + ENVELOPE_OVERHEAD_CHARS;
  }

  private strings(): { readonly fields: number; readonly input: number; readonly inputIsJson: boolean } {
    if (this.#strings !== undefined) return this.#strings;
    const e = this.event as Exclude<EnvelopeEvent, { type: 'line' }>;
    let fields = 0;
    for (const v of Object.values(e.fields)) if (typeof v === 'string') fields += v.length;
    const input = e.type === 'tool_call' ? e.input : undefined;
    const inputIsJson = input !== undefined && 'json' in input;
    return (this.#strings = { fields, input: input === undefined ? 0 : 'json' in input ? input.json.length : input.string.length, inputIsJson });
  }
}

/** Bytes of an envelope line beyond its strings: the keys, quotes, numbers (a usage's six figures of 20 digits). */
const ENVELOPE_OVERHEAD_BYTES = 1024;
/** Characters an envelope line has about its strings (keys and figures). */
const ENVELOPE_OVERHEAD_CHARS = 256;

function lineOf(event: EnvelopeEvent): string {
  if (event.type === 'line') return event.line;
  if (event.type === 'usage') return JSON.stringify({ schema: 'toolcanon.event/v1', type: 'usage', ...event.fields });
  const head = JSON.stringify({ schema: 'toolcanon.event/v1', type: 'tool_call', ...event.fields });
  const input = event.input;
  const raw = 'json' in input ? input.json : JSON.stringify(input.string);
  return `${head.slice(0, -1)},"input":${raw}}`;
}

export function toolCallEnvelope(fields: ToolCallFields, input: RawToolInput): Envelope {
  return new Envelope({ type: 'tool_call', fields, input });
}

export function usageEnvelope(fields: UsageFields): Envelope {
  return new Envelope({ type: 'usage', fields });
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
 * The call's envelope; when its line would pass `maxBytes`, the output is cut with a marker
 * (truncateOutput) to what the rest of the line leaves room for, and `truncated` says so. The
 * line is made (and kept) only for a call that may be that large.
 */
export function toolCallEnvelopeWithin(fields: ToolCallFields, input: RawToolInput, maxBytes: number = MAX_EVENT_LINE_BYTES): { envelope: Envelope; truncated: boolean } {
  const envelope = toolCallEnvelope(fields, input);
  if (fields.output === undefined || envelope.mostBytes <= maxBytes) return { envelope, truncated: false };
  const size = Buffer.byteLength(envelope.text, 'utf8');
  if (size <= maxBytes) return { envelope, truncated: false };
  const room = maxBytes - (size - Buffer.byteLength(JSON.stringify(fields.output), 'utf8'));
  return { envelope: toolCallEnvelope({ ...fields, output: room > 0 ? truncateOutput(fields.output, room) : '' }, input), truncated: true };
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
