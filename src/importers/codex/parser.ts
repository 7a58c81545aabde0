// Turns one Codex rollout file into toolcanon events: a tool_call per tool call (joined with its
// output by call_id) and a usage event per change of the cumulative token total. Pure: bytes in,
// events, malformed records and counts out; never throws on a bad record: a record that cannot
// be read is returned as malformed (with its line), one skipped on purpose is counted.
import { basename } from 'node:path';
import { MCP_HARNESS_PREFIX, MCP_SEPARATOR } from '../../canonical/mcp.ts';
import { findSpan, isJsonSpace } from '../../util/json-spans.ts';
import { MAX_EVENT_LINE_BYTES, normaliseTimestamp, stableEventId, toolCallEnvelopeWithin, usageEnvelope, type RawToolInput, type ToolCallFields, type UsageFields, type Envelope } from '../envelope.ts';
import { describeValue, MalformedStream, parseObject, readObject, type RawLine } from '../lines.ts';
import { LastLines, parseLinesWith, ReleaseQueue, type Held } from '../stream.ts';
import type { ImportOutput, LineParser, LineReading, ParsedFile } from '../types.ts';
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
} from './types.ts';
import { isObject, type JsonObject } from '../json.ts';
import { WebSearchPairing } from './web-search.ts';

/**
 * The model when neither a turn_context nor the session meta names one (a Codex Desktop
 * rollout of cli 0.128, the legacy format): unknown, stored as ''. ccusage assumes `gpt-5`;
 * toolcanon does not invent one (reports say "unknown", cost is not priced).
 */
export const UNKNOWN_MODEL = '';

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
//
// Streaming, in two passes over the lines (RolloutIndex, then RolloutParser). What a rollout's
// events need from later in the file is little: the session (its first `session_meta`, which
// Codex writes on line 1), and for each call whether a later line still names it (its output,
// an end event, a copy of the call). The first pass records that; the parser holds a call only
// until its last line, and each event waits only for the calls that may still sort before it.

/** Where a line is in the file: what held state keeps of it (not its text or bytes). */
interface LinePos {
  readonly lineNo: number;
  readonly endOffset: number;
}

function posOf(line: RawLine): LinePos {
  return { lineNo: line.lineNo, endOffset: line.endOffset };
}

interface CallState {
  readonly tool: string;
  readonly input: RawToolInput;
  readonly callId: string;
  readonly eventKey: string;
  readonly ts: string;
  readonly model: string;
  readonly turnId: string;
  readonly line: LinePos;
  output?: { readonly content: OutputContent; readonly line: LinePos };
  end?: { readonly end: CallEnd; readonly line: LinePos };
}

/**
 * A line's time, or why it has none. Only the records that need one (a tool call, a token count)
 * are malformed without it: a record skipped on purpose is skipped whatever its timestamp.
 */
type LineTime = { readonly ts: string } | { readonly ts: undefined; readonly problem: 'bad_timestamp' | 'no_timestamp'; readonly detail: string };

interface Session {
  readonly id: string;
  readonly ts: string | undefined;
}

/** The session a line gives, if it is the one that names the file's session. */
function sessionOfRecord(obj: JsonObject): Session | undefined {
  const env = readRolloutLine(obj);
  if (env?.type === 'session_meta') {
    const meta = readSessionMeta(env.payload);
    return meta ? { id: meta.id, ts: normaliseTimestamp(meta.timestamp) ?? normaliseTimestamp(env.timestamp) } : undefined;
  }
  if (env !== undefined) return undefined;
  const legacy = readLegacyMeta(obj);
  return legacy ? { id: legacy.id, ts: normaliseTimestamp(legacy.timestamp) } : undefined;
}

/** The session of a file without a session meta: the uuid in its name, else the name. */
function sessionOfName(path: string): Session {
  const name = basename(path);
  return { id: UUID_IN_NAME.exec(name)?.[1] ?? name.replace(/\.jsonl$/i, ''), ts: undefined };
}

/**
 * True unless the line cannot name a call: a `call_id` member, or a local_shell_call's `id`.
 * JSON can spell a key or a value with `\u` escapes, so a line with one is read too.
 */
function mayNameCall(line: RawLine): boolean {
  // Looked for in the line's bytes when it has them (the same ASCII words, as Buffers: a string
  // needle is encoded again at every call): its text is then made only for the lines that may
  // name a call.
  const b = line.bytes;
  if (b === undefined) {
    const text = line.text;
    return text.includes('call_id') || text.includes('local_shell_call') || text.includes('web_search_call') || text.includes('\\u');
  }
  // The three words hold `call`: most lines (a reasoning item, a message) are looked through twice, not four times.
  if (!b.includes(CALL) && !b.includes(UNICODE_ESCAPE)) return false;
  return b.includes(CALL_ID) || b.includes(LOCAL_SHELL_CALL) || b.includes(WEB_SEARCH_CALL) || b.includes(UNICODE_ESCAPE);
}
const CALL = Buffer.from('call');
const CALL_ID = Buffer.from('call_id');
const LOCAL_SHELL_CALL = Buffer.from('local_shell_call');
const WEB_SEARCH_CALL = Buffer.from('web_search_call');
const WEB_SEARCH = Buffer.from('web_search');
const UNICODE_ESCAPE = Buffer.from('\\u');
const CALL_ID_KEY = Buffer.from('"call_id"');
const ID_KEY = Buffer.from('"id"');

/**
 * The keys a line names, read from its bytes without parsing it (RolloutIndex.scan): the string
 * value of every `"call_id"` member at any depth, and of every `"id"` member when the line holds
 * `local_shell_call`. Undefined when the bytes cannot say (a `\u` escape can spell a key, a web
 * search pairs by its parsed records): the line is parsed then. Whatever the parse would note is
 * noted (a key's name has no other spelling without `\u`; an unescaped `"` only ends a string),
 * and perhaps more (a deeper member, a duplicate, a line that is no valid JSON): the index is a
 * superset, which only holds a call longer.
 */
export function keysInBytes(b: Buffer): string[] | undefined {
  if (b.includes(UNICODE_ESCAPE) || b.includes(WEB_SEARCH)) return undefined;
  const keys: string[] = [];
  stringMembers(b, CALL_ID_KEY, keys);
  if (b.includes(LOCAL_SHELL_CALL)) stringMembers(b, ID_KEY, keys);
  return keys;
}

/** The string values of the members named by `key` (its quoted bytes) in `b`, appended to `out`. */
function stringMembers(b: Buffer, key: Buffer, out: string[]): void {
  for (let at = b.indexOf(key); at !== -1; at = b.indexOf(key, at + key.length)) {
    let i = at + key.length;
    while (i < b.length && isJsonSpace(b[i] as number)) i++;
    if (b[i] !== 0x3a /* : */) continue;
    i++;
    while (i < b.length && isJsonSpace(b[i] as number)) i++;
    if (b[i] !== 0x22 /* " */) continue;
    const start = i + 1;
    let escaped = false;
    let end = start;
    while (end < b.length && b[end] !== 0x22) {
      if (b[end] === 0x5c /* \\ */) {
        escaped = true;
        end++;
      }
      end++;
    }
    if (end >= b.length) continue; // no closing quote: no string
    const raw = b.toString('utf8', start, end);
    if (!escaped) out.push(raw);
    else {
      try {
        out.push(JSON.parse(`"${raw}"`) as string);
      } catch {
        // not a JSON string: the parse notes nothing of it
      }
    }
  }
}

/**
 * The first pass over a rollout: the file's session (the first `session_meta` with an id, or
 * the legacy first line; the file name when there is neither), and for every key a call can be
 * found by (`call_id`, a local_shell_call's `id`) the last line that names it. It keeps a number
 * per key, no text; it records any line that names a key in the envelope's payload or the
 * record itself, whatever else is wrong with it, so a superset of the lines the parser joins,
 * and a collision or a record the parser then rejects only makes it hold a call longer.
 */
export class RolloutIndex {
  private readonly lastLines = new LastLines();
  private readonly webSearch = new WebSearchPairing();
  private found: Session | undefined;

  constructor(private readonly path: string) {}

  scan(line: RawLine): void {
    if (this.found === undefined) {
      const read = readObject(line.text);
      if (!read.ok) return;
      this.found = sessionOfRecord(read.value);
      this.noteKeys(read.value, line.lineNo);
      return;
    }
    if (!mayNameCall(line)) return;
    const keys = line.bytes === undefined ? undefined : keysInBytes(line.bytes);
    if (keys !== undefined) {
      for (const k of keys) this.lastLines.note(k, line.lineNo);
      return;
    }
    const obj = parseObject(line.text);
    if (obj !== undefined) this.noteKeys(obj, line.lineNo);
  }

  private noteKeys(obj: JsonObject, lineNo: number): void {
    this.noteKeysOf(obj, lineNo);
    const payload = obj['payload'];
    if (isObject(payload)) this.noteKeysOf(payload, lineNo);
    // An id-less web_search_call takes its id from the web_search_end after it (web-search.ts).
    const env = readRolloutLine(obj);
    if (env?.type === 'response_item' && env.payload['type'] === 'web_search_call') this.webSearch.call(lineNo, env.payload);
    else if (env?.type === 'event_msg' && env.payload['type'] === 'web_search_end') this.webSearch.end(env.payload);
    else if (env === undefined && !('payload' in obj) && obj['type'] === 'web_search_call') this.webSearch.call(lineNo, obj);
  }

  /** The id the id-less web_search_call at `lineNo` takes from its web_search_end, if any. */
  webSearchIdAt(lineNo: number): string | undefined {
    return this.webSearch.idAt(lineNo);
  }

  private noteKeysOf(o: JsonObject, lineNo: number): void {
    const callId = o['call_id'];
    if (typeof callId === 'string') this.lastLines.note(callId, lineNo);
    const id = o['id'];
    if (o['type'] === 'local_shell_call' && typeof id === 'string') this.lastLines.note(id, lineNo);
  }

  /** The file's session (final once every line was scanned). */
  get session(): Session {
    return this.found ?? sessionOfName(this.path);
  }

  /** The last line that names `key` (0: none). */
  lastLineOf(key: string): number {
    return this.lastLines.last(key);
  }

  /** Keys noted (tests, benchmarks). */
  get keys(): number {
    return this.lastLines.size;
  }
}

/** A call written before its last line (the held bound): what a later line of it still finds. */
interface Released {
  /** Whether an output of it was read (a later one is a duplicate, as in the whole-file parse). */
  hadOutput: boolean;
  readonly until: number;
}

/** Options of a streaming parse (tests of the bound). */
export interface RolloutParseOptions {
  /** The held bound (MAX_HELD_CHARS unless a test wants it reached). */
  readonly maxHeldChars?: number;
}

/**
 * The streaming parser of one rollout: reads its lines in order with the same rules the
 * whole-file parse had, holds each call until the index says no later line names it, and hands
 * each event out, in the order of the lines that completed them, once no held call can still
 * come before it. It holds the calls waiting for their output (or an end event, or a copy of
 * the call that is counted as a duplicate) and the events after them: for a real rollout, a
 * few calls at a time (the parallel calls of a step).
 *
 * Past the held bound (ReleaseQueue), the held call that sorts first is written as it stands
 * (pending, or with the output it has) and counted `call_written_before_final`; a later line of
 * it that would have changed it (its output, an end event) is a malformed record
 * `call_already_written`, kept with its bytes instead of in the call's row; a copy of the call
 * or a second output stays a counted duplicate, as in the whole-file parse.
 */
export class RolloutParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  private readonly malformed: MalformedStream;
  private readonly queue: ReleaseQueue<CallState>;
  private readonly calls = new Map<string, { state: CallState; held: Held<CallState> }>();
  private readonly released = new Map<string, Released>();
  private session: Session | undefined;
  private model: string | undefined;
  private metaModel: string | undefined;
  private turnId = '';
  private contextWindowTokens: number | undefined;
  private lastTs: string | undefined;
  private previousTotal: TokenUsage | undefined;
  private sessionMetaSeen = false;
  /** The line of the file's first JSON object (a legacy meta elsewhere is another session's). */
  private firstRecordLine = 0;
  private lineNo = 0;

  constructor(
    private readonly path: string,
    private readonly index: RolloutIndex,
    output: ImportOutput,
    options: RolloutParseOptions = {},
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
    this.queue = new ReleaseQueue<CallState>((c, early) => this.finishCall(c, early), (e) => output.event(e), options.maxHeldChars);
  }

  /** Calls held and events waiting for them. */
  get heldItems(): number {
    return this.queue.heldItems;
  }

  /** The most the parser held at once, in characters (see MAX_HELD_CHARS). */
  get peakHeldChars(): number {
    return this.queue.peakChars;
  }

  line(line: RawLine): void {
    this.lineNo = line.lineNo;
    if (this.session === undefined) {
      // The first pass is over: the session is known, and its time is the time of lines without one.
      this.session = this.index.session;
      this.lastTs = this.session.ts;
    }
    const read = readObject(line.text);
    if (!read.ok) this.malformed.addLine(line, read.problem, read.detail);
    else {
      if (this.firstRecordLine === 0) this.firstRecordLine = line.lineNo;
      this.record(read.value, line);
    }
    this.queue.afterLine(line.lineNo);
    if (this.released.size > 0 && line.lineNo % 4096 === 0) for (const [key, r] of this.released) if (r.until <= line.lineNo) this.released.delete(key);
  }

  end(): void {
    this.queue.end();
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  private currentModel(): string {
    return this.model ?? this.metaModel ?? UNKNOWN_MODEL;
  }

  private sessionId(): string {
    return (this.session ?? this.index.session).id;
  }

  /** A line that names a call written early (the held bound), or undefined. */
  private releasedCall(key: string): Released | undefined {
    const r = this.released.get(key);
    if (r !== undefined && r.until < this.lineNo) {
      this.released.delete(key);
      return undefined;
    }
    return r;
  }

  private late(line: RawLine, callId: string, what: string): void {
    this.malformed.addLine(
      line,
      'call_already_written',
      `The ${what} of call ${JSON.stringify(callId)} came after the call was written: the streamed import held more than its bound of open calls and waiting events, and wrote the call as it stood. The line is kept here instead of in the call's row.`,
    );
  }

  private record(obj: JsonObject, line: RawLine): void {
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
            : this.lastTs !== undefined
              ? { ts: this.lastTs }
              : { ts: undefined, problem: 'no_timestamp', detail: 'The line has no `timestamp` and no earlier line gives one.' };
      if (own !== undefined) this.lastTs = own;
      switch (env.type) {
        case 'session_meta': {
          const meta = readSessionMeta(env.payload);
          if (meta === undefined) this.malformed.addLine(line, 'malformed:session_meta', sessionMetaFault(env.payload));
          // A second session_meta is the parent's, copied into a forked rollout with its history.
          else if (this.sessionMetaSeen) this.skip('session_meta:other');
          else {
            this.metaModel = meta.model;
            this.sessionMetaSeen = true;
          }
          return;
        }
        case 'turn_context': {
          const ctx = readTurnContext(env.payload);
          if (ctx.model !== undefined) this.model = ctx.model;
          if (ctx.turnId !== undefined) this.turnId = ctx.turnId;
          return;
        }
        case 'response_item':
          return this.onResponseItem(env.payload, line, time, true);
        case 'event_msg':
          return this.onEventMsg(env.payload, line, time);
        default:
          return this.skip(env.type);
      }
    }
    if (env !== undefined) return this.skip(`unknown:${env.type}`);
    if ('payload' in obj) {
      // An envelope whose payload is not an object: no legacy item has a payload member.
      return this.malformed.addLine(line, 'malformed:envelope', `\`payload\` is ${describeValue(obj['payload'])}, not an object.`);
    }
    // The legacy format: a bare first line, then bare ResponseItems and state snapshots. Its
    // records carry no timestamp: they all take the session's.
    if (isLegacyState(obj)) return this.skip('legacy:state');
    if (readLegacyMeta(obj)) {
      if (line.lineNo !== this.firstRecordLine) this.skip('legacy:meta_other');
      return;
    }
    if (typeof obj['type'] === 'string') {
      const time: LineTime = this.lastTs !== undefined ? { ts: this.lastTs } : { ts: undefined, problem: 'no_timestamp', detail: 'The legacy record has no time and the file has no session meta with a `timestamp`.' };
      return this.onResponseItem(obj, line, time, false);
    }
    // No `type`, no envelope, no legacy meta or state: nothing says what the record is.
    this.malformed.addLine(line, 'malformed:record', `\`type\` is ${describeValue(obj['type'])}, and the record is no envelope, legacy session meta or state.`);
  }

  private onResponseItem(p: JsonObject, line: RawLine, time: LineTime, envelope: boolean): void {
    const type = typeof p['type'] === 'string' ? p['type'] : '';
    if (TOOL_CALL_TYPES.has(type)) {
      const item = readToolCall(p);
      if (!item) return this.malformed.addLine(line, `malformed:${type}`, toolCallFault(p));
      if (time.ts === undefined) return this.malformed.addLine(line, time.problem, time.detail);
      return this.onToolCall(item, p, line, time.ts, envelope);
    }
    if (TOOL_OUTPUT_TYPES.has(type)) {
      const out = readToolOutput(p);
      if (out === undefined) return this.malformed.addLine(line, `malformed:${type}`, toolOutputFault(p));
      const open = this.calls.get(out.callId);
      if (open === undefined) {
        const released = this.releasedCall(out.callId);
        if (released === undefined) return this.skip('output_without_call');
        if (released.hadOutput) return this.skip('duplicate_output');
        released.hadOutput = true;
        return this.late(line, out.callId, 'output');
      }
      const call = open.state;
      if (call.output !== undefined) return this.skip('duplicate_output');
      call.output = { content: out.content, line: posOf(line) };
      this.queue.update(open.held, open.held.until, callCost(call));
      return;
    }
    // message, reasoning, ghost_snapshot, compaction, image_generation_call, …: not tool calls.
    this.skip(`response_item:${type || '(none)'}`);
  }

  private onToolCall(item: ToolCallItem, p: JsonObject, line: RawLine, ts: string, envelope: boolean): void {
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
    // A web_search_call without an id takes the one its web_search_end event carries (web-search.ts).
    const id = item.callId ?? (item.kind === 'web_search_call' ? this.index.webSearchIdAt(line.lineNo) : undefined);
    const callId = id ?? '';
    // A call without an id (some local_shell_call / web_search_call items) is known by its line.
    const eventKey = id ?? `line:${line.lineNo}`;
    const state: CallState = { tool, input, callId, eventKey, ts, model: this.currentModel(), turnId: this.turnId, line: posOf(line) };
    if (item.kind === 'web_search_call') {
      // Server-side: no output record follows; its own status is the outcome.
      const status = item.status === 'completed' ? 'ok' : item.status === 'failed' ? 'error' : 'pending';
      this.emitCall(state, { status }, state.line);
      return;
    }
    if (this.calls.has(eventKey) || this.releasedCall(eventKey) !== undefined) return this.skip('duplicate_call_id');
    const held = this.queue.hold(state, { a: line.lineNo, b: 0 }, this.index.lastLineOf(eventKey), callCost(state));
    this.calls.set(eventKey, { state, held });
  }

  private onTokenCount(p: JsonObject, line: RawLine, time: LineTime): void {
    const count = readTokenCount(p);
    if (count.kind === 'no_info') return this.skip('token_count:no_info');
    if (count.kind === 'invalid') return this.malformed.addLine(line, 'token_count:invalid', tokenCountFault(p));
    // The total stays the previous one: the next token_count's delta covers this request too.
    if (time.ts === undefined) return this.malformed.addLine(line, time.problem, time.detail);
    const ts = time.ts;
    const delta = tokenDelta(count.total, this.previousTotal);
    this.previousTotal = count.total;
    if (delta === undefined) return this.skip('token_count:repeated');
    const window = count.contextWindowTokens ?? this.contextWindowTokens;
    const session = this.sessionId();
    const fields: UsageFields = {
      event_id: stableEventId('codex', session, `token_count:${line.lineNo}`),
      ts,
      harness: 'codex',
      session_id: session,
      ...(this.turnId === '' ? {} : { turn_id: this.turnId }),
      model: this.currentModel(),
      request_id: `${session}:${line.lineNo}`,
      input_tokens: delta.input_tokens,
      output_tokens: delta.output_tokens,
      cache_read_tokens: delta.cached_input_tokens,
      reasoning_tokens: delta.reasoning_output_tokens,
      ...(delta.cache_write_input_tokens === undefined ? {} : { cache_write_tokens: delta.cache_write_input_tokens }),
      ...(window === undefined ? {} : { context_window_tokens: window }),
    };
    this.emit(posOf(line), usageEnvelope(fields));
  }

  private onEventMsg(p: JsonObject, line: RawLine, time: LineTime): void {
    const type = typeof p['type'] === 'string' ? p['type'] : '';
    if (type === 'token_count') return this.onTokenCount(p, line, time);
    if (type === 'task_started' || type === 'turn_started') {
      const started = readTaskStarted(p);
      if (started.turnId !== undefined) this.turnId = started.turnId;
      if (started.contextWindowTokens !== undefined) this.contextWindowTokens = started.contextWindowTokens;
      return;
    }
    if (END_EVENT_TYPES.has(type)) {
      const end = readCallEnd(p);
      if (end === undefined) return this.malformed.addLine(line, `malformed:${type}`, `\`payload.call_id\` of a ${type} is ${describeValue(p['call_id'])}, not a non-empty string.`);
      const open = this.calls.get(end.callId);
      // An end event of a call this file does not hold (a resumed session's earlier file, or a
      // call Codex did not persist): like an output without its call, nothing to attach it to.
      if (open === undefined) {
        if (this.releasedCall(end.callId) !== undefined) return this.late(line, end.callId, `${type} event`);
        return this.skip(`event_msg:${type}:without_call`);
      }
      open.state.end = { end, line: posOf(line) };
      return;
    }
    this.skip(`event_msg:${type || '(none)'}`);
  }

  /** An event completed by `line`: events are in the order of the lines that completed them. */
  private emit(line: LinePos, envelope: Envelope): void {
    this.queue.ready({ a: line.lineNo, b: 0 }, { envelope, source: `${this.path}:${line.lineNo}`, endOffset: line.endOffset });
  }

  private emitCall(c: CallState, outcome: { status: 'ok' | 'error' | 'pending'; error?: string; durationMs?: number }, completedBy: LinePos): void {
    const content = c.output?.content;
    let images = content?.images ?? 0;
    // view_image attaches the picture as a separate input message; it belongs to this call.
    if (c.tool === 'view_image' && outcome.status === 'ok' && images === 0) images = 1;
    const session = this.sessionId();
    const fields: ToolCallFields = {
      event_id: stableEventId('codex', session, c.eventKey),
      ts: c.ts,
      harness: 'codex',
      session_id: session,
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
    const { envelope: text, truncated } = toolCallEnvelopeWithin(fields, c.input);
    if (truncated) this.skip('output_truncated');
    this.emit(completedBy, text);
  }

  /** A held call no later line names (or, `early`, one the bound makes the parser write now). */
  private finishCall(c: CallState, early: boolean): void {
    this.calls.delete(c.eventKey);
    if (early) {
      this.skip('call_written_before_final');
      this.released.set(c.eventKey, { hadOutput: c.output !== undefined, until: this.index.lastLineOf(c.eventKey) });
    }
    if (c.output === undefined) {
      // No output yet (the call is running, or the session died): pending, completed by its own line.
      this.emitCall(c, mergePending(c.end), c.end?.line ?? c.line);
      return;
    }
    const outcome = mergeEnd(parseCallOutcome(c.tool, c.output.content), c.end?.end);
    const last = c.end !== undefined && c.end.line.lineNo > c.output.line.lineNo ? c.end.line : c.output.line;
    this.emitCall(c, outcome, last);
  }
}

/** What a held call keeps: its input and output texts. */
function callCost(c: CallState): number {
  const input = 'json' in c.input ? c.input.json : c.input.string;
  return input.length + (c.output?.content.text.length ?? 0);
}

/** A call without an output: still pending, unless an end event already told how it ended. */
function mergePending(end: { readonly end: CallEnd } | undefined): { status: 'ok' | 'error' | 'pending'; error?: string; durationMs?: number } {
  if (end === undefined || end.end.failed === undefined) return { status: 'pending' };
  return mergeEnd({ status: end.end.failed ? 'error' : 'ok' }, end.end);
}

/** The streaming reading of one rollout: the first pass fills the index the parser uses. */
export function rolloutReading(path: string, options: RolloutParseOptions = {}): LineReading & { readonly index: RolloutIndex } {
  const index = new RolloutIndex(path);
  return {
    index,
    scan: (line) => index.scan(line),
    parser: (output) => new RolloutParser(path, index, output, options),
  };
}

/** Parses a whole rollout held in memory (both passes over its bytes): what `parseFile` returns. */
export function parseRollout(path: string, data: Buffer, options: RolloutParseOptions = {}): ParsedFile {
  return parseLinesWith(rolloutReading(path, options), data);
}
