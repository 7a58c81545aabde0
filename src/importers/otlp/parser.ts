// Turns OTLP/JSON exports (traces and logs; a whole-file JSON document or one export per line)
// into toolcanon events: GenAI `execute_tool` spans and inference-span usage, and Claude Code's
// `claude_code.tool_result` / `claude_code.api_request` log events. Pure. A span or log record
// that cannot be read is returned as malformed: its own JSON text, at the line of the document.
import type { Harness } from '../../canonical/meta.ts';
import { USAGE_CONVENTIONS } from '../../accounting/conventions.ts';
import { findSpan } from '../../util/json-spans.ts';
import { claudeCodeCallEventId, claudeCodeUsageEventId } from '../claude-code/ids.ts';
import { stableEventId, toolCallEnvelope, usageEnvelope, type RawToolInput, Envelope } from '../envelope.ts';
import { describeValue, lineAt, MalformedRecords, parseObject, rawOf, readObject, splitCompleteLines } from '../lines.ts';
import type { ImportedEvent, MalformedRecord, ParsedFile } from '../types.ts';
import {
  anyBool,
  anyCount,
  anyString,
  anyToPlain,
  isOtlpExport,
  readExport,
  type AnyValue,
  type Attributes,
  type JsonPath,
  type OtlpLogRecord,
  type OtlpItem,
  type OtlpSpan,
} from './types.ts';
import { isObject } from '../json.ts';

export interface OtlpParseOptions {
  /** Exact `service.name` → harness, consulted before the built-in rules (see README). */
  readonly serviceHarness?: Readonly<Record<string, Harness>>;
}

/** Built-in `service.name` rules, on the lower-cased name. */
const SERVICE_RULES: readonly (readonly [RegExp, Harness])[] = [
  [/^claude[-_ ]?code/, 'claude_code'],
  [/^codex/, 'codex'], // codex_cli_rs, codex_exec, codex-app-server, …
  [/^opencode/, 'opencode'],
  [/^grok/, 'grok_build'], // grok, grok-build, grok_build
];

/** The harness a `service.name` belongs to; undefined when no rule fits. */
export function harnessForService(serviceName: string, overrides: Readonly<Record<string, Harness>> = {}): Harness | undefined {
  const exact = overrides[serviceName];
  if (exact) return exact;
  const lower = serviceName.toLowerCase();
  return SERVICE_RULES.find(([rule]) => rule.test(lower))?.[1];
}

/** The usage attributes an inference span is read from. */
const USAGE_ATTRIBUTES = [
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.prompt_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.usage.completion_tokens',
  'gen_ai.usage.cache_read.input_tokens',
  'gen_ai.usage.cache_creation.input_tokens',
  'gen_ai.usage.reasoning.output_tokens',
] as const;

/** A member of an item's own object as written (for a detail), found again in its text. */
function rawMember(at: Located, key: string): unknown {
  const span = findSpan(at.exportText, [...at.path, key]);
  if (!span) return undefined;
  try {
    return JSON.parse(at.exportText.slice(span.start, span.end));
  } catch {
    return undefined;
  }
}

/** Claude Code's log events that become events (the others are counted as `log:<event>`). */
const CLAUDE_CODE_EVENTS: ReadonlySet<string> = new Set(['claude_code.tool_result', 'claude_code.api_request', 'claude_code.tool_decision', 'claude_code.mcp_server_connection']);

/** What Claude Code writes as `tool_name` for a user MCP server's tool unless tool details are on. */
export const HIDDEN_MCP_TOOL = 'mcp_tool';
/**
 * The canonical name of such a call when `tool_parameters` does not name it: an MCP name (the
 * `mcp__` prefix) with no server part, so it is counted as an MCP call and, failing the
 * one-separator rule, flagged `bad_mcp_name` with no server or tool: nothing is made up.
 */
export const UNNAMED_MCP_TOOL = `mcp__${HIDDEN_MCP_TOOL}`;

/**
 * The tool name of a Claude Code tool_result / tool_decision: as logged, except the literal
 * `mcp_tool`, which becomes `mcp__<server>__<tool>` (what the transcript calls it) when
 * `tool_parameters` (OTEL_LOG_TOOL_DETAILS=1) names `mcp_server_name` and `mcp_tool_name`, and
 * UNNAMED_MCP_TOOL when it does not.
 */
export function claudeToolName(logged: string, parameters: string | undefined): string {
  if (logged !== HIDDEN_MCP_TOOL) return logged;
  let details: unknown;
  try {
    details = parameters === undefined ? undefined : JSON.parse(parameters);
  } catch {
    details = undefined;
  }
  if (isObject(details)) {
    const server = details['mcp_server_name'];
    const tool = details['mcp_tool_name'];
    if (typeof server === 'string' && server !== '' && typeof tool === 'string' && tool !== '') return `mcp__${server}__${tool}`;
  }
  return UNNAMED_MCP_TOOL;
}

interface McpStatusFields {
  readonly event_id: string;
  readonly ts: string;
  readonly harness: Harness;
  readonly session_id: string;
  readonly server: string;
  readonly client_id: string;
  readonly transport: 'stdio' | 'http';
  readonly state: 'connected' | 'failed' | 'disconnected';
  readonly error?: string;
}

/** An `mcp_status` envelope event (schemas/mcp-status-event.v1.schema.json), as its line: MCP events are decoded from their text. */
function mcpStatusLine(fields: McpStatusFields): Envelope {
  return new Envelope({ type: 'line', line: JSON.stringify({ schema: 'toolcanon.event/v1', type: 'mcp_status', ...fields }) });
}

/** Inference operations whose spans carry the usage of one model request. */
const INFERENCE_OPERATIONS = new Set(['chat', 'text_completion', 'generate_content']);

export interface Located {
  readonly source: string;
  readonly endOffset: number;
  readonly order: number;
  /** The text of the export the item is in (a line, or the whole document). */
  readonly exportText: string;
  /** The line of a one-export-per-line file; undefined in a whole document (found when needed). */
  readonly lineNo: number | undefined;
  /** Where the item sits in its export. */
  readonly path: JsonPath;
}

export type Item =
  | (Located & { readonly kind: 'span'; readonly resource: Attributes; readonly span: OtlpSpan })
  | (Located & { readonly kind: 'log'; readonly resource: Attributes; readonly record: OtlpLogRecord })
  | (Located & { readonly kind: 'not_object'; readonly what: 'span' | 'log record'; readonly value: unknown });

/** An item as a malformed record: the verbatim JSON text of the span or log record, at its line. */
export function malformedItem(at: Located, problem: string, detail: string): MalformedRecord {
  const span = findSpan(at.exportText, at.path);
  const raw = span ? at.exportText.slice(span.start, span.end) : at.exportText;
  return { raw, line: at.lineNo ?? lineAt(at.exportText, span?.start ?? 0), problem, detail, endOffset: at.endOffset };
}

/** Why an object with `resourceSpans` / `resourceLogs` is no export: the member is no array. */
export function exportFault(doc: Readonly<Record<string, unknown>>): string | undefined {
  for (const key of ['resourceSpans', 'resourceLogs']) {
    if (key in doc && !Array.isArray(doc[key])) return `\`${key}\` is ${describeValue(doc[key])}, not an array.`;
  }
  return undefined;
}

/** Unix nanoseconds as RFC 3339 UTC (millisecond precision, what the tables store). */
export function unixNanosToRfc3339(ns: bigint): string | undefined {
  const ms = Number(ns / 1_000_000n);
  return ms > 0 && ms < 253_402_300_800_000 ? new Date(ms).toISOString() : undefined;
}

function nanosToMs(ns: bigint): number {
  return Number((ns + 500_000n) / 1_000_000n);
}

function count(skipped: Record<string, number>, key: string): void {
  skipped[key] = (skipped[key] ?? 0) + 1;
}

/** A tool input attribute: a string is the logged text itself; a structured value becomes JSON. */
function inputOf(v: AnyValue | undefined): RawToolInput {
  if (!v) return { json: '{}' };
  if (typeof v['stringValue'] === 'string') return { string: v['stringValue'] };
  const plain = anyToPlain(v);
  return typeof plain === 'object' && plain !== null && !Array.isArray(plain) ? { json: JSON.stringify(plain) } : { string: JSON.stringify(plain) };
}

/** A result attribute as output text. */
function outputOf(v: AnyValue | undefined): string | undefined {
  if (!v) return undefined;
  if (typeof v['stringValue'] === 'string') return v['stringValue'];
  return JSON.stringify(anyToPlain(v));
}

/**
 * Splits the file into exports: one per line for a `.jsonl` file or when the first non-blank
 * line is a JSON object (OTLP file exporter, collector `file` exporter), else one whole-file
 * document (pretty-printed). `unreadable` counts lines or documents that are not OTLP exports.
 */
function readItems(path: string, data: Buffer, skipped: Record<string, number>, malformed: MalformedRecords): { items: Item[]; completeBytes: number; unreadable: number } {
  const items: Item[] = [];
  let unreadable = 0;
  const { lines, completeBytes } = splitCompleteLines(data);
  const first = lines[0];
  // A `.jsonl` file is one export per line even when its first line is junk: as a whole
  // document it would never parse, and every line after the junk would be lost unreported.
  if (path.endsWith('.jsonl') || (first && parseObject(first.text.replace(/^\uFEFF/, '')) !== undefined)) {
    for (const line of lines) {
      const text = line.text.replace(/^\uFEFF/, '');
      const read = readObject(text);
      if (!read.ok) {
        unreadable++;
        malformed.add({ raw: rawOf(line), line: line.lineNo, problem: read.problem, detail: read.detail, endOffset: line.endOffset });
        continue;
      }
      const doc = read.value;
      if (!isOtlpExport(doc)) {
        unreadable++;
        const fault = exportFault(doc);
        // A metrics export, or any other object: not read on purpose.
        if (fault === undefined) count(skipped, 'not_otlp');
        else malformed.add({ raw: rawOf(line), line: line.lineNo, problem: 'malformed_export', detail: fault, endOffset: line.endOffset });
        continue;
      }
      const at = { source: `${path}:${line.lineNo}`, endOffset: line.endOffset, exportText: text, lineNo: line.lineNo };
      for (const item of readExport(doc)) items.push({ ...item, ...at, order: items.length });
    }
    return { items, completeBytes, unreadable };
  }
  // A whole-file document has no prefix a later import may skip: completeBytes 0 makes a
  // changed file (even one rewritten to the same size) re-emit all its events, deduplicated by
  // event id; one that does not parse (still being written) is read again the same way, and,
  // like the torn last line of a JSONL file, is not malformed.
  const text = data.toString('utf8').replace(/^\uFEFF/, '');
  if (text.trim() === '') return { items, completeBytes: 0, unreadable };
  const read = readObject(text);
  if (!read.ok && read.problem === 'invalid_json') {
    count(skipped, 'incomplete_document');
    return { items, completeBytes: 0, unreadable: 1 };
  }
  const fault = read.ok ? exportFault(read.value) : read.detail;
  if (!read.ok || !isOtlpExport(read.value)) {
    if (fault === undefined) count(skipped, 'not_otlp');
    else malformed.add({ raw: text.includes('\uFFFD') ? data : text, line: 1, problem: read.ok ? 'malformed_export' : read.problem, detail: fault, endOffset: data.length });
    return { items, completeBytes: 0, unreadable: 1 };
  }
  for (const item of readExport(read.value)) items.push({ ...item, source: `${path}:#${items.length}`, endOffset: data.length, exportText: text, lineNo: undefined, order: items.length });
  return { items, completeBytes: 0, unreadable };
}

/** The name of a log event: `eventName`, a `claude_code.*` body, or `event.name` (prefixed for Claude Code). */
export function logEventName(record: OtlpLogRecord, harness: Harness | undefined): string | undefined {
  if (record.eventName) return record.eventName;
  const body = anyString(record.body);
  if (body?.startsWith('claude_code.')) return body;
  const name = anyString(record.attributes.get('event.name'));
  if (name === undefined) return undefined;
  return harness === 'claude_code' && !name.includes('.') ? `claude_code.${name}` : name;
}

function conversationAttr(a: Attributes): string | undefined {
  return anyString(a.get('gen_ai.conversation.id')) || anyString(a.get('session.id')) || undefined;
}

interface ApiRequestSeen {
  readonly timeNs: bigint;
  readonly model: string;
}

/** A span as the index keeps it: what its descendants ask of it, no attributes. */
interface SpanInfo {
  readonly traceId: string;
  readonly parentSpanId: string;
  /** `gen_ai.response.model` (else `request.model`), when set. */
  readonly model: string | undefined;
  /** `gen_ai.conversation.id` (else `session.id`), when set. */
  readonly conversation: string | undefined;
}

/**
 * What reading one span or log record needs to know about the rest of its file: the spans of
 * its trace (a tool call's model and conversation come from its ancestors, or any span of the
 * trace) and Claude Code's requests of its session (a tool result's model is that of the latest
 * request at or before it, wherever it is in the file). Filled with every item of the file
 * (`add`, in file order), then sealed, then asked. It holds a few strings per span and per
 * request, no attributes and no text.
 */
export class OtlpIndex {
  private readonly spans = new Map<string, SpanInfo>();
  private readonly conversationOfTrace = new Map<string, string>();
  private readonly apiRequests = new Map<string, ApiRequestSeen[]>();

  constructor(private readonly options: OtlpParseOptions) {}

  /** The harness of a resource's `service.name`; undefined when no rule fits. */
  harnessOf(resource: Attributes): Harness | undefined {
    const service = anyString(resource.get('service.name'));
    return service === undefined ? undefined : harnessForService(service, this.options.serviceHarness);
  }

  add(item: OtlpItem): void {
    if (item.kind === 'span') {
      const span = item.span;
      const a = span.attributes;
      // A span exported twice keeps its key's first place and its last copy (as a Map's set).
      this.spans.set(`${span.traceId}/${span.spanId}`, {
        traceId: span.traceId,
        parentSpanId: span.parentSpanId,
        model: anyString(a.get('gen_ai.response.model')) ?? anyString(a.get('gen_ai.request.model')),
        conversation: conversationAttr(a),
      });
    } else if (item.kind === 'log' && logEventName(item.record, this.harnessOf(item.resource)) === 'claude_code.api_request') {
      const session = anyString(item.record.attributes.get('session.id'));
      const model = anyString(item.record.attributes.get('model'));
      const timeNs = item.record.timeNs ?? item.record.observedNs;
      if (!session || !model || timeNs === undefined) return;
      const list = this.apiRequests.get(session) ?? [];
      list.push({ timeNs, model });
      this.apiRequests.set(session, list);
    }
  }

  /** After the last `add`. */
  seal(): void {
    for (const span of this.spans.values()) {
      if (span.conversation && !this.conversationOfTrace.has(span.traceId)) this.conversationOfTrace.set(span.traceId, span.conversation);
    }
    // Stable: requests of the same time keep their file order.
    for (const list of this.apiRequests.values()) list.sort((x, y) => (x.timeNs < y.timeNs ? -1 : x.timeNs > y.timeNs ? 1 : 0));
  }

  /** The model of a span: its own, else the nearest ancestor's. */
  modelOf(span: OtlpSpan): string {
    const own = anyString(span.attributes.get('gen_ai.response.model')) ?? anyString(span.attributes.get('gen_ai.request.model'));
    if (own) return own;
    let current = span.parentSpanId ? this.spans.get(`${span.traceId}/${span.parentSpanId}`) : undefined;
    for (let depth = 1; current && depth < 64; depth++) {
      if (current.model) return current.model;
      current = current.parentSpanId ? this.spans.get(`${current.traceId}/${current.parentSpanId}`) : undefined;
    }
    return '';
  }

  /**
   * The conversation of a span: its own or an ancestor's `gen_ai.conversation.id` (or
   * `session.id`), else any span of the same trace that names one (a tool span often does not).
   */
  conversationOf(span: OtlpSpan): string | undefined {
    const own = conversationAttr(span.attributes);
    if (own) return own;
    let current = span.parentSpanId ? this.spans.get(`${span.traceId}/${span.parentSpanId}`) : undefined;
    for (let depth = 1; current && depth < 64; depth++) {
      if (current.conversation) return current.conversation;
      current = current.parentSpanId ? this.spans.get(`${current.traceId}/${current.parentSpanId}`) : undefined;
    }
    return this.conversationOfTrace.get(span.traceId);
  }

  /** The model of a session's latest Claude Code request at or before `timeNs` (binary search: logs can hold thousands). */
  claudeModelAt(session: string, timeNs: bigint): string {
    const list = this.apiRequests.get(session) ?? [];
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if ((list[m]?.timeNs ?? 0n) <= timeNs) lo = m + 1;
      else hi = m;
    }
    return list[lo - 1]?.model ?? '';
  }
}

/** Where the item reader hands what it makes of an item. */
export interface ItemOutput {
  emit(eventId: string, envelope: Envelope, at: Located): void;
  bad(at: Located, problem: string, detail: string): void;
  count(key: string): void;
}

/**
 * The reader of one span or log record (an Item) into at most one event, a malformed record or
 * a count: the rules of the README, shared by the whole-file parse and the streamed one.
 */
export function itemReader(index: OtlpIndex, out: ItemOutput): (item: Item) => void {
  const bad = (at: Located, problem: string, detail: string): void => out.bad(at, problem, detail);
  const emit = (eventId: string, envelope: Envelope, at: Located): void => out.emit(eventId, envelope, at);
  const skip = (key: string): void => out.count(key);
  const serviceHarness = (resource: Attributes): Harness | undefined => index.harnessOf(resource);
  const modelOf = (span: OtlpSpan): string => index.modelOf(span);
  const conversationOf = (span: OtlpSpan): string | undefined => index.conversationOf(span);
  const claudeModelAt = (session: string, timeNs: bigint): string => index.claudeModelAt(session, timeNs);

  return (item: Item): void => {
    if (item.kind === 'span') readSpanItem(item, item.span);
    else if (item.kind === 'log') readLogItem(item, item.record);
    else bad(item, `${item.what === 'span' ? 'span' : 'log'}:not_an_object`, `The ${item.what} is ${describeValue(item.value)}, not an object.`);
  };

  function readSpanItem(at: Located & { resource: Attributes }, span: OtlpSpan): void {
    const a = span.attributes;
    const operation = anyString(a.get('gen_ai.operation.name'));
    if (operation === undefined) return skip(span.name.startsWith('claude_code.') ? `span:${span.name}` : 'span:non_gen_ai');
    const isTool = operation === 'execute_tool';
    if (!isTool && !INFERENCE_OPERATIONS.has(operation)) return skip(`span:${operation}`);
    // MCP client/server spans of a service that is no harness are MCP calls.
    const harness = serviceHarness(at.resource) ?? (a.has('mcp.method.name') ? 'mcp' : undefined);
    if (!harness) return skip('span:unknown_service');
    const session = conversationOf(span) ?? anyString(at.resource.get('session.id')) ?? span.traceId;
    if (!session) return bad(at, `span:${operation}:no_session`, 'The span names no conversation or session, and its `traceId` is empty.');
    if (isTool) readToolSpan(at, span, harness, session);
    else readInferenceSpan(at, span, harness, session, operation);
  }

  function readToolSpan(at: Located, span: OtlpSpan, harness: Harness, session: string): void {
    const a = span.attributes;
    const tool = anyString(a.get('gen_ai.tool.name')) ?? (span.name.startsWith('execute_tool ') ? span.name.slice('execute_tool '.length) : undefined);
    if (!tool) return bad(at, 'span:execute_tool:no_tool_name', 'The execute_tool span has no `gen_ai.tool.name` and its name does not start with "execute_tool ".');
    const ts = span.startNs !== undefined ? unixNanosToRfc3339(span.startNs) : undefined;
    if (!ts) return bad(at, 'span:execute_tool:no_time', `The execute_tool span's \`startTimeUnixNano\` is ${describeValue(rawMember(at, 'startTimeUnixNano'))}, not a time in Unix nanoseconds.`);
    const callId = anyString(a.get('gen_ai.tool.call.id')) ?? '';
    if (!callId && !span.spanId) return bad(at, 'span:execute_tool:no_call_id', 'The execute_tool span has neither a `gen_ai.tool.call.id` nor a `spanId`.');
    const errorType = anyString(a.get('error.type'));
    const status = span.status === 'error' || errorType !== undefined ? 'error' : 'ok';
    const error = span.statusMessage || errorType;
    const output = outputOf(a.get('gen_ai.tool.call.result'));
    const durationMs = span.startNs !== undefined && span.endNs !== undefined && span.endNs >= span.startNs ? nanosToMs(span.endNs - span.startNs) : undefined;
    const eventId = callId ? stableEventId('otlp', harness, session, 'tool', callId) : stableEventId('otlp', 'span', span.traceId, span.spanId);
    const line = toolCallEnvelope(
      {
        event_id: eventId,
        ts,
        harness,
        session_id: session,
        turn_id: span.traceId,
        call_id: callId || span.spanId,
        model: modelOf(span),
        tool,
        status,
        ...(output !== undefined ? { output } : {}),
        ...(status === 'error' && error ? { error } : {}),
        ...(durationMs !== undefined ? { duration_ms: durationMs } : {}),
      },
      inputOf(a.get('gen_ai.tool.call.arguments')),
    );
    emit(eventId, line, at);
  }

  function readInferenceSpan(at: Located, span: OtlpSpan, harness: Harness, session: string, operation: string): void {
    const a = span.attributes;
    const input = anyCount(a.get('gen_ai.usage.input_tokens')) ?? anyCount(a.get('gen_ai.usage.prompt_tokens'));
    const output = anyCount(a.get('gen_ai.usage.output_tokens')) ?? anyCount(a.get('gen_ai.usage.completion_tokens'));
    // A usage attribute that is there but no count is a malformed span; none at all is a span
    // that reports no usage (the attributes are recommended, not required).
    const badCount = USAGE_ATTRIBUTES.find((key) => a.has(key) && anyCount(a.get(key)) === undefined);
    if (badCount !== undefined) return bad(at, `span:${operation}:bad_usage`, `The span's \`${badCount}\` is ${describeValue(anyToPlain(a.get(badCount)))}, not a non-negative integer.`);
    if (input === undefined && output === undefined) return skip(`span:${operation}:no_usage`);
    const timeNs = span.endNs ?? span.startNs;
    const ts = timeNs !== undefined ? unixNanosToRfc3339(timeNs) : undefined;
    if (!ts) return bad(at, `span:${operation}:no_time`, `The span's \`endTimeUnixNano\` is ${describeValue(rawMember(at, 'endTimeUnixNano'))}, not a time in Unix nanoseconds.`);
    const cacheRead = anyCount(a.get('gen_ai.usage.cache_read.input_tokens'));
    const cacheWrite = anyCount(a.get('gen_ai.usage.cache_creation.input_tokens'));
    const reasoning = anyCount(a.get('gen_ai.usage.reasoning.output_tokens'));
    // OTel GenAI counts cached tokens inside input and reasoning inside output; a harness that
    // reports them apart (claude_code, opencode) gets them taken out again, so the figures
    // follow that harness's convention. A producer that did not include them is left as is.
    const convention = USAGE_CONVENTIONS[harness];
    const cached = (cacheRead ?? 0) + (cacheWrite ?? 0);
    const inputTokens = !convention.inputIncludesCache && (input ?? 0) >= cached ? (input ?? 0) - cached : (input ?? 0);
    const outputTokens = !convention.outputIncludesReasoning && (output ?? 0) >= (reasoning ?? 0) ? (output ?? 0) - (reasoning ?? 0) : (output ?? 0);
    const eventId = stableEventId('otlp', harness, session, 'usage', span.traceId, span.spanId);
    const line = usageEnvelope({
      event_id: eventId,
      ts,
      harness,
      session_id: session,
      ...(span.traceId ? { turn_id: span.traceId } : {}),
      model: anyString(a.get('gen_ai.response.model')) ?? anyString(a.get('gen_ai.request.model')) ?? '',
      request_id: anyString(a.get('gen_ai.response.id')) || span.spanId || eventId,
      input_tokens: inputTokens,
      output_tokens: outputTokens,
      ...(cacheRead !== undefined ? { cache_read_tokens: cacheRead } : {}),
      ...(cacheWrite !== undefined ? { cache_write_tokens: cacheWrite } : {}),
      ...(reasoning !== undefined ? { reasoning_tokens: reasoning } : {}),
    });
    emit(eventId, line, at);
  }

  function readLogItem(at: Located & { resource: Attributes }, record: OtlpLogRecord): void {
    const name = logEventName(record, serviceHarness(at.resource));
    if (name === undefined || !CLAUDE_CODE_EVENTS.has(name)) return skip(`log:${name ?? 'other'}`);
    const a = record.attributes;
    // An accepted decision adds nothing of its own: its call's tool_result follows. Counted
    // before the checks below, so a record read only to be counted is never malformed.
    const decision = name === 'claude_code.tool_decision' ? anyString(a.get('decision')) : undefined;
    if (name === 'claude_code.tool_decision' && decision !== 'reject') return skip(decision === 'accept' ? `log:${name}:accept` : `log:${name}`);
    const session = anyString(a.get('session.id'));
    if (!session) return bad(at, `log:${name}:no_session`, `The ${name} log record has no \`session.id\` attribute.`);
    const timeNs = record.timeNs ?? record.observedNs;
    const eventTs = anyString(a.get('event.timestamp'));
    const ts = timeNs !== undefined ? unixNanosToRfc3339(timeNs) : eventTs !== undefined && !Number.isNaN(Date.parse(eventTs)) ? new Date(Date.parse(eventTs)).toISOString() : undefined;
    if (!ts) return bad(at, `log:${name}:no_time`, `The ${name} log record has no \`timeUnixNano\`, \`observedTimeUnixNano\` or \`event.timestamp\` that is a time.`);
    const turn = anyString(a.get('prompt.id')) ?? '';
    const sequence = anyString(a.get('event.sequence')) ?? '';

    if (name === 'claude_code.mcp_server_connection') return readMcpConnection(at, a, session, ts, sequence);

    if (name === 'claude_code.tool_result' || name === 'claude_code.tool_decision') {
      const logged = anyString(a.get('tool_name'));
      if (!logged) return bad(at, `log:${name}:no_tool_name`, `The ${name} log record has no \`tool_name\` attribute.`);
      const parameters = anyString(a.get('tool_parameters'));
      const tool = claudeToolName(logged, parameters);
      const callId = anyString(a.get('tool_use_id')) ?? '';
      const rejected = name === 'claude_code.tool_decision';
      const success = rejected ? false : anyBool(a.get('success'));
      const error = rejected ? `rejected (${anyString(a.get('source')) ?? 'no source'})` : (anyString(a.get('error')) ?? anyString(a.get('error_type')));
      const status = success === false || (success === undefined && error !== undefined) ? 'error' : 'ok';
      const durationMs = rejected ? undefined : anyCount(a.get('duration_ms'));
      // A tool_result is logged when the call ends: its start, the call's `ts` as everywhere
      // (the transcript's tool_use time, a span's start), is that time less the duration.
      const startTs = durationMs !== undefined && timeNs !== undefined ? (unixNanosToRfc3339(timeNs - BigInt(durationMs) * 1_000_000n) ?? ts) : ts;
      // With a tool_use_id, the transcript's identity of the call (claude-code importer): the
      // call seen in both is one row. Without one, the record's own time and sequence.
      const eventId = callId ? claudeCodeCallEventId(session, callId) : stableEventId('otlp', 'claude_code', session, 'log', ts, sequence);
      const line = toolCallEnvelope(
        {
          event_id: eventId,
          ts: startTs,
          harness: 'claude_code',
          session_id: session,
          turn_id: turn,
          call_id: callId,
          model: timeNs !== undefined ? claudeModelAt(session, timeNs) : '',
          tool,
          status,
          ...(status === 'error' && error !== undefined ? { error } : {}),
          ...(durationMs !== undefined ? { duration_ms: durationMs } : {}),
        },
        // The input is logged only with OTEL_LOG_TOOL_DETAILS=1: tool_input (the arguments,
        // long values truncated), else tool_parameters (a summary); `{}` when neither.
        inputOf(a.get('tool_input') ?? a.get('tool_parameters')),
      );
      return emit(eventId, line, at);
    }

    const input = anyCount(a.get('input_tokens'));
    const output = anyCount(a.get('output_tokens'));
    if (input === undefined && output === undefined) return bad(at, `log:${name}:no_usage`, `The ${name} log record has no \`input_tokens\` or \`output_tokens\` that is a count.`);
    const requestId = anyString(a.get('request_id')) || anyString(a.get('client_request_id')) || '';
    // With the Anthropic request id, the transcript's identity of the response (claude-code
    // importer: its `requestId`): the request seen in both is one row.
    const eventId = anyString(a.get('request_id')) ? claudeCodeUsageEventId(session, requestId) : stableEventId('otlp', 'claude_code', session, 'usage', requestId || `${ts}/${sequence}`);
    const cacheRead = anyCount(a.get('cache_read_tokens'));
    const cacheWrite = anyCount(a.get('cache_creation_tokens'));
    const line = usageEnvelope({
      event_id: eventId,
      ts,
      harness: 'claude_code',
      session_id: session,
      ...(turn ? { turn_id: turn } : {}),
      model: anyString(a.get('model')) ?? '',
      request_id: requestId || eventId,
      input_tokens: input ?? 0,
      output_tokens: output ?? 0,
      ...(cacheRead !== undefined ? { cache_read_tokens: cacheRead } : {}),
      ...(cacheWrite !== undefined ? { cache_write_tokens: cacheWrite } : {}),
    });
    emit(eventId, line, at);
  }

  /**
   * `claude_code.mcp_server_connection` as an `mcp_status` event. The server is named only with
   * OTEL_LOG_TOOL_DETAILS=1 (`server_name`); without it the record is counted, not guessed into
   * one server (every server's connections under one name would make a flapping server up).
   * Claude Code names no client instance: one client id per session and server.
   */
  function readMcpConnection(at: Located, a: Attributes, session: string, ts: string, sequence: string): void {
    const name = 'claude_code.mcp_server_connection';
    const server = anyString(a.get('server_name'));
    if (!server) return skip(`log:${name}:no_server_name`);
    const status = anyString(a.get('status'));
    if (status !== 'connected' && status !== 'failed' && status !== 'disconnected') {
      return bad(at, `log:${name}:bad_status`, `The ${name} log record's \`status\` is ${describeValue(status)}, not "connected", "failed" or "disconnected".`);
    }
    const transport = anyString(a.get('transport_type'));
    if (!transport) return bad(at, `log:${name}:no_transport`, `The ${name} log record has no \`transport_type\` attribute.`);
    const error = status === 'connected' ? undefined : (anyString(a.get('error')) ?? anyString(a.get('error_code')));
    const eventId = stableEventId('otlp', 'claude_code', session, 'mcp_status', server, ts, sequence);
    const line = mcpStatusLine({
      event_id: eventId,
      ts,
      harness: 'claude_code',
      session_id: session,
      server,
      client_id: `claude_code:${server}`,
      // stdio is a local process; sse, http, ws and the others reach a server Claude Code does
      // not start, so their recovery is never checked against the stdio restart schedule.
      transport: transport === 'stdio' ? 'stdio' : 'http',
      state: status,
      ...(error ? { error } : {}),
    });
    emit(eventId, line, at);
  }

}

export function parseOtlpFile(path: string, data: Buffer, options: OtlpParseOptions = {}): ParsedFile {
  const skipped: Record<string, number> = {};
  const malformed = new MalformedRecords();
  const { items, completeBytes, unreadable } = readItems(path, data, skipped, malformed);
  const index = new OtlpIndex(options);
  for (const item of items) index.add(item);
  index.seal();
  const byId = new Map<string, { event: ImportedEvent; order: number }>();
  const read = itemReader(index, {
    // A later item with the same event id replaces the earlier one, in its place in the file.
    emit: (eventId, line, at) => byId.set(eventId, { event: { envelope: line, source: at.source, endOffset: at.endOffset }, order: at.order }),
    bad: (at, problem, detail) => malformed.add(malformedItem(at, problem, detail)),
    count: (key) => count(skipped, key),
  });
  for (const item of items) read(item);
  const events = [...byId.values()].sort((x, y) => x.order - y.order).map((c) => c.event);
  // Records: spans and log records, plus the lines or documents that were no OTLP export.
  return { events, malformed: malformed.records, completeBytes, recordsRead: items.length + unreadable, skipped };
}
