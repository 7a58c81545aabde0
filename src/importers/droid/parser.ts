// Turns one Factory Droid transcript (`<session>.jsonl`, appended an entry a line) and the
// session's totals (`<session>.settings.json` beside it, rewritten in place) into toolcanon
// events: a tool_call per `tool_use` block of an assistant message joined to the `tool_result` of
// the same id in a later user message, and **one usage event per session** from the settings
// file's `tokenUsage` (Droid logs no per-request usage: the messages carry none). That usage is
// handed out at the end, as ending with the transcript's last complete line, under a stable id
// (session, `totals`): each import that finds the transcript grown writes it again with the
// totals as they are then, and the store keeps the last. Its time is the session's first entry's
// (stable, so the row stays in its partition). Never throws on a bad record.
import { DEFAULT_LIMITS } from '../../decode/limits.ts';
import { findSpan, skipValue } from '../../util/json-spans.ts';
import { errorSummary, normaliseTimestamp, type RawToolInput, stableEventId, type ToolCallFields, toolCallEnvelopeWithin, usageEnvelope } from '../envelope.ts';
import { idFault, idMember, isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';
import { describeValue, MalformedStream, readObject, type RawLine } from '../lines.ts';
import { parseLinesWith } from '../stream.ts';
import type { ImportOutput, LineParser, LineReading, ParsedFile } from '../types.ts';
import { sessionOfFileName } from './paths.ts';
import { COUNTED_TYPES, readSettings, type SessionTotals } from './types.ts';

const MAX_INPUT_DEPTH = DEFAULT_LIMITS.maxDepth - 1;

/** The agent id a session's totals are written under: no single request, kept apart from the agents' context windows (as Copilot CLI's). */
export const SESSION_TOTALS_AGENT = 'session_totals';

export interface DroidContext {
  readonly path: string;
  /** The text of the settings file beside the transcript, when there is one. */
  readonly settings?: string;
}

interface PendingCall {
  readonly id: string;
  readonly name: string;
  readonly ts: string;
  readonly turnId: string;
  readonly input: RawToolInput;
  readonly lineNo: number;
  readonly endOffset: number;
}

export class DroidParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  private readonly malformed: MalformedStream;
  private readonly calls = new Map<string, PendingCall>();
  private readonly done = new Set<string>();
  /** The transcript's own session id (session_start.id, else the file name). */
  private ownId: string;
  /** A subagent session (session_start.callingSessionId): its parent's id. */
  private parentId: string | undefined;
  private turnId = '';
  private firstTs: string | undefined;
  private last: { lineNo: number; endOffset: number } | undefined;

  constructor(
    private readonly context: DroidContext,
    private readonly output: ImportOutput,
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
    this.ownId = sessionOfFileName(context.path);
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  private get sessionId(): string {
    return this.parentId ?? this.ownId;
  }

  line(line: RawLine): void {
    this.last = { lineNo: line.lineNo, endOffset: line.endOffset };
    const text = line.lineNo === 1 && line.text.charCodeAt(0) === 0xfeff ? line.text.slice(1) : line.text;
    const reading = readObject(text);
    if (!reading.ok) return this.malformed.addLine(line, reading.problem, reading.detail);
    const o = reading.value;
    const type = o['type'];
    if (typeof type !== 'string' || type === '') return this.malformed.addLine(line, 'malformed:record', `\`type\` is ${describeValue(type)}, not an entry type (session_start, message, …).`);
    if (type === 'session_start') return this.readStart(line, o);
    if (type !== 'message') return this.skip(COUNTED_TYPES.has(type) ? type : `unknown_type:${type.slice(0, 64)}`);
    const message = o['message'];
    if (!isObject(message) || typeof message['role'] !== 'string') {
      return this.malformed.addLine(line, 'malformed:message', isObject(message) ? `\`message.role\` is ${describeValue(message['role'])}, not a string.` : `\`message\` is ${describeValue(message)}, not an object.`);
    }
    const ts = normaliseTimestamp(typeof o['timestamp'] === 'string' ? o['timestamp'] : undefined);
    if (ts === undefined) return this.malformed.addLine(line, 'no_timestamp', `\`timestamp\` is ${describeValue(o['timestamp'])}, not an RFC 3339 time.`);
    this.firstTs ??= ts;
    const content = message['content'];
    const blocks = Array.isArray(content) ? content.filter(isObject) : [];
    const role = message['role'];
    if (role === 'assistant') return this.readAssistant(line, text, blocks, content, ts);
    if (role === 'user') return this.readUser(line, o, blocks, ts);
    this.skip(`message:${role.slice(0, 64)}`);
  }

  private readStart(line: RawLine, o: JsonObject): void {
    if (o['id'] !== undefined && o['id'] !== null) {
      const id = idMember(o, 'id');
      if (id === undefined) return this.malformed.addLine(line, 'malformed:session_start', idFault(o, 'id'));
      this.ownId = id;
    }
    const parent = idMember(o, 'callingSessionId');
    if (parent !== undefined && parent !== this.ownId) this.parentId = parent;
    this.skip('session_start');
  }

  private readAssistant(line: RawLine, text: string, blocks: JsonObject[], content: unknown, ts: string): void {
    const uses = blocks.filter((b) => b['type'] === 'tool_use');
    if (uses.length === 0) return this.skip('assistant_without_tool_use');
    for (const b of uses) {
      const id = idMember(b, 'id');
      const name = b['name'];
      if (id === undefined || typeof name !== 'string' || name === '' || name.length > MAX_ID_CHARS) {
        this.malformed.addLine(line, 'malformed:tool_use', id === undefined ? idFault(b, 'id', 'tool_use.') : `\`tool_use.name\` is ${describeValue(name)}, not a tool name.`);
        continue;
      }
      if (this.calls.has(id) || this.done.has(id)) {
        this.skip('repeated_call');
        continue;
      }
      let input: RawToolInput = { json: '{}' };
      if (isObject(b['input'])) {
        const span = findSpan(text, ['message', 'content', (content as unknown[]).indexOf(b), 'input']);
        if (span !== undefined) {
          const depth = skipValue(text, span.start).depth;
          if (depth > MAX_INPUT_DEPTH) {
            this.malformed.addLine(line, 'too_deep', `\`tool_use.input\` is nested ${depth} levels deep, more than the ${MAX_INPUT_DEPTH} an event takes.`);
            continue;
          }
          input = { json: text.slice(span.start, span.end) };
        }
      }
      this.calls.set(id, { id, name, ts, turnId: this.turnId, input, lineNo: line.lineNo, endOffset: line.endOffset });
    }
  }

  private readUser(line: RawLine, o: JsonObject, blocks: JsonObject[], ts: string): void {
    const results = blocks.filter((b) => b['type'] === 'tool_result');
    if (results.length === 0) {
      // A prompt starts a turn, named by its entry id.
      const id = idMember(o, 'id');
      if (id !== undefined) this.turnId = id;
      return this.skip('user_prompt');
    }
    let used = 0;
    for (const b of results) {
      const id = idMember(b, 'tool_use_id');
      if (id === undefined) {
        this.malformed.addLine(line, 'malformed:tool_result', idFault(b, 'tool_use_id', 'tool_result.'));
        continue;
      }
      const call = this.calls.get(id);
      if (call === undefined) {
        this.skip(this.done.has(id) ? 'repeated_tool_result' : 'tool_result_without_call');
        continue;
      }
      used++;
      this.calls.delete(id);
      this.done.add(id);
      const out = resultText(b['content']);
      // Droid writes a failed command as a result text starting `Error:` (no is_error).
      const failed = b['is_error'] === true || (out !== undefined && out.startsWith('Error:'));
      const said = out === undefined ? '' : errorSummary(out);
      const d = Date.parse(ts) - Date.parse(call.ts);
      this.emitCall(call, failed ? { status: 'error', ...(out === undefined ? {} : { output: out }), error: said === '' ? 'error' : said } : { status: 'ok', ...(out === undefined ? {} : { output: out }) }, Number.isSafeInteger(d) && d >= 0 ? d : undefined, line);
    }
    if (used === 0) this.skip('tool_results_without_calls');
  }

  private emitCall(call: PendingCall, outcome: { status: 'ok' | 'error'; output?: string; error?: string } | undefined, duration: number | undefined, at: { lineNo: number; endOffset: number }): void {
    const fields: ToolCallFields = {
      event_id: stableEventId('droid', this.ownId, 'tool', call.id),
      ts: call.ts,
      harness: 'droid',
      session_id: this.sessionId,
      ...(this.parentId === undefined ? {} : { agent_id: this.ownId }),
      ...(call.turnId === '' ? {} : { turn_id: call.turnId }),
      call_id: call.id,
      tool: call.name,
      status: outcome?.status ?? 'pending',
      ...(outcome?.output === undefined ? {} : { output: outcome.output }),
      ...(outcome?.error === undefined ? {} : { error: outcome.error }),
      ...(duration === undefined ? {} : { duration_ms: duration }),
    };
    const { envelope, truncated } = toolCallEnvelopeWithin(fields, call.input);
    if (truncated) this.skip('output_truncated');
    this.output.event({ envelope, source: `${this.context.path}:${at.lineNo}`, endOffset: at.endOffset });
  }

  end(): void {
    for (const call of this.calls.values()) this.emitCall(call, undefined, undefined, call);
    this.calls.clear();
    this.emitTotals();
  }

  /** The session's totals from its settings file: one usage event (README: "Session totals"). */
  private emitTotals(): void {
    const totals = readSettings(this.context.settings);
    if (totals === undefined) return;
    if ('fault' in totals) return this.skip('settings:unreadable');
    if (this.last === undefined || this.firstTs === undefined) return this.skip('settings:no_transcript_time');
    if (isZero(totals)) return this.skip('settings:usage_zero');
    this.output.event({
      envelope: usageEnvelope({
        event_id: stableEventId('droid', this.ownId, 'usage', 'totals'),
        ts: this.firstTs,
        harness: 'droid',
        session_id: this.sessionId,
        agent_id: this.parentId === undefined ? SESSION_TOTALS_AGENT : `${SESSION_TOTALS_AGENT}:${this.ownId}`.slice(0, MAX_ID_CHARS),
        ...(totals.model === undefined ? {} : { model: totals.model }),
        request_id: `${this.ownId}:totals`.slice(0, MAX_ID_CHARS),
        // USAGE_CONVENTIONS.droid: input excludes the cache; thinking beside the output.
        input_tokens: totals.input,
        output_tokens: totals.output,
        cache_read_tokens: totals.cacheRead,
        cache_write_tokens: totals.cacheCreation,
        reasoning_tokens: totals.thinking,
      }),
      source: `${this.context.path}:${this.last.lineNo}`,
      endOffset: this.last.endOffset,
    });
  }
}

function isZero(t: SessionTotals): boolean {
  return t.input === 0 && t.output === 0 && t.cacheRead === 0 && t.cacheCreation === 0 && t.thinking === 0;
}

function resultText(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    const texts = v.filter((p): p is JsonObject => isObject(p) && typeof p['text'] === 'string').map((p) => p['text'] as string);
    if (texts.length > 0) return texts.join('\n');
  }
  return JSON.stringify(v);
}

/** How one transcript is read: one streaming pass; the settings text read beside it by the caller. */
export function droidReading(context: DroidContext): LineReading {
  return { parser: (output) => new DroidParser(context, output) };
}

/** Parses a whole transcript held in memory, with its settings text when given. */
export function parseDroidFile(path: string, data: Buffer, settings?: string): ParsedFile {
  return parseLinesWith(droidReading({ path, ...(settings === undefined ? {} : { settings }) }), data);
}
