// Turns one pi session file (`<time>_<session id>.jsonl`: a header, then one entry a line,
// appended once) into toolcanon events: a usage event per assistant message with usage, a
// tool_call per `toolCall` block joined to the `toolResult` message of the same call id.
// Streaming: a call is held until its result arrives (or the file ends, then it is `pending`);
// a usage, and the calls of a response that stopped with `error` or `aborted` (they never
// run), are handed out at their own line. Never throws on a bad record.
import { DEFAULT_LIMITS } from '../../decode/limits.ts';
import { findSpan, skipValue } from '../../util/json-spans.ts';
import { errorSummary, normaliseTimestamp, type RawToolInput, stableEventId, type ToolCallFields, toolCallEnvelopeWithin, type UsageFields, usageEnvelope } from '../envelope.ts';
import { idFault, idMember, isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';
import { describeValue, MalformedStream, readObject, type RawLine } from '../lines.ts';
import { parseLinesWith } from '../stream.ts';
import type { ImportOutput, LineParser, LineReading, ParsedFile } from '../types.ts';
import { sessionOfFileName } from './paths.ts';
import { cacheInsideInput, isCountedType, isZero, readToolResult, readUsage, toolCallsOf, type ToolResult } from './types.ts';

/** Deepest `arguments` the events carry (the envelope is depth 1, `input` sits in it). */
const MAX_ARGS_DEPTH = DEFAULT_LIMITS.maxDepth - 1;

interface LinePos {
  readonly lineNo: number;
  readonly endOffset: number;
}

/** A call read from an assistant message, waiting for its toolResult. */
interface PendingCall {
  readonly id: string;
  readonly name: string;
  readonly turnId: string;
  readonly model: string | undefined;
  readonly ts: string;
  readonly input: RawToolInput;
  readonly line: LinePos;
}

/** An entry's time: its ISO `timestamp`, else its message's `timestamp` in milliseconds. */
function readTime(entry: JsonObject, message: JsonObject | undefined): { ts: string } | { problem: string; detail: string } {
  const v = entry['timestamp'];
  const ts = typeof v === 'string' ? normaliseTimestamp(v) : undefined;
  if (ts !== undefined) return { ts };
  const ms = message?.['timestamp'];
  if (typeof ms === 'number' && Number.isSafeInteger(ms) && ms > 0 && ms < 253402300800000) return { ts: new Date(ms).toISOString() };
  if (v === undefined || v === null) return { problem: 'no_timestamp', detail: '`timestamp` is missing (and `message.timestamp` is no time in milliseconds): the record cannot be placed in time.' };
  return { problem: 'bad_timestamp', detail: `\`timestamp\` is ${describeValue(v)}, not an RFC 3339 time.` };
}

/** Milliseconds from the call's entry to its result's, when both are times and in order. */
function durationMs(from: string, to: string): number | undefined {
  const d = Date.parse(to) - Date.parse(from);
  return Number.isSafeInteger(d) && d >= 0 ? d : undefined;
}

/** The envelope status and error of a call from its result. */
export function callOutcome(result: Pick<ToolResult, 'isError' | 'text' | 'error'>): { status: 'ok' | 'error'; error?: string } {
  if (!result.isError) return { status: 'ok' };
  const said = result.error ?? result.text;
  const summary = said === undefined ? '' : errorSummary(said);
  return { status: 'error', error: summary === '' ? 'error' : summary };
}

export interface PiContext {
  readonly path: string;
  /** The harness the events name: pi itself, or a runtime that embeds its session manager (OpenClaw). Default pi_agent. */
  readonly harness?: 'pi_agent' | 'openclaw';
  /** The session of a file without a readable header, from its name (default: pi's `<time>_<session id>.jsonl`). */
  readonly sessionOfFile?: (path: string) => string;
}

/** The streaming parser of one session file (see the file comment and README.md). */
export class PiParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  private readonly malformed: MalformedStream;
  private readonly calls = new Map<string, PendingCall>();
  /** Call ids already handed out final: a second result or call of the same id is a repeat. */
  private readonly done = new Set<string>();
  /** Usage keys seen, for the `#n` suffix of a repeated one. */
  private readonly usageKeys = new Map<string, number>();
  private sessionId: string;
  /** The fork time of a file whose header names a parentSession: older entries are copies. */
  private forkedAt: number | undefined;
  private turnId = '';
  private readonly harness: 'pi_agent' | 'openclaw';

  constructor(
    private readonly context: PiContext,
    private readonly output: ImportOutput,
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
    this.sessionId = (context.sessionOfFile ?? sessionOfFileName)(context.path);
    this.harness = context.harness ?? 'pi_agent';
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  line(line: RawLine): void {
    const text = line.lineNo === 1 && line.text.charCodeAt(0) === 0xfeff ? line.text.slice(1) : line.text;
    const reading = readObject(text);
    if (!reading.ok) return this.malformed.addLine(line, reading.problem, reading.detail);
    const o = reading.value;
    const type = o['type'];
    if (typeof type !== 'string' || type === '') return this.malformed.addLine(line, 'malformed:record', `\`type\` is ${describeValue(type)}, not an entry type (session, message, …).`);
    if (type === 'session') return this.readHeader(line, o);
    // A fork's copies of the parent's entries keep their own (older) times.
    if (this.forkedAt !== undefined && typeof o['timestamp'] === 'string' && Date.parse(o['timestamp']) < this.forkedAt) return this.skip('forked_copy');
    if (type !== 'message') return this.skip(isCountedType(type) ? type : `unknown_type:${type.slice(0, 64)}`);
    const message = o['message'];
    if (!isObject(message) || typeof message['role'] !== 'string') {
      return this.malformed.addLine(line, 'malformed:message', isObject(message) ? `\`message.role\` is ${describeValue(message['role'])}, not a string.` : `\`message\` is ${describeValue(message)}, not an object.`);
    }
    const role = message['role'];
    if (role === 'user') return this.readUser(o, message);
    if (role === 'assistant') return this.readAssistant(line, text, o, message);
    if (role === 'toolResult') return this.readToolResult(line, o, message);
    this.skip(`message:${role.slice(0, 64)}`);
  }

  private readHeader(line: RawLine, o: JsonObject): void {
    if (o['id'] !== undefined && o['id'] !== null) {
      const id = idMember(o, 'id');
      if (id === undefined) return this.malformed.addLine(line, 'malformed:session_id', idFault(o, 'id'));
      this.sessionId = id;
    }
    const at = typeof o['timestamp'] === 'string' ? Date.parse(o['timestamp']) : NaN;
    this.forkedAt = typeof o['parentSession'] === 'string' && o['parentSession'] !== '' && !Number.isNaN(at) ? at : undefined;
  }

  /** A prompt starts a turn, named by its time in milliseconds (entry ids change on a migration rewrite). */
  private readUser(o: JsonObject, message: JsonObject): void {
    const ms = message['timestamp'];
    if (typeof ms === 'number' && Number.isSafeInteger(ms)) this.turnId = String(ms);
    else if (typeof o['timestamp'] === 'string' && o['timestamp'] !== '') this.turnId = o['timestamp'].slice(0, MAX_ID_CHARS);
  }

  private readAssistant(line: RawLine, text: string, o: JsonObject, message: JsonObject): void {
    const model = message['model'];
    if (model !== undefined && model !== null && (typeof model !== 'string' || model.length > MAX_ID_CHARS)) return this.malformed.addLine(line, 'malformed:assistant', idFault(message, 'model', 'message.'));
    const calls = toolCallsOf(message);
    const hasUsage = message['usage'] !== undefined && message['usage'] !== null;
    if (!hasUsage && calls.length === 0) return this.skip('assistant_without_usage_or_calls');
    const time = readTime(o, message);
    if (!('ts' in time)) return this.malformed.addLine(line, time.problem, time.detail);
    const modelName = typeof model === 'string' && model !== '' ? model : undefined;
    const pos: LinePos = { lineNo: line.lineNo, endOffset: line.endOffset };
    if (hasUsage) this.readUsage(line, o, message, modelName, time.ts, calls.length > 0);
    // The agent loop ends the turn on a response that stopped with error or aborted: its calls never ran.
    const stop = message['stopReason'];
    const notRun = stop === 'error' || stop === 'aborted';
    for (const call of calls) {
      if ('fault' in call) {
        this.malformed.addLine(line, 'malformed:tool_call', call.fault);
        continue;
      }
      if (this.calls.has(call.id) || this.done.has(call.id)) {
        this.skip('repeated_call');
        continue;
      }
      const span = call.hasArgs ? findSpan(text, ['message', 'content', call.index, 'arguments']) : undefined;
      const depth = span ? skipValue(text, span.start).depth : 0;
      if (depth > MAX_ARGS_DEPTH) {
        this.malformed.addLine(line, 'too_deep', `\`message.content[${call.index}].arguments\` is nested ${depth} levels deep, more than the ${MAX_ARGS_DEPTH} an event takes.`);
        continue;
      }
      const input: RawToolInput = span ? { json: text.slice(span.start, span.end) } : { json: '{}' };
      const pending: PendingCall = { id: call.id, name: call.name, turnId: this.turnId, model: modelName, ts: time.ts, input, line: pos };
      if (notRun) {
        const said = typeof message['errorMessage'] === 'string' ? errorSummary(message['errorMessage']) : '';
        this.done.add(call.id);
        this.emitCall(pending, { status: 'error', error: `${stop}: ${said === '' ? `the response stopped (${stop}) before the tool ran` : said}` }, undefined, pos);
        continue;
      }
      this.calls.set(call.id, pending);
    }
  }

  private readUsage(line: RawLine, o: JsonObject, message: JsonObject, model: string | undefined, ts: string, hasCalls: boolean): void {
    const usage = readUsage(message['usage']);
    if ('fault' in usage) return this.malformed.addLine(line, 'malformed:usage', usage.fault);
    if (isZero(usage)) {
      if (!hasCalls) this.skip('usage_zero');
      return;
    }
    // The message's own time in milliseconds names the request; entry ids are not stable (trap 4).
    const ms = message['timestamp'];
    const base = typeof ms === 'number' && Number.isSafeInteger(ms) ? String(ms) : typeof o['timestamp'] === 'string' ? o['timestamp'].slice(0, 200) : `line-${line.lineNo}`;
    const seen = (this.usageKeys.get(base) ?? 0) + 1;
    this.usageKeys.set(base, seen);
    const key = seen === 1 ? base : `${base}#${seen}`;
    const inside = cacheInsideInput(usage);
    const fields: UsageFields = {
      event_id: stableEventId(this.harness, this.sessionId, 'usage', key),
      ts,
      harness: this.harness,
      session_id: this.sessionId,
      ...(this.turnId === '' ? {} : { turn_id: this.turnId }),
      ...(model === undefined ? {} : { model }),
      request_id: key,
      // USAGE_CONVENTIONS.pi_agent: input without the cache; the Google paths log it inside.
      input_tokens: inside ? usage.input - usage.cacheRead : usage.input,
      output_tokens: usage.output,
      cache_read_tokens: usage.cacheRead,
      cache_write_tokens: usage.cacheWrite,
    };
    this.output.event({ envelope: usageEnvelope(fields), source: `${this.context.path}:${line.lineNo}`, endOffset: line.endOffset });
  }

  private readToolResult(line: RawLine, o: JsonObject, message: JsonObject): void {
    const result = readToolResult(message);
    if ('fault' in result) return this.malformed.addLine(line, 'malformed:tool_result', result.fault);
    const call = this.calls.get(result.callId);
    if (call === undefined) return this.skip(this.done.has(result.callId) ? 'repeated_tool_result' : 'tool_result_without_call');
    const time = readTime(o, message);
    if (!('ts' in time)) return this.malformed.addLine(line, time.problem, time.detail);
    this.calls.delete(call.id);
    this.done.add(call.id);
    const outcome = callOutcome(result);
    this.emitCall(call, { ...outcome, ...(result.text === undefined ? {} : { output: result.text }), images: result.images }, durationMs(call.ts, time.ts), { lineNo: line.lineNo, endOffset: line.endOffset });
  }

  private emitCall(call: PendingCall, outcome: { status: 'ok' | 'error' | 'pending'; error?: string; output?: string; images?: number } | undefined, duration: number | undefined, completedBy: LinePos): void {
    const fields: ToolCallFields = {
      event_id: stableEventId(this.harness, this.sessionId, 'tool', call.id),
      ts: call.ts,
      harness: this.harness,
      session_id: this.sessionId,
      ...(call.turnId === '' ? {} : { turn_id: call.turnId }),
      call_id: call.id,
      ...(call.model === undefined ? {} : { model: call.model }),
      tool: call.name,
      status: outcome?.status ?? 'pending',
      ...(outcome?.output === undefined ? {} : { output: outcome.output }),
      ...(outcome?.error === undefined ? {} : { error: outcome.error }),
      ...(duration === undefined ? {} : { duration_ms: duration }),
      ...(outcome?.images !== undefined && outcome.images > 0 ? { images: Math.min(outcome.images, 10_000) } : {}),
    };
    const { envelope, truncated } = toolCallEnvelopeWithin(fields, call.input);
    if (truncated) this.skip('output_truncated');
    this.output.event({ envelope, source: `${this.context.path}:${completedBy.lineNo}`, endOffset: completedBy.endOffset });
  }

  end(): void {
    // Calls without a result: still running when the file was read, or the session ended
    // before the result was written. A later import re-emits them once the result is there.
    for (const call of this.calls.values()) this.emitCall(call, undefined, undefined, call.line);
    this.calls.clear();
  }
}

/** How one session file is read: one streaming pass. */
export function piReading(context: PiContext): LineReading {
  return { parser: (output) => new PiParser(context, output) };
}

/** Parses a whole session file held in memory (tests, and callers that hold the bytes). */
export function parsePiFile(path: string, data: Buffer): ParsedFile {
  return parseLinesWith(piReading({ path }), data);
}
