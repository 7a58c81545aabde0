// OTLP/JSON (traces and logs) narrowed from `unknown`: resources, spans, log records and the
// AnyValue encoding, read leniently (OTLP/JSON says int64 is a decimal string, Claude Code
// sends JSON numbers; both are accepted, as the spec asks of decoders).

import { isObject, type JsonObject } from '../json.ts';

function objectsOf(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/** An AnyValue (`{stringValue}`, `{intValue}`, …), kept as its object. */
export type AnyValue = JsonObject;

/** Attributes by key (a repeated key keeps its last value). */
export type Attributes = ReadonlyMap<string, AnyValue>;

export function readAttributes(list: unknown): Attributes {
  const out = new Map<string, AnyValue>();
  for (const kv of objectsOf(list)) {
    if (typeof kv['key'] === 'string' && isObject(kv['value'])) out.set(kv['key'], kv['value']);
  }
  return out;
}

const DECIMAL = /^-?[0-9]+$/;

/** A scalar AnyValue as text (strings as is, numbers and booleans rendered); undefined otherwise. */
export function anyString(v: AnyValue | undefined): string | undefined {
  if (!v) return undefined;
  const s = v['stringValue'];
  if (typeof s === 'string') return s;
  for (const key of ['intValue', 'doubleValue', 'boolValue'] as const) {
    const x = v[key];
    if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') return String(x);
  }
  return undefined;
}

/** A non-negative safe integer from `intValue` (string or number), an integral `doubleValue`, or a decimal `stringValue`. */
export function anyCount(v: AnyValue | undefined): number | undefined {
  if (!v) return undefined;
  for (const key of ['intValue', 'stringValue', 'doubleValue'] as const) {
    const x = v[key];
    const n = typeof x === 'number' ? x : typeof x === 'string' && DECIMAL.test(x.trim()) ? Number(x.trim()) : undefined;
    if (n !== undefined) return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  }
  return undefined;
}

/** `boolValue`, or the strings "true" / "false" (Claude Code's `success`). */
export function anyBool(v: AnyValue | undefined): boolean | undefined {
  if (!v) return undefined;
  const b = v['boolValue'];
  if (typeof b === 'boolean') return b;
  const s = v['stringValue'];
  if (s === 'true' || s === 'false') return s === 'true';
  return undefined;
}

/** An AnyValue as plain JSON (kvlists become objects, arrays arrays; bytes stay base64 text). */
export function anyToPlain(v: AnyValue | undefined): unknown {
  if (!v) return null;
  if (isObject(v['kvlistValue'])) {
    const out: Record<string, unknown> = {};
    for (const kv of objectsOf(v['kvlistValue']['values'])) {
      if (typeof kv['key'] === 'string') out[kv['key']] = anyToPlain(isObject(kv['value']) ? kv['value'] : undefined);
    }
    return out;
  }
  if (isObject(v['arrayValue'])) return objectsOf(v['arrayValue']['values']).map((x) => anyToPlain(x));
  if (typeof v['intValue'] === 'string' && DECIMAL.test(v['intValue'])) {
    const n = Number(v['intValue']);
    return Number.isSafeInteger(n) ? n : v['intValue'];
  }
  for (const key of ['stringValue', 'intValue', 'doubleValue', 'boolValue', 'bytesValue'] as const) {
    if (v[key] !== undefined) return v[key];
  }
  return null;
}

/** Unix nanoseconds (decimal string or number); undefined when absent, zero or not a time. */
export function readUnixNanos(value: unknown): bigint | undefined {
  let ns: bigint | undefined;
  if (typeof value === 'string' && /^[0-9]+$/.test(value)) ns = BigInt(value);
  else if (typeof value === 'number' && Number.isFinite(value) && value >= 0) ns = BigInt(Math.trunc(value));
  return ns !== undefined && ns > 0n ? ns : undefined;
}

export type SpanStatus = 'unset' | 'ok' | 'error';

export interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly startNs?: bigint;
  readonly endNs?: bigint;
  readonly attributes: Attributes;
  readonly status: SpanStatus;
  readonly statusMessage: string;
}

function stringField(o: JsonObject, key: string): string {
  const v = o[key];
  return typeof v === 'string' ? v : '';
}

/** Status `code`: 2 / "STATUS_CODE_ERROR" is an error, 1 / "STATUS_CODE_OK" ok, anything else unset. */
function readStatus(status: unknown): { status: SpanStatus; message: string } {
  if (!isObject(status)) return { status: 'unset', message: '' };
  const code = status['code'];
  const message = typeof status['message'] === 'string' ? status['message'] : '';
  if (code === 2 || code === '2' || code === 'STATUS_CODE_ERROR') return { status: 'error', message };
  if (code === 1 || code === '1' || code === 'STATUS_CODE_OK') return { status: 'ok', message };
  return { status: 'unset', message };
}

export function readSpan(o: JsonObject): OtlpSpan {
  const start = readUnixNanos(o['startTimeUnixNano']);
  const end = readUnixNanos(o['endTimeUnixNano']);
  const { status, message } = readStatus(o['status']);
  return {
    traceId: stringField(o, 'traceId').toLowerCase(),
    spanId: stringField(o, 'spanId').toLowerCase(),
    parentSpanId: stringField(o, 'parentSpanId').toLowerCase(),
    name: stringField(o, 'name'),
    kind: typeof o['kind'] === 'number' ? o['kind'] : 0,
    ...(start !== undefined ? { startNs: start } : {}),
    ...(end !== undefined ? { endNs: end } : {}),
    attributes: readAttributes(o['attributes']),
    status,
    statusMessage: message,
  };
}

export interface OtlpLogRecord {
  readonly timeNs?: bigint;
  readonly observedNs?: bigint;
  readonly body?: AnyValue;
  /** The record's `eventName` (OTLP ≥ 1.5), when set. */
  readonly eventName?: string;
  readonly attributes: Attributes;
}

export function readLogRecord(o: JsonObject): OtlpLogRecord {
  const time = readUnixNanos(o['timeUnixNano']);
  const observed = readUnixNanos(o['observedTimeUnixNano']);
  const body = o['body'];
  const eventName = o['eventName'];
  return {
    ...(time !== undefined ? { timeNs: time } : {}),
    ...(observed !== undefined ? { observedNs: observed } : {}),
    ...(isObject(body) ? { body } : {}),
    ...(typeof eventName === 'string' && eventName !== '' ? { eventName } : {}),
    attributes: readAttributes(o['attributes']),
  };
}

/** Path from an export's root to one of its values (member names and array indices). */
export type JsonPath = readonly (string | number)[];

/**
 * One span or log record with the resource it came from, in document order, and where it sits
 * in the export (so a malformed one can be cut out of the text verbatim). An entry of a `spans`
 * or `logRecords` array that is no object is an item too: it is a malformed record.
 */
export type OtlpItem =
  | { readonly kind: 'span'; readonly resource: Attributes; readonly span: OtlpSpan; readonly path: JsonPath }
  | { readonly kind: 'log'; readonly resource: Attributes; readonly record: OtlpLogRecord; readonly path: JsonPath }
  | { readonly kind: 'not_object'; readonly what: 'span' | 'log record'; readonly value: unknown; readonly path: JsonPath };

/** Whether a JSON object is an OTLP export (traces or logs). */
export function isOtlpExport(o: JsonObject): boolean {
  return Array.isArray(o['resourceSpans']) || Array.isArray(o['resourceLogs']);
}

/** Objects of an array member with their indices in it (entries that are no object left out). */
function indexedObjects(value: unknown): [number, JsonObject][] {
  return Array.isArray(value) ? value.flatMap((v: unknown, i): [number, JsonObject][] => (isObject(v) ? [[i, v]] : [])) : [];
}

/**
 * The spans and log records of an export, in document order. Older exporters name the scope
 * level `instrumentationLibrarySpans` / `instrumentationLibraryLogs`: read as well.
 */
export function readExport(o: JsonObject): OtlpItem[] {
  const items: OtlpItem[] = [];
  for (const [r, rs] of indexedObjects(o['resourceSpans'])) {
    const resource = readAttributes(isObject(rs['resource']) ? rs['resource']['attributes'] : undefined);
    for (const scopeKey of ['scopeSpans', 'instrumentationLibrarySpans'] as const) {
      for (const [s, ss] of indexedObjects(rs[scopeKey])) {
        const spans = ss['spans'];
        if (!Array.isArray(spans)) continue;
        spans.forEach((span: unknown, k) => {
          const path = ['resourceSpans', r, scopeKey, s, 'spans', k];
          items.push(isObject(span) ? { kind: 'span', resource, span: readSpan(span), path } : { kind: 'not_object', what: 'span', value: span, path });
        });
      }
    }
  }
  for (const [r, rl] of indexedObjects(o['resourceLogs'])) {
    const resource = readAttributes(isObject(rl['resource']) ? rl['resource']['attributes'] : undefined);
    for (const scopeKey of ['scopeLogs', 'instrumentationLibraryLogs'] as const) {
      for (const [s, sl] of indexedObjects(rl[scopeKey])) {
        const records = sl['logRecords'];
        if (!Array.isArray(records)) continue;
        records.forEach((record: unknown, k) => {
          const path = ['resourceLogs', r, scopeKey, s, 'logRecords', k];
          items.push(isObject(record) ? { kind: 'log', resource, record: readLogRecord(record), path } : { kind: 'not_object', what: 'log record', value: record, path });
        });
      }
    }
  }
  return items;
}
