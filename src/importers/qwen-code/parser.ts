// Turns one Qwen Code chat recording (`chats/<session id>.jsonl`, one ChatRecord a line,
// appended once and never rewritten) into toolcanon events: a usage event per assistant record
// with `usageMetadata`, a tool_call per `functionCall` part joined to the `tool_result` record
// of the same call id. Streaming: a call is held until its result arrives (or the file ends,
// then it is `pending`); a usage is handed out at its own line. Never throws on a bad record.
import { DEFAULT_LIMITS } from '../../decode/limits.ts';
import { findSpan, skipValue } from '../../util/json-spans.ts';
import { errorSummary, normaliseTimestamp, type RawToolInput, stableEventId, type ToolCallFields, toolCallEnvelopeWithin, type UsageFields, usageEnvelope } from '../envelope.ts';
import { describeValue, MalformedStream, readObject, type RawLine } from '../lines.ts';
import { parseLinesWith } from '../stream.ts';
import type { ImportOutput, LineParser, LineReading, ParsedFile } from '../types.ts';
import { fileStem } from './paths.ts';
import { functionCallsOf, isRecordType, readToolResult, readUsage, thoughtsApart, type ToolResult } from './types.ts';
import { idFault, idMember, isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';

const HARNESS = 'qwen_code';

/**
 * Deepest `args` the events carry: the envelope is depth 1 and `input` sits in it, so args
 * nested past the decoder's default --max-depth would make an event it refuses. Such a call is
 * a malformed record instead (its line is kept whole, as a dead letter).
 */
const MAX_ARGS_DEPTH = DEFAULT_LIMITS.maxDepth - 1;


/** Where a raw line is, for an event's source and its end offset. */
interface LinePos {
  readonly lineNo: number;
  readonly endOffset: number;
}

/** A call read from an assistant record, waiting for its tool_result. */
interface PendingCall {
  readonly id: string;
  readonly name: string;
  readonly sessionId: string;
  readonly agentId: string | undefined;
  readonly turnId: string;
  readonly model: string | undefined;
  readonly ts: string;
  readonly input: RawToolInput;
  readonly line: LinePos;
}

/** A record's time, or the malformed record's problem and detail. */
function readTime(o: JsonObject): { ts: string } | { problem: string; detail: string } {
  const v = o['timestamp'];
  const ts = typeof v === 'string' ? normaliseTimestamp(v) : undefined;
  if (ts !== undefined) return { ts };
  if (v === undefined || v === null) return { problem: 'no_timestamp', detail: '`timestamp` is missing: the record cannot be placed in time.' };
  return { problem: 'bad_timestamp', detail: `\`timestamp\` is ${describeValue(v)}, not an RFC 3339 time.` };
}

/** Milliseconds from the call's record to its result's, when both are times and in order. */
function durationMs(from: string, to: string): number | undefined {
  const d = Date.parse(to) - Date.parse(from);
  return Number.isSafeInteger(d) && d >= 0 ? d : undefined;
}

/** The envelope status and error of a call from its result. */
export function callOutcome(result: Pick<ToolResult, 'status' | 'error'>): { status: 'ok' | 'error' | 'pending'; error?: string } {
  const summary = result.error === undefined ? '' : errorSummary(result.error);
  switch (result.status) {
    case 'success':
      return { status: 'ok' };
    case 'error':
      return { status: 'error', error: summary === '' ? 'error' : summary };
    case 'cancelled':
      return { status: 'error', error: summary === '' ? 'cancelled' : `cancelled: ${summary}` };
    case undefined:
      // No toolCallResult: the functionResponse alone says whether the call failed.
      return result.error === undefined ? { status: 'ok' } : { status: 'error', error: summary === '' ? 'error' : summary };
    default:
      // validating, scheduled, executing, awaiting_approval: the call had not finished.
      return { status: 'pending' };
  }
}

export interface QwenContext {
  readonly path: string;
}

/** The streaming parser of one recording (see the file comment and README.md). */
export class QwenParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  private readonly malformed: MalformedStream;
  private readonly calls = new Map<string, PendingCall>();
  /** Call ids already handed out with a result: a second result or call of the same id is a repeat. */
  private readonly done = new Set<string>();
  /** The last prompt of each agent (main: ''), the turn of the records after it. */
  private readonly turns = new Map<string, string>();
  private readonly fallbackSession: string;

  constructor(
    private readonly context: QwenContext,
    private readonly output: ImportOutput,
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
    this.fallbackSession = fileStem(context.path);
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
    if (!isRecordType(type)) {
      if (typeof type === 'string' && type !== '') return this.skip(`unknown_type:${type.slice(0, 64)}`);
      return this.malformed.addLine(line, 'malformed:record', `\`type\` is ${describeValue(type)}, not a record type (user, assistant, tool_result, system).`);
    }
    if (type === 'system') return this.skip(typeof o['subtype'] === 'string' && o['subtype'] !== '' ? `system:${o['subtype'].slice(0, 64)}` : 'system');
    // `/branch` copies the parent's records into the new session, each marked `forkedFrom`:
    // their requests and calls are the parent's, already read from its own file.
    if (isObject(o['forkedFrom'])) return this.skip('forked_copy');
    const sessionId = o['sessionId'] === undefined ? this.fallbackSession : idMember(o, 'sessionId');
    if (sessionId === undefined) return this.malformed.addLine(line, 'malformed:session_id', idFault(o, 'sessionId'));
    const agent = o['agentId'];
    if (agent !== undefined && agent !== null && idMember(o, 'agentId') === undefined) return this.malformed.addLine(line, 'malformed:agent_id', idFault(o, 'agentId'));
    const agentId = idMember(o, 'agentId');
    if (type === 'user') return this.readUser(o, agentId);
    if (type === 'assistant') return this.readAssistant(line, text, o, sessionId, agentId);
    return this.readToolResult(line, o);
  }

  /** A prompt (a user record without subtype) starts a turn; notifications, cron and mid-turn input continue it. */
  private readUser(o: JsonObject, agentId: string | undefined): void {
    if (o['subtype'] !== undefined && o['subtype'] !== null) return;
    const uuid = idMember(o, 'uuid');
    if (uuid !== undefined) this.turns.set(agentId ?? '', uuid);
  }

  private readAssistant(line: RawLine, text: string, o: JsonObject, sessionId: string, agentId: string | undefined): void {
    const model = o['model'];
    if (model !== undefined && model !== null && (typeof model !== 'string' || model.length > MAX_ID_CHARS)) return this.malformed.addLine(line, 'malformed:assistant', idFault(o, 'model'));
    const calls = functionCallsOf(o['message']);
    const hasUsage = o['usageMetadata'] !== undefined && o['usageMetadata'] !== null;
    if (!hasUsage && calls.length === 0) return this.skip('assistant_without_usage_or_calls');
    const time = readTime(o);
    if (!('ts' in time)) return this.malformed.addLine(line, time.problem, time.detail);
    // A subagent without a prompt of its own works inside the main agent's turn.
    const turnId = this.turns.get(agentId ?? '') ?? this.turns.get('') ?? '';
    const modelName = typeof model === 'string' && model !== '' ? model : undefined;
    const pos: LinePos = { lineNo: line.lineNo, endOffset: line.endOffset };
    if (hasUsage) this.readUsage(line, o, { sessionId, agentId, turnId, model: modelName, ts: time.ts });
    for (const call of calls) {
      if ('fault' in call) {
        this.malformed.addLine(line, 'malformed:function_call', call.fault);
        continue;
      }
      if (this.calls.has(call.id) || this.done.has(call.id)) {
        this.skip('repeated_call');
        continue;
      }
      const span = call.hasArgs ? findSpan(text, ['message', 'parts', call.partIndex, 'functionCall', 'args']) : undefined;
      const depth = span ? skipValue(text, span.start).depth : 0;
      if (depth > MAX_ARGS_DEPTH) {
        this.malformed.addLine(line, 'too_deep', `\`message.parts[${call.partIndex}].functionCall.args\` is nested ${depth} levels deep, more than the ${MAX_ARGS_DEPTH} an event takes.`);
        continue;
      }
      const input: RawToolInput = span ? { json: text.slice(span.start, span.end) } : { json: '{}' };
      this.calls.set(call.id, { id: call.id, name: call.name, sessionId, agentId, turnId, model: modelName, ts: time.ts, input, line: pos });
    }
  }

  private readUsage(line: RawLine, o: JsonObject, at: { sessionId: string; agentId: string | undefined; turnId: string; model: string | undefined; ts: string }): void {
    const usage = readUsage(o['usageMetadata']);
    if (usage === 'no_breakdown') return this.skip('usage_without_breakdown');
    if ('fault' in usage) return this.malformed.addLine(line, 'malformed:usage', usage.fault);
    const uuid = idMember(o, 'uuid');
    if (uuid === undefined) return this.malformed.addLine(line, 'malformed:usage', `${idFault(o, 'uuid')} The usage cannot be identified without it.`);
    const windowSize = o['contextWindowSize'];
    const fields: UsageFields = {
      event_id: stableEventId(HARNESS, at.sessionId, 'usage', uuid),
      ts: at.ts,
      harness: HARNESS,
      session_id: at.sessionId,
      ...(at.agentId === undefined ? {} : { agent_id: at.agentId }),
      ...(at.turnId === '' ? {} : { turn_id: at.turnId }),
      ...(at.model === undefined ? {} : { model: at.model }),
      request_id: uuid,
      // Tool-use prompt tokens (Gemini path only) are input beside the prompt, not inside it.
      input_tokens: usage.prompt + usage.toolUsePrompt,
      // USAGE_CONVENTIONS.qwen_code: output includes the reasoning. The OpenAI-compatible path
      // logs it so; the Gemini path logs the thoughts apart, added here.
      output_tokens: thoughtsApart(usage) ? usage.candidates + usage.thoughts : usage.candidates,
      cache_read_tokens: usage.cached,
      reasoning_tokens: usage.thoughts,
      ...(typeof windowSize === 'number' && Number.isSafeInteger(windowSize) && windowSize > 0 ? { context_window_tokens: windowSize } : {}),
    };
    this.output.event({ envelope: usageEnvelope(fields), source: `${this.context.path}:${line.lineNo}`, endOffset: line.endOffset });
  }

  private readToolResult(line: RawLine, o: JsonObject): void {
    const result = readToolResult(o);
    if ('fault' in result) return this.malformed.addLine(line, 'malformed:tool_result', result.fault);
    const call = this.calls.get(result.callId);
    if (call === undefined) return this.skip(this.done.has(result.callId) ? 'repeated_tool_result' : 'tool_result_without_call');
    const time = readTime(o);
    if (!('ts' in time)) return this.malformed.addLine(line, time.problem, time.detail);
    this.calls.delete(call.id);
    this.done.add(call.id);
    this.emitCall(call, result, time.ts, { lineNo: line.lineNo, endOffset: line.endOffset });
  }

  private emitCall(call: PendingCall, result: ToolResult | undefined, resultTs: string | undefined, completedBy: LinePos): void {
    const base = {
      event_id: stableEventId(HARNESS, call.sessionId, 'tool', call.id),
      ts: call.ts,
      harness: HARNESS,
      session_id: call.sessionId,
      ...(call.agentId === undefined ? {} : { agent_id: call.agentId }),
      ...(call.turnId === '' ? {} : { turn_id: call.turnId }),
      call_id: call.id,
      ...(call.model === undefined ? {} : { model: call.model }),
      tool: call.name,
    } as const;
    let fields: ToolCallFields;
    if (result === undefined) fields = { ...base, status: 'pending' };
    else {
      const outcome = callOutcome(result);
      const duration = resultTs === undefined ? undefined : durationMs(call.ts, resultTs);
      fields = {
        ...base,
        status: outcome.status,
        ...(result.text === undefined ? {} : { output: result.text }),
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
        ...(duration === undefined ? {} : { duration_ms: duration }),
        ...(result.images > 0 ? { images: Math.min(result.images, 10_000) } : {}),
      };
    }
    const { envelope, truncated } = toolCallEnvelopeWithin(fields, call.input);
    if (truncated) this.skip('output_truncated');
    this.output.event({ envelope, source: `${this.context.path}:${completedBy.lineNo}`, endOffset: completedBy.endOffset });
  }

  end(): void {
    // Calls without a result: still running when the file was read, or the session ended
    // before the result was recorded. A later import re-emits them once the result is there.
    for (const call of this.calls.values()) this.emitCall(call, undefined, undefined, call.line);
    this.calls.clear();
  }
}

/** How one recording is read: one streaming pass. */
export function qwenReading(context: QwenContext): LineReading {
  return { parser: (output) => new QwenParser(context, output) };
}

/** Parses a whole recording held in memory (tests, and callers that hold the bytes). */
export function parseQwenFile(path: string, data: Buffer): ParsedFile {
  return parseLinesWith(qwenReading({ path }), data);
}
