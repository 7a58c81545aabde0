// Turns one Kimi wire log (`wire.jsonl`, appended a record a line) into toolcanon events. Both
// generations are read by one parser, record by record (a file holds one of them):
// - Kimi Code (flat records `{type, …, time}`): a usage event per `usage.record`, whatever its
//   `usageScope` (a compaction request is `session`); `step.end` repeats the turn's records and
//   only lends its `messageId`; a tool_call per `tool.call` loop event joined to its `tool.result`.
// - Kimi CLI (`{timestamp, message: {type, payload}}`): a usage event per `StatusUpdate` with
//   `token_usage`, once per `message_id`; a tool_call per `ToolCall` (its `ToolCallPart`s appended
//   to its arguments) joined to its `ToolResult`. A subagent's StatusUpdates are forwarded into
//   the parent's log as `SubagentEvent`s and written to its own log too: both give the same event
//   id (session and message_id), so the store keeps one.
// Streaming: a call is held until its result (or the file's end: `pending`); a usage is handed
// out at its own line. Never throws on a bad record.
import { DEFAULT_LIMITS } from '../../decode/limits.ts';
import { findSpan, skipValue } from '../../util/json-spans.ts';
import { errorSummary, type RawToolInput, stableEventId, type ToolCallFields, toolCallEnvelopeWithin, type UsageFields, usageEnvelope } from '../envelope.ts';
import { idFault, idMember, isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';
import { describeValue, MalformedStream, readObject, type RawLine } from '../lines.ts';
import { parseLinesWith } from '../stream.ts';
import type { ImportOutput, LineParser, LineReading, ParsedFile } from '../types.ts';
import { placeOf, type WirePlace } from './paths.ts';
import { CONTEXT_TYPES, isZero, type KimiUsage, msTime, outputText, readUsage, secondsTime, toolName } from './types.ts';

/** Deepest `args` the events carry (the envelope is depth 1, `input` sits in it). */
const MAX_ARGS_DEPTH = DEFAULT_LIMITS.maxDepth - 1;

interface LinePos {
  readonly lineNo: number;
  readonly endOffset: number;
}

/** A call waiting for its result. */
interface PendingCall {
  readonly id: string;
  readonly name: string;
  readonly turnId: string;
  readonly model: string | undefined;
  readonly ts: string;
  /** Kimi Code: the args' JSON text; legacy: the arguments text, parts appended. */
  input: RawToolInput | { readonly parts: string[] };
  readonly line: LinePos;
}

interface Outcome {
  readonly status: 'ok' | 'error';
  readonly output?: string;
  readonly error?: string;
}

export class KimiParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  private readonly malformed: MalformedStream;
  private readonly calls = new Map<string, PendingCall>();
  private readonly done = new Set<string>();
  private readonly usageKeys = new Map<string, number>();
  private readonly place: WirePlace;
  private readonly agent: string;
  private turnId = '';
  private legacyTurns = 0;
  private model: string | undefined;
  /** Kimi Code: the last `step.end` (its messageId names the usage.record that repeats its usage). */
  private stepEnd: { messageId: string; usage: KimiUsage } | undefined;
  /** Legacy: the call the next ToolCallPart extends. */
  private lastCall: string | undefined;

  constructor(
    private readonly path: string,
    private readonly output: ImportOutput,
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
    this.place = placeOf(path);
    this.agent = this.place.agentId ?? 'main';
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  private turn(raw: unknown): string {
    const t = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : typeof raw === 'string' && raw !== '' ? raw.slice(0, 64) : '';
    if (t === '') return '';
    return this.place.agentId === undefined ? t : `${this.place.agentId}/${t}`;
  }

  line(line: RawLine): void {
    const text = line.lineNo === 1 && line.text.charCodeAt(0) === 0xfeff ? line.text.slice(1) : line.text;
    const reading = readObject(text);
    if (!reading.ok) return this.malformed.addLine(line, reading.problem, reading.detail);
    const o = reading.value;
    // Kimi CLI's records have no top-level `type` (Kimi Code's context.append_message has a `message` too).
    if (o['type'] === undefined && o['message'] !== undefined) return this.readLegacy(line, o);
    const type = o['type'];
    if (typeof type !== 'string' || type === '') return this.malformed.addLine(line, 'malformed:record', `\`type\` is ${describeValue(type)}, not a record type.`);
    if (type === 'context.append_loop_event') return this.readLoopEvent(line, text, o);
    if (type === 'usage.record') return this.readUsageRecord(line, o);
    if (type === 'llm.request') {
      const m = o['modelAlias'] ?? o['model'];
      if (typeof m === 'string' && m !== '' && m.length <= MAX_ID_CHARS) this.model = m;
    }
    this.skip(CONTEXT_TYPES.has(type) ? type : `unknown_type:${type.slice(0, 64)}`);
  }

  // ------------------------------------------------------------------------------ Kimi Code

  private readLoopEvent(line: RawLine, text: string, o: JsonObject): void {
    const event = o['event'];
    if (!isObject(event) || typeof event['type'] !== 'string') {
      return this.malformed.addLine(line, 'malformed:loop_event', isObject(event) ? `\`event.type\` is ${describeValue(event['type'])}, not a string.` : `\`event\` is ${describeValue(event)}, not an object.`);
    }
    const etype = event['type'];
    if (etype === 'step.begin') {
      const t = this.turn(event['turnId']);
      if (t !== '') this.turnId = t;
      return this.skip('loop:step.begin');
    }
    if (etype === 'step.end') {
      const usage = event['usage'] === undefined || event['usage'] === null ? undefined : readUsage(event['usage'], 'code', 'event.usage');
      const id = idMember(event, 'messageId');
      this.stepEnd = usage !== undefined && !('fault' in usage) && id !== undefined ? { messageId: id, usage } : undefined;
      return this.skip('loop:step.end');
    }
    if (etype === 'tool.call') return this.readCodeCall(line, text, o, event);
    if (etype === 'tool.result') return this.readCodeResult(line, o, event);
    this.skip(`loop:${etype.slice(0, 64)}`);
  }

  private readCodeCall(line: RawLine, text: string, o: JsonObject, event: JsonObject): void {
    const id = idMember(event, 'toolCallId');
    if (id === undefined) return this.malformed.addLine(line, 'malformed:tool_call', idFault(event, 'toolCallId', 'event.'));
    const name = event['name'];
    if (typeof name !== 'string' || name === '' || name.length > MAX_ID_CHARS) return this.malformed.addLine(line, 'malformed:tool_call', `\`event.name\` is ${describeValue(name)}, not a tool name.`);
    const ts = msTime(o['time']);
    if (ts === undefined) return this.malformed.addLine(line, 'tool:no_time', `\`time\` is ${describeValue(o['time'])}, not a time in milliseconds.`);
    if (this.calls.has(id) || this.done.has(id)) return this.skip('repeated_call');
    const args = event['args'];
    let input: RawToolInput = { json: '{}' };
    if (isObject(args)) {
      const span = findSpan(text, ['event', 'args']);
      if (span) {
        const depth = skipValue(text, span.start).depth;
        if (depth > MAX_ARGS_DEPTH) return this.malformed.addLine(line, 'too_deep', `\`event.args\` is nested ${depth} levels deep, more than the ${MAX_ARGS_DEPTH} an event takes.`);
        input = { json: text.slice(span.start, span.end) };
      }
    } else if (typeof args === 'string') input = { string: args };
    const t = this.turn(event['turnId']);
    this.calls.set(id, { id, name: toolName(name), turnId: t !== '' ? t : this.turnId, model: this.model, ts, input, line: { lineNo: line.lineNo, endOffset: line.endOffset } });
  }

  private readCodeResult(line: RawLine, o: JsonObject, event: JsonObject): void {
    const id = idMember(event, 'toolCallId');
    if (id === undefined) return this.malformed.addLine(line, 'malformed:tool_result', idFault(event, 'toolCallId', 'event.'));
    const call = this.calls.get(id);
    if (call === undefined) return this.skip(this.done.has(id) ? 'repeated_tool_result' : 'tool_result_without_call');
    const ts = msTime(o['time']);
    if (ts === undefined) return this.malformed.addLine(line, 'tool:no_time', `\`time\` is ${describeValue(o['time'])}, not a time in milliseconds.`);
    const result = event['result'];
    const r = isObject(result) ? result : {};
    const isError = event['isError'] === true || r['isError'] === true;
    const out = outputText(isObject(result) ? r['output'] : result);
    this.finish(call, isError ? { status: 'error', ...(out === undefined ? {} : { output: out }), error: errorOf(out) } : { status: 'ok', ...(out === undefined ? {} : { output: out }) }, ts, line);
  }

  private readUsageRecord(line: RawLine, o: JsonObject): void {
    const usage = readUsage(o['usage'], 'code', 'usage');
    if ('fault' in usage) return this.malformed.addLine(line, 'malformed:usage', usage.fault);
    const ts = msTime(o['time']);
    if (ts === undefined) return this.malformed.addLine(line, 'usage:no_time', `\`time\` is ${describeValue(o['time'])}, not a time in milliseconds.`);
    const model = typeof o['model'] === 'string' && o['model'] !== '' && o['model'].length <= MAX_ID_CHARS ? o['model'] : this.model;
    // The step.end just before it repeats this usage and names the response.
    const step = this.stepEnd;
    this.stepEnd = undefined;
    const messageId = step !== undefined && sameUsage(step.usage, usage) ? step.messageId : undefined;
    if (isZero(usage)) return this.skip('usage_zero');
    // usageScope "session" (a compaction request) is outside a turn.
    const inTurn = o['usageScope'] !== 'session';
    this.emitUsage(line, ts, usage, messageId ?? `${this.agent}:t${String(o['time'])}`, messageId, model, inTurn ? this.turnId : '', this.place.agentId);
  }

  // ------------------------------------------------------------------------------ Kimi CLI

  private readLegacy(line: RawLine, o: JsonObject): void {
    const message = o['message'];
    if (!isObject(message) || typeof message['type'] !== 'string' || message['type'] === '') {
      return this.malformed.addLine(line, 'malformed:message', isObject(message) ? `\`message.type\` is ${describeValue(message['type'])}, not a wire message type.` : `\`message\` is ${describeValue(message)}, not an object.`);
    }
    const type = message['type'];
    const payload = message['payload'] ?? {};
    if (!isObject(payload)) return this.malformed.addLine(line, 'malformed:payload', `\`message.payload\` is ${describeValue(payload)}, not an object.`);
    switch (type) {
      case 'TurnBegin':
        this.legacyTurns++;
        this.turnId = this.turn(this.legacyTurns);
        return this.skip(type);
      case 'StatusUpdate':
        return this.readStatus(line, o, payload, this.place.agentId, 'message.payload');
      case 'ToolCall':
        return this.readLegacyCall(line, o, payload);
      case 'ToolCallPart': {
        const part = payload['arguments_part'];
        const call = this.lastCall === undefined ? undefined : this.calls.get(this.lastCall);
        if (call === undefined || !('parts' in call.input)) return this.skip('tool_call_part_without_call');
        if (typeof part === 'string') call.input.parts.push(part);
        return this.skip('ToolCallPart');
      }
      case 'ToolResult':
        return this.readLegacyResult(line, o, payload);
      case 'SubagentEvent': {
        const inner = payload['event'];
        const innerMessage = isObject(inner) && isObject(inner['message']) ? inner['message'] : inner;
        const innerType = isObject(innerMessage) && typeof innerMessage['type'] === 'string' ? innerMessage['type'] : '';
        const innerPayload = isObject(innerMessage) ? innerMessage['payload'] : undefined;
        if (innerType === 'StatusUpdate' && isObject(innerPayload) && innerPayload['token_usage'] !== undefined && innerPayload['token_usage'] !== null) {
          const agent = idMember(payload, 'agent_id');
          if (agent === undefined) return this.malformed.addLine(line, 'malformed:subagent_event', idFault(payload, 'agent_id', 'message.payload.'));
          return this.readStatus(line, o, innerPayload, agent, 'message.payload.event.payload');
        }
        // The subagent's calls are read from its own wire log (subagents/<agent_id>/wire.jsonl).
        return this.skip(`subagent_event:${innerType === '' ? 'unknown' : innerType.slice(0, 64)}`);
      }
      default:
        return this.skip(CONTEXT_TYPES.has(type) ? type : `unknown_type:${type.slice(0, 64)}`);
    }
  }

  private readStatus(line: RawLine, o: JsonObject, payload: JsonObject, agentId: string | undefined, where: string): void {
    const raw = payload['token_usage'];
    if (raw === undefined || raw === null) return this.skip('status_without_usage');
    const usage = readUsage(raw, 'legacy', `${where}.token_usage`);
    if ('fault' in usage) return this.malformed.addLine(line, 'malformed:usage', usage.fault);
    const ts = secondsTime(o['timestamp']);
    if (ts === undefined) return this.malformed.addLine(line, 'usage:no_time', `\`timestamp\` is ${describeValue(o['timestamp'])}, not a time in seconds.`);
    if (payload['message_id'] !== undefined && payload['message_id'] !== null && idMember(payload, 'message_id') === undefined) return this.malformed.addLine(line, 'malformed:usage', idFault(payload, 'message_id', `${where}.`));
    const messageId = idMember(payload, 'message_id');
    if (messageId !== undefined && this.usageKeys.has(messageId)) return this.skip('repeated_usage');
    if (isZero(usage)) return this.skip('usage_zero');
    this.emitUsage(line, ts, usage, messageId ?? `${agentId ?? 'main'}:t${String(o['timestamp'])}`, messageId, this.model, this.turnId, agentId);
  }

  private readLegacyCall(line: RawLine, o: JsonObject, payload: JsonObject): void {
    const id = idMember(payload, 'id');
    if (id === undefined) return this.malformed.addLine(line, 'malformed:tool_call', idFault(payload, 'id', 'message.payload.'));
    const fn = payload['function'];
    const name = isObject(fn) ? fn['name'] : undefined;
    if (!isObject(fn) || typeof name !== 'string' || name === '' || name.length > MAX_ID_CHARS) return this.malformed.addLine(line, 'malformed:tool_call', `\`message.payload.function.name\` is ${describeValue(name)}, not a tool name.`);
    const ts = secondsTime(o['timestamp']);
    if (ts === undefined) return this.malformed.addLine(line, 'tool:no_time', `\`timestamp\` is ${describeValue(o['timestamp'])}, not a time in seconds.`);
    if (this.calls.has(id) || this.done.has(id)) return this.skip('repeated_call');
    const args = fn['arguments'];
    this.calls.set(id, { id, name: toolName(name), turnId: this.turnId, model: this.model, ts, input: { parts: [typeof args === 'string' ? args : ''] }, line: { lineNo: line.lineNo, endOffset: line.endOffset } });
    this.lastCall = id;
  }

  private readLegacyResult(line: RawLine, o: JsonObject, payload: JsonObject): void {
    const id = idMember(payload, 'tool_call_id');
    if (id === undefined) return this.malformed.addLine(line, 'malformed:tool_result', idFault(payload, 'tool_call_id', 'message.payload.'));
    const call = this.calls.get(id);
    if (call === undefined) return this.skip(this.done.has(id) ? 'repeated_tool_result' : 'tool_result_without_call');
    const ts = secondsTime(o['timestamp']);
    if (ts === undefined) return this.malformed.addLine(line, 'tool:no_time', `\`timestamp\` is ${describeValue(o['timestamp'])}, not a time in seconds.`);
    const rv = payload['return_value'];
    const r = isObject(rv) ? rv : {};
    const out = outputText(r['output']);
    const said = typeof r['message'] === 'string' && r['message'] !== '' ? r['message'] : undefined;
    this.finish(call, r['is_error'] === true ? { status: 'error', ...(out === undefined ? {} : { output: out }), error: errorOf(said ?? out) } : { status: 'ok', ...(out === undefined ? {} : { output: out }) }, ts, line);
  }

  // ------------------------------------------------------------------------------ events

  private emitUsage(line: RawLine, ts: string, usage: KimiUsage, base: string, messageId: string | undefined, model: string | undefined, turnId: string, agentId: string | undefined): void {
    const seen = (this.usageKeys.get(base) ?? 0) + 1;
    this.usageKeys.set(base, seen);
    const key = seen === 1 ? base : `${base}#${seen}`;
    const fields: UsageFields = {
      // No agent in the id: a subagent's usage forwarded into the parent's log is the same event.
      event_id: stableEventId('kimi', this.place.sessionId, 'usage', key),
      ts,
      harness: 'kimi',
      session_id: this.place.sessionId,
      ...(agentId === undefined ? {} : { agent_id: agentId }),
      ...(turnId === '' ? {} : { turn_id: turnId }),
      ...(model === undefined ? {} : { model }),
      request_id: (messageId ?? key).slice(0, MAX_ID_CHARS),
      // USAGE_CONVENTIONS.kimi: input_other excludes both caches; output includes reasoning.
      input_tokens: usage.inputOther,
      output_tokens: usage.output,
      cache_read_tokens: usage.cacheRead,
      cache_write_tokens: usage.cacheCreation,
    };
    this.output.event({ envelope: usageEnvelope(fields), source: `${this.path}:${line.lineNo}`, endOffset: line.endOffset });
  }

  private finish(call: PendingCall, outcome: Outcome, ts: string, line: RawLine): void {
    this.calls.delete(call.id);
    this.done.add(call.id);
    const d = Date.parse(ts) - Date.parse(call.ts);
    this.emitCall(call, outcome, Number.isSafeInteger(d) && d >= 0 ? d : undefined, { lineNo: line.lineNo, endOffset: line.endOffset });
  }

  private emitCall(call: PendingCall, outcome: Outcome | undefined, duration: number | undefined, at: LinePos): void {
    const fields: ToolCallFields = {
      event_id: stableEventId('kimi', this.place.sessionId, this.agent, 'tool', call.id),
      ts: call.ts,
      harness: 'kimi',
      session_id: this.place.sessionId,
      ...(this.place.agentId === undefined ? {} : { agent_id: this.place.agentId }),
      ...(call.turnId === '' ? {} : { turn_id: call.turnId }),
      call_id: call.id,
      ...(call.model === undefined ? {} : { model: call.model }),
      tool: call.name,
      status: outcome?.status ?? 'pending',
      ...(outcome?.output === undefined ? {} : { output: outcome.output }),
      ...(outcome?.error === undefined ? {} : { error: outcome.error }),
      ...(duration === undefined ? {} : { duration_ms: duration }),
    };
    const { envelope, truncated } = toolCallEnvelopeWithin(fields, inputOf(call));
    if (truncated) this.skip('output_truncated');
    this.output.event({ envelope, source: `${this.path}:${at.lineNo}`, endOffset: at.endOffset });
  }

  end(): void {
    // Calls without a result: still running, or the session ended first. A later import re-emits them.
    for (const call of this.calls.values()) this.emitCall(call, undefined, undefined, call.line);
    this.calls.clear();
  }
}

/** Legacy arguments: the joined text, kept as JSON when it is an object, else as a string. */
function inputOf(call: PendingCall): RawToolInput {
  if (!('parts' in call.input)) return call.input;
  const text = call.input.parts.join('');
  if (text.trim() === '') return { json: '{}' };
  try {
    const v: unknown = JSON.parse(text);
    if (isObject(v) && skipValue(text, text.indexOf('{')).depth <= MAX_ARGS_DEPTH) return { json: text.trim() };
  } catch {
    // streamed arguments cut short: kept as the string the harness logged
  }
  return { string: text };
}

function errorOf(text: string | undefined): string {
  const s = text === undefined ? '' : errorSummary(text);
  return s === '' ? 'error' : s;
}

function sameUsage(a: KimiUsage, b: KimiUsage): boolean {
  return a.inputOther === b.inputOther && a.output === b.output && a.cacheRead === b.cacheRead && a.cacheCreation === b.cacheCreation;
}

/** How one wire log is read: one streaming pass. */
export function kimiReading(path: string): LineReading {
  return { parser: (output) => new KimiParser(path, output) };
}

/** Parses a whole wire log held in memory (tests, and callers that hold the bytes). */
export function parseKimiFile(path: string, data: Buffer): ParsedFile {
  return parseLinesWith(kimiReading(path), data);
}
