// The oracle of the streaming codex parser: the whole-file parser as it was before the importer
// streamed (src/importers/codex/parser.ts at commit c04471f), unchanged but for its imports,
// and for issue 29: no invented model (UNKNOWN_MODEL) and web_search_call ids taken from their
// web_search_end events (webSearchIds, written here on its own, not from the importer's code).
// test/importers/codex-stream.test.ts checks that the streaming parser gives exactly what this gives.
// Turns one Codex rollout file into toolcanon events: a tool_call per tool call (joined with its
// output by call_id) and a usage event per change of the cumulative token total. Pure: bytes in,
// events, malformed records and counts out; never throws on a bad record: a record that cannot
// be read is returned as malformed (with its line), one skipped on purpose is counted.
import { basename } from 'node:path';
import { MCP_HARNESS_PREFIX, MCP_SEPARATOR } from '../../../src/canonical/mcp.ts';
import { findSpan } from '../../../src/util/json-spans.ts';
import { MAX_EVENT_LINE_BYTES, normaliseTimestamp, stableEventId, toolCallLineWithin, usageLine, type RawToolInput, type ToolCallFields, type UsageFields } from '../../../src/importers/envelope.ts';
import { describeValue, MalformedRecords, readObject, splitCompleteLines, type RawLine } from '../../../src/importers/lines.ts';
import type { ImportedEvent, ParsedFile } from '../../../src/importers/types.ts';
import {
  END_EVENT_TYPES,
  TOOL_CALL_TYPES,
  TOOL_OUTPUT_TYPES,
  isEnvelopeType,
  isLegacyState,
  readCallEnd,
  readLegacyMeta,
  readRolloutLine,
  readSessionMeta,
  readTaskStarted,
  readTokenCount,
  readToolCall,
  readToolOutput,
  readTurnContext,
  sessionMetaFault,
  tokenCountFault,
  toolCallFault,
  toolOutputFault,
  type CallEnd,
  type OutputContent,
  type TokenUsage,
  type ToolCallItem,
} from '../../../src/importers/codex/types.ts';
import { isObject, type JsonObject } from '../../../src/importers/json.ts';

/** The model when neither a turn_context nor the session meta names one: unknown (''). */
export const UNKNOWN_MODEL = '';

/**
 * The ids id-less web_search_call records take (by line): the call_id of the first later
 * web_search_end whose action is the call's (keys sorted; an end without an action by its
 * query), not the id of a call that carries one, not given to an earlier call.
 */
function webSearchIds(records: readonly { line: RawLine; obj: JsonObject }[]): Map<number, string> {
  const sorted = (v: unknown): string =>
    JSON.stringify(v, (_k, val: unknown) => (isObject(val) ? Object.fromEntries(Object.entries(val).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : val));
  const waiting: { lineNo: number; action: string; query: unknown }[] = [];
  const taken = new Set<string>();
  const ids = new Map<number, string>();
  for (const { line, obj } of records) {
    const env = readRolloutLine(obj);
    const item = env?.type === 'response_item' ? env.payload : env === undefined && !('payload' in obj) ? obj : undefined;
    if (item?.['type'] === 'web_search_call') {
      const id = item['id'];
      const action = item['action'];
      if (typeof id === 'string' && id !== '') taken.add(id);
      else if (isObject(action)) waiting.push({ lineNo: line.lineNo, action: sorted(action), query: action['query'] });
    } else if (env?.type === 'event_msg' && env.payload['type'] === 'web_search_end') {
      const callId = env.payload['call_id'];
      if (typeof callId !== 'string' || callId === '' || taken.has(callId)) continue;
      const action = env.payload['action'];
      const query = env.payload['query'];
      const at = waiting.findIndex((w) => (isObject(action) ? w.action === sorted(action) : typeof query === 'string' ? w.query === query : true));
      if (at < 0) continue;
      const w = waiting.splice(at, 1)[0];
      if (w === undefined) continue;
      taken.add(callId);
      ids.set(w.lineNo, callId);
    }
  }
  return ids;
}

/** Largest event line the importer writes (envelope.ts; its tests read it from here). */
export { MAX_EVENT_LINE_BYTES };

const UUID_IN_NAME = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

// ------------------------------------------------------------------------- token deltas

/** The usage of one request, recovered from two cumulative totals. */
export interface TokenDelta {
  readonly input_tokens: number;
  readonly cached_input_tokens: number;
  readonly output_tokens: number;
  readonly reasoning_output_tokens: number;
  readonly cache_write_input_tokens: number | undefined;
}

/**
 * What a cumulative `total_token_usage` adds to the previous one. `undefined` for a repeat (Codex
 * re-emits the same total after tool steps and turn contexts: it adds nothing). A total below
 * the previous one in any figure means the counter started again (a new process on the same
 * rollout): like a counter reset in Prometheus, the new total counts from zero.
 */
export function tokenDelta(total: TokenUsage, previous: TokenUsage | undefined): TokenDelta | undefined {
  if (previous === undefined) return total;
  const down =
    total.input_tokens < previous.input_tokens ||
    total.cached_input_tokens < previous.cached_input_tokens ||
    total.output_tokens < previous.output_tokens ||
    total.reasoning_output_tokens < previous.reasoning_output_tokens ||
    (total.cache_write_input_tokens ?? 0) < (previous.cache_write_input_tokens ?? 0);
  if (down) return total;
  const delta: TokenDelta = {
    input_tokens: total.input_tokens - previous.input_tokens,
    cached_input_tokens: total.cached_input_tokens - previous.cached_input_tokens,
    output_tokens: total.output_tokens - previous.output_tokens,
    reasoning_output_tokens: total.reasoning_output_tokens - previous.reasoning_output_tokens,
    cache_write_input_tokens:
      total.cache_write_input_tokens === undefined ? undefined : total.cache_write_input_tokens - (previous.cache_write_input_tokens ?? 0),
  };
  const unchanged =
    delta.input_tokens === 0 &&
    delta.cached_input_tokens === 0 &&
    delta.output_tokens === 0 &&
    delta.reasoning_output_tokens === 0 &&
    (delta.cache_write_input_tokens ?? 0) === 0;
  return unchanged ? undefined : delta;
}

// ------------------------------------------------------------------------- call outcomes

export interface CallOutcome {
  readonly status: 'ok' | 'error';
  readonly error?: string;
  readonly durationMs?: number;
}

/** True for an MCP tool name as Codex logs it: `server__tool` (≤ 0.44) or `mcp__server__tool`. */
export function isMcpToolName(name: string): boolean {
  return name.startsWith(MCP_HARNESS_PREFIX) || name.includes(MCP_SEPARATOR);
}

/** Plain-text outputs Codex itself writes when a call did not run or failed before its tool did. */
const FAILURE_PREFIXES: readonly RegExp[] = [
  /^exec command rejected\b/, // the user or the approval policy refused the command
  /^failed in sandbox\b/, // "failed in sandbox LinuxSeccomp with execution error: … exit code: 101"
  /^failed to parse function arguments\b/, // the model's arguments did not fit the tool's schema
  /^unsupported (custom tool )?call\b/,
  /^aborted( by user)?$/, // a call cut short by an interrupted turn
];
/** Codex's rendering of a failed built-in tool (apply_patch through shell: "error: invalid hunk …"). */
const BUILTIN_ERROR = /^error: /;
/** Codex's rendering of an MCP call that failed in the client (`Err(e)` → "err: …"). */
const MCP_CLIENT_ERROR = /^err: /;

function firstLine(text: string, max = 500): string {
  const nl = text.indexOf('\n');
  const line = nl < 0 ? text : text.slice(0, nl);
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

function secondsToMs(seconds: unknown): number | undefined {
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? Math.round(seconds * 1000) : undefined;
}

function exitOutcome(code: number, durationMs: number | undefined): CallOutcome {
  const base = code === 0 ? { status: 'ok' as const } : { status: 'error' as const, error: `exit code ${code}` };
  return durationMs === undefined ? base : { ...base, durationMs };
}

/** `{"output","metadata":{"exit_code","duration_seconds"}}` (shell ≤ 0.4x), or an MCP `{"isError"}`. */
function structuredOutcome(text: string): CallOutcome | undefined {
  if (text.charCodeAt(0) !== 123 /* { */) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(parsed)) return undefined;
  const o = parsed;
  const metadata = o['metadata'];
  if (isObject(metadata)) {
    const code = metadata['exit_code'];
    if (typeof code === 'number' && Number.isInteger(code)) return exitOutcome(code, secondsToMs(metadata['duration_seconds']));
  }
  if (typeof o['isError'] === 'boolean') return o['isError'] ? { status: 'error', error: 'MCP isError' } : { status: 'ok' };
  return undefined;
}

const HEADER_START = /^(Exit code: |Chunk ID: |Wall time: |Process exited with code |Process running with session ID )/;

/**
 * The header of newer shell outputs: "Exit code: N\nWall time: X seconds\n…Output:\n…" (freeform
 * shell) or "Chunk ID: …\nWall time: X seconds\nProcess exited with code N\n…Output:\n…"
 * (unified exec). Only lines before "Output:" are read, so a command's own output never counts.
 */
function headerOutcome(text: string): CallOutcome | undefined {
  if (!HEADER_START.test(text)) return undefined;
  let code: number | undefined;
  let durationMs: number | undefined;
  for (const line of text.slice(0, 4096).split('\n')) {
    if (line === 'Output:') break;
    const exit = /^(?:Exit code:|Process exited with code) (-?[0-9]+)\s*$/.exec(line);
    if (exit?.[1] !== undefined) code = Number(exit[1]);
    const wall = /^Wall time: ([0-9]+(?:\.[0-9]+)?) ?(?:seconds|s)\s*$/.exec(line);
    if (wall?.[1] !== undefined) durationMs = secondsToMs(Number(wall[1]));
  }
  if (code !== undefined) return exitOutcome(code, durationMs);
  // A process still running (unified exec returned before it exited): it has not failed.
  return durationMs === undefined ? { status: 'ok' } : { status: 'ok', durationMs };
}

/**
 * Success or failure of a finished call, read from its output: Codex persists no success flag
 * (its `success` is internal), so the output's shape and Codex's own failure texts are the signal.
 */
export function parseCallOutcome(tool: string, content: Pick<OutputContent, 'text' | 'success'>): CallOutcome {
  const text = content.text;
  let outcome = structuredOutcome(text) ?? headerOutcome(text);
  if (outcome === undefined) {
    const mcp = isMcpToolName(tool);
    const failed = FAILURE_PREFIXES.some((p) => p.test(text)) || (mcp ? MCP_CLIENT_ERROR.test(text) : BUILTIN_ERROR.test(text));
    outcome = failed ? { status: 'error', error: firstLine(text) } : { status: 'ok' };
  }
  // A build that persisted its own flag has the last word.
  if (content.success === false && outcome.status === 'ok') return { ...outcome, status: 'error', error: firstLine(text) };
  if (content.success === true && outcome.status === 'error') return outcome.durationMs === undefined ? { status: 'ok' } : { status: 'ok', durationMs: outcome.durationMs };
  return outcome;
}

/** An end event (Extended persistence) knows the real outcome: it overrides what the text implies. */
function mergeEnd(outcome: CallOutcome, end: CallEnd | undefined): CallOutcome {
  if (end === undefined) return outcome;
  const durationMs = outcome.durationMs ?? end.durationMs;
  const withDuration = (o: CallOutcome): CallOutcome => (durationMs === undefined ? o : { ...o, durationMs });
  if (end.failed === true) return withDuration({ status: 'error', error: end.detail ?? outcome.error ?? 'failed' });
  if (end.failed === false) return withDuration({ status: 'ok' });
  return withDuration(outcome);
}

// ------------------------------------------------------------------------- the file

interface CallState {
  readonly tool: string;
  readonly input: RawToolInput;
  readonly callId: string;
  readonly eventKey: string;
  readonly ts: string;
  readonly model: string;
  readonly turnId: string;
  readonly line: RawLine;
  output?: { readonly content: OutputContent; readonly line: RawLine };
  end?: { readonly end: CallEnd; readonly line: RawLine };
}

/**
 * A line's time, or why it has none. Only the records that need one (a tool call, a token count)
 * are malformed without it: a record skipped on purpose is skipped whatever its timestamp.
 */
type LineTime = { readonly ts: string } | { readonly ts: undefined; readonly problem: 'bad_timestamp' | 'no_timestamp'; readonly detail: string };

interface Ordered {
  /** Line number of the record that completed the event: events are emitted in this order. */
  readonly lineNo: number;
  readonly seq: number;
  readonly event: ImportedEvent;
}

/** The session a file belongs to: the first session_meta, the legacy first line, the file name. */
function findSession(records: readonly { obj: JsonObject }[], path: string): { id: string; ts: string | undefined } {
  for (const { obj } of records) {
    const env = readRolloutLine(obj);
    if (env?.type === 'session_meta') {
      const meta = readSessionMeta(env.payload);
      if (meta) return { id: meta.id, ts: normaliseTimestamp(meta.timestamp) ?? normaliseTimestamp(env.timestamp) };
    } else if (env === undefined) {
      const legacy = readLegacyMeta(obj);
      if (legacy) return { id: legacy.id, ts: normaliseTimestamp(legacy.timestamp) };
    }
  }
  const name = basename(path);
  return { id: UUID_IN_NAME.exec(name)?.[1] ?? name.replace(/\.jsonl$/i, ''), ts: undefined };
}


export function parseRollout(path: string, data: Buffer): ParsedFile {
  const { lines, completeBytes } = splitCompleteLines(data);
  const skipped: Record<string, number> = {};
  const skip = (what: string): void => {
    skipped[what] = (skipped[what] ?? 0) + 1;
  };

  const malformed = new MalformedRecords();

  const records: { line: RawLine; obj: JsonObject }[] = [];
  for (const line of lines) {
    const read = readObject(line.text);
    if (read.ok) records.push({ line, obj: read.value });
    else malformed.addLine(line, read.problem, read.detail);
  }
  const session = findSession(records, path);
  const wsIds = webSearchIds(records);

  const ordered: Ordered[] = [];
  const emit = (line: RawLine, text: string): void => {
    ordered.push({ lineNo: line.lineNo, seq: ordered.length, event: { line: text, source: `${path}:${line.lineNo}`, endOffset: line.endOffset } });
  };
  const calls = new Map<string, CallState>();

  let model: string | undefined;
  let metaModel: string | undefined;
  let turnId = '';
  let contextWindowTokens: number | undefined;
  let lastTs = session.ts;
  let previousTotal: TokenUsage | undefined;
  let sessionMetaSeen = false;
  const currentModel = (): string => model ?? metaModel ?? UNKNOWN_MODEL;

  const emitCall = (c: CallState, outcome: { status: 'ok' | 'error' | 'pending'; error?: string; durationMs?: number }, completedBy: RawLine): void => {
    const content = c.output?.content;
    let images = content?.images ?? 0;
    // view_image attaches the picture as a separate input message; it belongs to this call.
    if (c.tool === 'view_image' && outcome.status === 'ok' && images === 0) images = 1;
    const fields: ToolCallFields = {
      event_id: stableEventId('codex', session.id, c.eventKey),
      ts: c.ts,
      harness: 'codex',
      session_id: session.id,
      turn_id: c.turnId,
      call_id: c.callId,
      model: c.model,
      tool: c.tool,
      status: outcome.status,
      ...(content === undefined ? {} : { output: content.text }),
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
      ...(outcome.durationMs === undefined ? {} : { duration_ms: outcome.durationMs }),
      ...(images > 0 ? { images } : {}),
    };
    const { line: text, truncated } = toolCallLineWithin(fields, c.input);
    if (truncated) skip('output_truncated');
    emit(completedBy, text);
  };

  const onToolCall = (item: ToolCallItem, p: JsonObject, line: RawLine, ts: string, envelope: boolean): void => {
    let tool: string;
    let input: RawToolInput;
    switch (item.kind) {
      case 'function_call':
        // A JSON *string*, kept as logged even when it is not valid JSON (the pipeline flags it).
        tool = item.name;
        input = { string: item.arguments };
        break;
      case 'custom_tool_call':
        tool = item.name;
        input = { string: item.input };
        break;
      case 'local_shell_call':
      case 'web_search_call': {
        // The action object's own text from the line, so the raw input is byte for byte Codex's.
        tool = item.kind === 'local_shell_call' ? 'shell' : 'web_search';
        const span = findSpan(line.text, envelope ? ['payload', 'action'] : ['action']);
        input = span ? { json: line.text.slice(span.start, span.end) } : { json: JSON.stringify(p['action']) };
        break;
      }
    }
    const id = item.callId ?? (item.kind === 'web_search_call' ? wsIds.get(line.lineNo) : undefined);
    const callId = id ?? '';
    // A call without an id (some local_shell_call / web_search_call items) is known by its line.
    const eventKey = id ?? `line:${line.lineNo}`;
    const state: CallState = { tool, input, callId, eventKey, ts, model: currentModel(), turnId, line };
    if (item.kind === 'web_search_call') {
      // Server-side: no output record follows; its own status is the outcome.
      const status = item.status === 'completed' ? 'ok' : item.status === 'failed' ? 'error' : 'pending';
      emitCall(state, { status }, line);
      return;
    }
    if (calls.has(eventKey)) {
      skip('duplicate_call_id');
      return;
    }
    calls.set(eventKey, state);
  };

  const onResponseItem = (p: JsonObject, line: RawLine, time: LineTime, envelope: boolean): void => {
    const type = typeof p['type'] === 'string' ? p['type'] : '';
    if (TOOL_CALL_TYPES.has(type)) {
      const item = readToolCall(p);
      if (!item) return malformed.addLine(line, `malformed:${type}`, toolCallFault(p));
      if (time.ts === undefined) return malformed.addLine(line, time.problem, time.detail);
      onToolCall(item, p, line, time.ts, envelope);
      return;
    }
    if (TOOL_OUTPUT_TYPES.has(type)) {
      const out = readToolOutput(p);
      if (out === undefined) return malformed.addLine(line, `malformed:${type}`, toolOutputFault(p));
      const call = calls.get(out.callId);
      if (call === undefined) return skip('output_without_call');
      if (call.output !== undefined) return skip('duplicate_output');
      call.output = { content: out.content, line };
      return;
    }
    // message, reasoning, ghost_snapshot, compaction, image_generation_call, …: not tool calls.
    skip(`response_item:${type || '(none)'}`);
  };

  const onTokenCount = (p: JsonObject, line: RawLine, time: LineTime): void => {
    const count = readTokenCount(p);
    if (count.kind === 'no_info') return skip('token_count:no_info');
    if (count.kind === 'invalid') return malformed.addLine(line, 'token_count:invalid', tokenCountFault(p));
    // The total stays the previous one: the next token_count's delta covers this request too.
    if (time.ts === undefined) return malformed.addLine(line, time.problem, time.detail);
    const ts = time.ts;
    const delta = tokenDelta(count.total, previousTotal);
    previousTotal = count.total;
    if (delta === undefined) return skip('token_count:repeated');
    const window = count.contextWindowTokens ?? contextWindowTokens;
    const fields: UsageFields = {
      event_id: stableEventId('codex', session.id, `token_count:${line.lineNo}`),
      ts,
      harness: 'codex',
      session_id: session.id,
      ...(turnId === '' ? {} : { turn_id: turnId }),
      model: currentModel(),
      request_id: `${session.id}:${line.lineNo}`,
      input_tokens: delta.input_tokens,
      output_tokens: delta.output_tokens,
      cache_read_tokens: delta.cached_input_tokens,
      reasoning_tokens: delta.reasoning_output_tokens,
      ...(delta.cache_write_input_tokens === undefined ? {} : { cache_write_tokens: delta.cache_write_input_tokens }),
      ...(window === undefined ? {} : { context_window_tokens: window }),
    };
    emit(line, usageLine(fields));
  };

  const onEventMsg = (p: JsonObject, line: RawLine, time: LineTime): void => {
    const type = typeof p['type'] === 'string' ? p['type'] : '';
    if (type === 'token_count') return onTokenCount(p, line, time);
    if (type === 'task_started' || type === 'turn_started') {
      const started = readTaskStarted(p);
      if (started.turnId !== undefined) turnId = started.turnId;
      if (started.contextWindowTokens !== undefined) contextWindowTokens = started.contextWindowTokens;
      return;
    }
    if (END_EVENT_TYPES.has(type)) {
      const end = readCallEnd(p);
      if (end === undefined) return malformed.addLine(line, `malformed:${type}`, `\`payload.call_id\` of a ${type} is ${describeValue(p['call_id'])}, not a non-empty string.`);
      const call = calls.get(end.callId);
      // An end event of a call this file does not hold (a resumed session's earlier file, or a
      // call Codex did not persist): like an output without its call, nothing to attach it to.
      if (call === undefined) return skip(`event_msg:${type}:without_call`);
      call.end = { end, line };
      return;
    }
    skip(`event_msg:${type || '(none)'}`);
  };

  for (const { line, obj } of records) {
    const env = readRolloutLine(obj);
    if (env !== undefined && isEnvelopeType(env.type)) {
      // A line without a timestamp takes the previous line's; one whose timestamp is there but
      // is no time cannot be placed at all.
      const written = obj['timestamp'];
      const own = normaliseTimestamp(env.timestamp);
      const time: LineTime =
        own !== undefined
          ? { ts: own }
          : written !== undefined && written !== null
            ? { ts: undefined, problem: 'bad_timestamp', detail: `\`timestamp\` is ${describeValue(written)}, not an RFC 3339 time.` }
            : lastTs !== undefined
              ? { ts: lastTs }
              : { ts: undefined, problem: 'no_timestamp', detail: 'The line has no `timestamp` and no earlier line gives one.' };
      if (own !== undefined) lastTs = own;
      switch (env.type) {
        case 'session_meta': {
          const meta = readSessionMeta(env.payload);
          if (meta === undefined) malformed.addLine(line, 'malformed:session_meta', sessionMetaFault(env.payload));
          // A second session_meta is the parent's, copied into a forked rollout with its history.
          else if (sessionMetaSeen) skip('session_meta:other');
          else {
            metaModel = meta.model;
            sessionMetaSeen = true;
          }
          break;
        }
        case 'turn_context': {
          const ctx = readTurnContext(env.payload);
          if (ctx.model !== undefined) model = ctx.model;
          if (ctx.turnId !== undefined) turnId = ctx.turnId;
          break;
        }
        case 'response_item':
          onResponseItem(env.payload, line, time, true);
          break;
        case 'event_msg':
          onEventMsg(env.payload, line, time);
          break;
        default:
          skip(env.type);
      }
      continue;
    }
    if (env !== undefined) {
      skip(`unknown:${env.type}`);
      continue;
    }
    if ('payload' in obj) {
      // An envelope whose payload is not an object: no legacy item has a payload member.
      malformed.addLine(line, 'malformed:envelope', `\`payload\` is ${describeValue(obj['payload'])}, not an object.`);
      continue;
    }
    // The legacy format: a bare first line, then bare ResponseItems and state snapshots. Its
    // records carry no timestamp: they all take the session's.
    if (isLegacyState(obj)) {
      skip('legacy:state');
      continue;
    }
    if (readLegacyMeta(obj)) {
      if (line !== records[0]?.line) skip('legacy:meta_other');
      continue;
    }
    if (typeof obj['type'] === 'string') {
      const time: LineTime = lastTs !== undefined ? { ts: lastTs } : { ts: undefined, problem: 'no_timestamp', detail: 'The legacy record has no time and the file has no session meta with a `timestamp`.' };
      onResponseItem(obj, line, time, false);
      continue;
    }
    // No `type`, no envelope, no legacy meta or state: nothing says what the record is.
    malformed.addLine(line, 'malformed:record', `\`type\` is ${describeValue(obj['type'])}, and the record is no envelope, legacy session meta or state.`);
  }

  for (const c of calls.values()) {
    if (c.output === undefined) {
      // No output yet (the call is running, or the session died): pending, completed by its own line.
      emitCall(c, mergePending(c.end), c.end?.line ?? c.line);
      continue;
    }
    const outcome = mergeEnd(parseCallOutcome(c.tool, c.output.content), c.end?.end);
    const last = c.end !== undefined && c.end.line.lineNo > c.output.line.lineNo ? c.end.line : c.output.line;
    emitCall(c, outcome, last);
  }

  ordered.sort((a, b) => a.lineNo - b.lineNo || a.seq - b.seq);
  return { events: ordered.map((o) => o.event), malformed: malformed.records, completeBytes, recordsRead: lines.length, skipped };
}

/** A call without an output: still pending, unless an end event already told how it ended. */
function mergePending(end: { readonly end: CallEnd } | undefined): { status: 'ok' | 'error' | 'pending'; error?: string; durationMs?: number } {
  if (end === undefined || end.end.failed === undefined) return { status: 'pending' };
  return mergeEnd({ status: end.end.failed ? 'error' : 'ok' }, end.end);
}
