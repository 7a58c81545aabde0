// `toolcanon export otlp`: what is stored, replayed as OTLP/HTTP traces through the OpenTelemetry
// JS SDK's own exporters (protobuf or JSON), paged out of ClickHouse in bounded batches.
//
// Each page is read with a keyset (the last key of the page before), so memory holds one page of
// rows and its spans, whatever the size of the store. The SDK is imported here only, when an
// export runs, so that no other command pays for loading it.
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ClickHouseSink } from '../sink/clickhouse.ts';
import { scopeCondition, type ReportScope } from '../report/scope.ts';
import { hrTimeOfMs, SEMCONV_SCHEMA_URL, sessionSpan, toolCallSpan, usageSpan, type SessionRecord, type SpanData, type ToolCallRecord, type UsageRecord } from './genai.ts';

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export interface OtlpExportOptions {
  /** The traces URL the spans are POSTed to (already completed with /v1/traces where needed). */
  readonly url: string;
  readonly protocol: OtlpProtocol;
  readonly scope: ReportScope;
  readonly includeRawInput: boolean;
  /** Rows read (and spans sent) per request; default 1,000. */
  readonly batchSpans?: number;
  readonly timeoutMs?: number;
  readonly headers?: Record<string, string>;
}

export interface OtlpExportSummary {
  spansExported: number;
  toolCallSpans: number;
  usageSpans: number;
  sessionSpans: number;
  traces: number;
  spansFailed: number;
  requests: number;
}

/** The endpoint refused the spans or could not be reached: one line, naming the URL. */
export class OtlpExportError extends Error {
  override readonly name = 'OtlpExportError';
}

const DEFAULT_BATCH_SPANS = 1_000;
const SCOPE_NAME = 'toolcanon.export.otlp';
const SCOPE_VERSION = '0.1.0';

/**
 * An endpoint as given: a base URL (no path, or `/`) gets the OTLP traces path `/v1/traces`, as
 * OTEL_EXPORTER_OTLP_ENDPOINT does; a URL with a path is used as it is (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
 */
export function tracesUrlOf(endpoint: string): string {
  const u = new URL(endpoint);
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/v1/traces';
  return u.toString();
}

const TOOL_CALL_SELECT = `event_id, toUnixTimestamp64Milli(ts) AS ts_ms, harness, namespace, session_id, agent_id, turn_id, call_id, model, tool_name, kind, label,
  read_only, meta_version, path, \`offset\`, \`limit\`, command, description, cwd, directory, pattern, raw_input, status, error, duration_ms, images,
  via, mcp_server, mcp_tool, flags, input_bytes, output_bytes, source`;
const USAGE_SELECT = `event_id, toUnixTimestamp64Milli(ts) AS ts_ms, harness, session_id, agent_id, turn_id, model, request_id, input_tokens, output_tokens,
  cache_read_tokens, cache_write_tokens, reasoning_tokens, context_tokens, origin`;

function and(...parts: string[]): string {
  const kept = parts.filter((p) => p !== '');
  return kept.length ? `WHERE ${kept.join(' AND ')}` : '';
}

/** Pages of rows in (session_id, event_id) order, each read after the last key of the one before. */
async function* pages<T extends { session_id: string; event_id: string }>(sink: ClickHouseSink, table: string, select: string, where: string, size: number): AsyncGenerator<T[]> {
  let after: [string, string] | undefined;
  for (;;) {
    const rows = await sink.queryRows<T>({
      query: `SELECT ${select} FROM ${table} FINAL ${and(where, after ? '(session_id, event_id) > ({s:String}, {e:String})' : '')}
        ORDER BY session_id, event_id LIMIT {n:UInt32}`,
      query_params: { s: after?.[0] ?? '', e: after?.[1] ?? '', n: size },
    });
    if (rows.length === 0) return;
    yield rows;
    const last = rows[rows.length - 1] as T;
    after = [last.session_id, last.event_id];
    if (rows.length < size) return;
  }
}

/** One row per session in scope: its span of time over tool calls and observed usage. */
async function* sessionPages(sink: ClickHouseSink, where: string, size: number): AsyncGenerator<SessionRecord[]> {
  let after: string | undefined;
  for (;;) {
    const rows = await sink.queryRows<SessionRecord>({
      query: `SELECT session_id, any(harness) AS harness, min(start_ms) AS start_ms, max(end_ms) AS end_ms, groupUniqArray(agent_id) AS agents
        FROM (
          SELECT session_id, harness, agent_id, toUnixTimestamp64Milli(ts) AS start_ms, toUnixTimestamp64Milli(ts) + toInt64(ifNull(duration_ms, 0)) AS end_ms
            FROM tool_calls FINAL ${and(where)}
          UNION ALL
          SELECT session_id, harness, agent_id, toUnixTimestamp64Milli(ts) AS start_ms, toUnixTimestamp64Milli(ts) AS end_ms
            FROM token_usage FINAL ${and(where, "source = 'observed'")}
        )
        ${after !== undefined ? 'WHERE session_id > {s:String}' : ''}
        GROUP BY session_id ORDER BY session_id LIMIT {n:UInt32}`,
      query_params: { s: after ?? '', n: size },
    });
    if (rows.length === 0) return;
    yield rows;
    after = (rows[rows.length - 1] as SessionRecord).session_id;
    if (rows.length < size) return;
  }
}

interface Sdk {
  exporter: SpanExporter;
  toReadable: (s: SpanData) => ReadableSpan;
}

async function loadSdk(opts: OtlpExportOptions): Promise<Sdk> {
  const [{ resourceFromAttributes }, { ATTR_SERVICE_NAME }] = await Promise.all([import('@opentelemetry/resources'), import('@opentelemetry/semantic-conventions')]);
  const config = { url: opts.url, timeoutMillis: opts.timeoutMs ?? 10_000, headers: opts.headers ?? {} };
  const exporter: SpanExporter =
    opts.protocol === 'http/json'
      ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(config)
      : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(config);
  // One resource per harness (service.name = the agent runtime that produced the session).
  const resources = new Map<string, ReturnType<typeof resourceFromAttributes>>();
  const resourceOf = (harness: string) => {
    let r = resources.get(harness);
    if (r === undefined) resources.set(harness, (r = resourceFromAttributes({ [ATTR_SERVICE_NAME]: harness, 'toolcanon.exporter': 'toolcanon export otlp' })));
    return r;
  };
  const instrumentationScope = { name: SCOPE_NAME, version: SCOPE_VERSION, schemaUrl: SEMCONV_SCHEMA_URL };
  const toReadable = (s: SpanData): ReadableSpan => {
    const startTime = hrTimeOfMs(s.startMs);
    const endTime = hrTimeOfMs(Math.max(s.endMs, s.startMs));
    const context = { traceId: s.traceId, spanId: s.spanId, traceFlags: 1 };
    return {
      name: s.name,
      kind: s.kind,
      spanContext: () => context,
      ...(s.parentSpanId === undefined ? {} : { parentSpanContext: { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: 1 } }),
      startTime,
      endTime,
      duration: hrTimeOfMs(Math.max(s.endMs - s.startMs, 0)),
      status: s.status,
      attributes: s.attributes,
      links: [],
      events: [],
      ended: true,
      resource: resourceOf(s.harness),
      instrumentationScope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  };
  return { exporter, toReadable };
}

/** What the SDK's failure says, in one line (its errors carry the HTTP status or the socket error). */
function describeExportError(url: string, error: unknown): string {
  const e = error as { message?: unknown; code?: unknown; data?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined;
  const message = String(e?.message ?? error ?? 'unknown error').split('\n')[0] ?? '';
  const sys = String(e?.cause?.code ?? (typeof e?.code === 'string' ? e.code : '') ?? '');
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|EHOSTUNREACH|ETIMEDOUT/.test(`${sys} ${message}`)) {
    return `cannot reach the OTLP endpoint ${url} (${/ECONN\w+|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ETIMEDOUT/.exec(`${sys} ${message}`)?.[0]}): is the receiver running, and is --endpoint right?`;
  }
  if (typeof e?.code === 'number') {
    const body = typeof e.data === 'string' && e.data.trim() !== '' ? `: ${e.data.trim().split('\n')[0]?.slice(0, 200)}` : '';
    return `the OTLP endpoint ${url} refused the spans with HTTP ${e.code}${body}`;
  }
  if (/timeout/i.test(message)) return `the OTLP endpoint ${url} did not answer in time (${message})`;
  return `exporting to the OTLP endpoint ${url} failed: ${message}`;
}

function exportBatch(exporter: SpanExporter, spans: ReadableSpan[]): Promise<{ ok: true } | { ok: false; error: unknown }> {
  return new Promise((resolve) => {
    exporter.export(spans, (result) => resolve(result.code === 0 ? { ok: true } : { ok: false, error: result.error }));
  });
}

/**
 * Sends every session in scope as one trace: its invoke_agent span, then its tool calls and its
 * observed usage, a page at a time. Stops at the first batch the endpoint refuses and throws an
 * OtlpExportError naming it; `summary` (when given) holds the counts up to there.
 */
export async function exportOtlp(sink: ClickHouseSink, opts: OtlpExportOptions, summary: OtlpExportSummary = emptySummary()): Promise<OtlpExportSummary> {
  const size = opts.batchSpans ?? DEFAULT_BATCH_SPANS;
  const where = scopeCondition(opts.scope);
  const { exporter, toReadable } = await loadSdk(opts);
  const send = async (spans: SpanData[], counter: 'toolCallSpans' | 'usageSpans' | 'sessionSpans') => {
    const result = await exportBatch(exporter, spans.map(toReadable));
    summary.requests++;
    if (!result.ok) {
      summary.spansFailed += spans.length;
      throw new OtlpExportError(describeExportError(opts.url, result.error));
    }
    summary.spansExported += spans.length;
    summary[counter] += spans.length;
  };
  try {
    for await (const rows of sessionPages(sink, where, size)) {
      await send(rows.map(sessionSpan), 'sessionSpans');
      summary.traces += rows.length;
    }
    for await (const rows of pages<ToolCallRecord>(sink, 'tool_calls', TOOL_CALL_SELECT, where, size)) {
      await send(rows.map((r) => toolCallSpan(r, opts.includeRawInput)), 'toolCallSpans');
    }
    for await (const rows of pages<UsageRecord>(sink, 'token_usage', USAGE_SELECT, and(where, "source = 'observed'").replace(/^WHERE /, ''), size)) {
      await send(rows.map(usageSpan), 'usageSpans');
    }
  } finally {
    await exporter.shutdown().catch(() => undefined);
  }
  return summary;
}

export function emptySummary(): OtlpExportSummary {
  return { spansExported: 0, toolCallSpans: 0, usageSpans: 0, sessionSpans: 0, traces: 0, spansFailed: 0, requests: 0 };
}
