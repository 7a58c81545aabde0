// Turns one GitHub Copilot CLI session log (`session-state/<session id>/events.jsonl`, one
// SessionEvent a line, appended) into toolcanon events: a tool_call per `tool.execution_start`
// joined to its `tool.execution_complete`, a usage per `assistant.usage` when the log holds
// them, else one per model of each `session.shutdown` (the totals of a session segment).
// Streaming: a call is held until it completes (or the file ends: `pending`); a segment's
// usage is handed out at its shutdown line. Never throws on a bad record.
import { DEFAULT_LIMITS } from '../../decode/limits.ts';
import { findSpan, skipValue } from '../../util/json-spans.ts';
import { errorSummary, normaliseTimestamp, type RawToolInput, stableEventId, type ToolCallFields, toolCallEnvelopeWithin, type UsageFields, usageEnvelope } from '../envelope.ts';
import { describeValue, MalformedStream, readObject, type RawLine } from '../lines.ts';
import { parseLinesWith } from '../stream.ts';
import type { ImportOutput, LineParser, LineReading, ParsedFile } from '../types.ts';
import { sessionOfPath } from './paths.ts';
import { readEvent, readTokenFigures, readToolComplete, readToolStart, type SessionEvent, type TokenFigures, type ToolComplete, type ToolStart } from './types.ts';
import { idMember, isObject, MAX_ID_CHARS } from '../json.ts';

const HARNESS = 'copilot_cli';

/**
 * The agent id the totals of a session segment are written under. They are no single request:
 * kept apart from the main agent, they do not stand for its context window (README, trap 1).
 */
export const SESSION_TOTALS_AGENT = 'session_totals';

/** Deepest `arguments` an event carries (the envelope is depth 1; see the Qwen Code importer). */
const MAX_ARGS_DEPTH = DEFAULT_LIMITS.maxDepth - 1;


interface LinePos {
  readonly lineNo: number;
  readonly endOffset: number;
}

interface PendingCall {
  readonly start: ToolStart;
  readonly agentId: string | undefined;
  readonly turnId: string;
  readonly model: string | undefined;
  readonly ts: string;
  readonly input: RawToolInput;
  readonly line: LinePos;
}

function readTime(value: unknown): { ts: string } | { problem: string; detail: string } {
  const ts = typeof value === 'string' ? normaliseTimestamp(value) : undefined;
  if (ts !== undefined) return { ts };
  if (value === undefined || value === null) return { problem: 'no_timestamp', detail: '`timestamp` is missing: the event cannot be placed in time.' };
  return { problem: 'bad_timestamp', detail: `\`timestamp\` is ${describeValue(value)}, not an RFC 3339 time.` };
}

function durationMs(from: string, to: string): number | undefined {
  const d = Date.parse(to) - Date.parse(from);
  return Number.isSafeInteger(d) && d >= 0 ? d : undefined;
}

/**
 * The tool name as the events carry it: an MCP tool (`mcpServerName` set) as
 * `mcp__<server>__<tool>` (its original name on the server when logged), so the projection
 * attributes it to its server; a built-in tool keeps its name.
 */
export function eventToolName(start: Pick<ToolStart, 'toolName' | 'mcpServerName' | 'mcpToolName'>): string {
  if (start.mcpServerName === undefined) return start.toolName;
  const name = `mcp__${start.mcpServerName}__${start.mcpToolName ?? start.toolName}`;
  return name.length <= MAX_ID_CHARS ? name : start.toolName;
}

/** The envelope status and error of a finished call. */
export function callOutcome(c: Pick<ToolComplete, 'success' | 'errorMessage' | 'errorCode'>): { status: 'ok' | 'error'; error?: string } {
  if (c.success) return { status: 'ok' };
  const summary = c.errorMessage === undefined ? '' : errorSummary(c.errorMessage);
  return { status: 'error', error: summary !== '' ? summary : (c.errorCode ?? 'error') };
}

export interface CopilotContext {
  readonly path: string;
}

/** The streaming parser of one session log (see the file comment and README.md). */
export class CopilotParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  private readonly malformed: MalformedStream;
  private readonly calls = new Map<string, PendingCall>();
  private readonly done = new Set<string>();
  private readonly sessionId: string;
  private model: string | undefined;
  private turnId = '';
  /** Per-request usage seen since the segment began: the shutdown's totals would count it again. */
  private segmentHasRequestUsage = false;

  constructor(
    private readonly context: CopilotContext,
    private readonly output: ImportOutput,
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
    this.sessionId = sessionOfPath(context.path);
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  private source(pos: LinePos): string {
    return `${this.context.path}:${pos.lineNo}`;
  }

  line(line: RawLine): void {
    const text = line.lineNo === 1 && line.text.charCodeAt(0) === 0xfeff ? line.text.slice(1) : line.text;
    const reading = readObject(text);
    if (!reading.ok) return this.malformed.addLine(line, reading.problem, reading.detail);
    const event = readEvent(reading.value);
    if ('fault' in event) return this.malformed.addLine(line, event.problem, event.fault);
    switch (event.type) {
      case 'session.start':
      case 'session.resume':
        // A new segment: the CLI starts its usage totals again (README, trap 2).
        this.segmentHasRequestUsage = false;
        this.setModel(event.data['selectedModel']);
        return;
      case 'session.model_change':
        this.setModel(event.data['newModel']);
        return;
      case 'user.message':
        if (event.agentId === undefined) this.turnId = event.id;
        return;
      case 'tool.execution_start':
        return this.readStart(line, text, event);
      case 'tool.execution_complete':
        return this.readComplete(line, event);
      case 'assistant.usage':
        return this.readRequestUsage(line, event);
      case 'session.shutdown':
        return this.readShutdown(line, event);
      default:
        return this.skip(event.type.slice(0, 64));
    }
  }

  private setModel(v: unknown): void {
    if (typeof v === 'string' && v !== '' && v.length <= MAX_ID_CHARS) this.model = v;
  }

  private readStart(line: RawLine, text: string, event: SessionEvent): void {
    const start = readToolStart(event.data);
    if ('fault' in start) return this.malformed.addLine(line, 'malformed:tool_start', start.fault);
    const time = readTime(event.timestamp);
    if (!('ts' in time)) return this.malformed.addLine(line, time.problem, time.detail);
    if (this.calls.has(start.toolCallId) || this.done.has(start.toolCallId)) return this.skip('repeated_tool_start');
    let input: RawToolInput;
    if (start.argumentsKind === 'object') {
      const span = findSpan(text, ['data', 'arguments']);
      if (span === undefined) return this.malformed.addLine(line, 'malformed:tool_start', '`data.arguments` could not be located in the line.');
      const depth = skipValue(text, span.start).depth;
      if (depth > MAX_ARGS_DEPTH) return this.malformed.addLine(line, 'too_deep', `\`data.arguments\` is nested ${depth} levels deep, more than the ${MAX_ARGS_DEPTH} an event takes.`);
      input = { json: text.slice(span.start, span.end) };
    } else if (start.argumentsKind === 'string') input = { string: event.data['arguments'] as string };
    else input = { json: '{}' };
    this.calls.set(start.toolCallId, {
      start,
      agentId: event.agentId,
      turnId: this.turnId,
      model: start.model ?? this.model,
      ts: time.ts,
      input,
      line: { lineNo: line.lineNo, endOffset: line.endOffset },
    });
  }

  private readComplete(line: RawLine, event: SessionEvent): void {
    const complete = readToolComplete(event.data);
    if ('fault' in complete) return this.malformed.addLine(line, 'malformed:tool_complete', complete.fault);
    const call = this.calls.get(complete.toolCallId);
    if (call === undefined) return this.skip(this.done.has(complete.toolCallId) ? 'repeated_tool_complete' : 'tool_complete_without_start');
    const time = readTime(event.timestamp);
    if (!('ts' in time)) return this.malformed.addLine(line, time.problem, time.detail);
    this.calls.delete(complete.toolCallId);
    this.done.add(complete.toolCallId);
    this.emitCall(call, complete, time.ts, { lineNo: line.lineNo, endOffset: line.endOffset });
  }

  private emitCall(call: PendingCall, complete: ToolComplete | undefined, completeTs: string | undefined, completedBy: LinePos): void {
    const model = complete?.model ?? call.model;
    const base = {
      event_id: stableEventId(HARNESS, this.sessionId, 'tool', call.start.toolCallId),
      ts: call.ts,
      harness: HARNESS,
      session_id: this.sessionId,
      ...(call.agentId === undefined ? {} : { agent_id: call.agentId }),
      ...(call.turnId === '' ? {} : { turn_id: call.turnId }),
      call_id: call.start.toolCallId,
      ...(model === undefined ? {} : { model }),
      tool: eventToolName(call.start),
    } as const;
    let fields: ToolCallFields;
    if (complete === undefined) fields = { ...base, status: 'pending' };
    else {
      const outcome = callOutcome(complete);
      const duration = completeTs === undefined ? undefined : durationMs(call.ts, completeTs);
      const output = complete.content ?? complete.errorMessage;
      fields = {
        ...base,
        status: outcome.status,
        ...(output === undefined ? {} : { output }),
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
        ...(duration === undefined ? {} : { duration_ms: duration }),
        ...(complete.images > 0 ? { images: Math.min(complete.images, 10_000) } : {}),
      };
    }
    const { envelope, truncated } = toolCallEnvelopeWithin(fields, call.input);
    if (truncated) this.skip('output_truncated');
    this.output.event({ envelope, source: this.source(completedBy), endOffset: completedBy.endOffset });
  }

  /** `assistant.usage` (one model call; marked ephemeral, written by some builds). */
  private readRequestUsage(line: RawLine, event: SessionEvent): void {
    const d = event.data;
    const model = idMember(d, 'model');
    if (model === undefined) return this.malformed.addLine(line, 'malformed:usage', '`data.model` is missing or no string of at most 256 characters.');
    const figures = readTokenFigures(d, 'data.');
    if ('fault' in figures) return this.malformed.addLine(line, 'malformed:usage', figures.fault);
    const time = readTime(event.timestamp);
    if (!('ts' in time)) return this.malformed.addLine(line, time.problem, time.detail);
    this.segmentHasRequestUsage = true;
    const requestId = idMember(d, 'apiCallId') ?? idMember(d, 'providerCallId') ?? event.id;
    this.emitUsage(line, { key: ['request', event.id], ts: time.ts, agentId: event.agentId, turnId: this.turnId, model, requestId, figures });
  }

  /** `session.shutdown`: per-model totals of the segment since the last start or resume. */
  private readShutdown(line: RawLine, event: SessionEvent): void {
    const metrics = event.data['modelMetrics'];
    if (metrics === undefined || metrics === null) return this.skip('session.shutdown:no_metrics');
    if (!isObject(metrics)) return this.malformed.addLine(line, 'malformed:shutdown', `\`data.modelMetrics\` is ${describeValue(metrics)}, not an object.`);
    const time = readTime(event.timestamp);
    if (!('ts' in time)) return this.malformed.addLine(line, time.problem, time.detail);
    const covered = this.segmentHasRequestUsage;
    this.segmentHasRequestUsage = false;
    // Checked whole first: one bad model entry makes the record a dead letter, not half of it.
    const totals: { model: string; figures: TokenFigures }[] = [];
    for (const [model, entry] of Object.entries(metrics)) {
      const where = `data.modelMetrics[${JSON.stringify(model).slice(0, 80)}].`;
      if (model === '' || model.length > MAX_ID_CHARS) return this.malformed.addLine(line, 'malformed:shutdown', `A \`data.modelMetrics\` key is ${describeValue(model)}, not a model name of at most ${MAX_ID_CHARS} characters.`);
      if (!isObject(entry)) return this.malformed.addLine(line, 'malformed:shutdown', `\`${where.slice(0, -1)}\` is ${describeValue(entry)}, not an object.`);
      const usage = entry['usage'] ?? {};
      if (!isObject(usage)) return this.malformed.addLine(line, 'malformed:shutdown', `\`${where}usage\` is ${describeValue(usage)}, not an object.`);
      const figures = readTokenFigures(usage, `${where}usage.`);
      if ('fault' in figures) return this.malformed.addLine(line, 'malformed:shutdown', figures.fault);
      totals.push({ model, figures });
    }
    if (covered) return this.skip('session.shutdown:covered_by_requests');
    if (totals.length === 0) return this.skip('session.shutdown:no_metrics');
    for (const t of totals) {
      this.emitUsage(line, { key: ['shutdown', event.id, t.model], ts: time.ts, agentId: SESSION_TOTALS_AGENT, turnId: '', model: t.model, requestId: `${event.id}:${t.model}`.slice(0, MAX_ID_CHARS), figures: t.figures });
    }
  }

  private emitUsage(line: RawLine, u: { key: readonly string[]; ts: string; agentId: string | undefined; turnId: string; model: string; requestId: string; figures: TokenFigures }): void {
    const f = u.figures;
    const fields: UsageFields = {
      event_id: stableEventId(HARNESS, this.sessionId, 'usage', ...u.key),
      ts: u.ts,
      harness: HARNESS,
      session_id: this.sessionId,
      ...(u.agentId === undefined ? {} : { agent_id: u.agentId }),
      ...(u.turnId === '' ? {} : { turn_id: u.turnId }),
      model: u.model,
      request_id: u.requestId,
      // USAGE_CONVENTIONS.copilot_cli: input includes both cache figures, output the reasoning.
      input_tokens: f.input,
      output_tokens: f.output,
      cache_read_tokens: f.cacheRead,
      cache_write_tokens: f.cacheWrite,
      reasoning_tokens: f.reasoning,
    };
    this.output.event({ envelope: usageEnvelope(fields), source: this.source(line), endOffset: line.endOffset });
  }

  end(): void {
    for (const call of this.calls.values()) this.emitCall(call, undefined, undefined, call.line);
    this.calls.clear();
  }
}

/** How one session log is read: one streaming pass. */
export function copilotReading(context: CopilotContext): LineReading {
  return { parser: (output) => new CopilotParser(context, output) };
}

/** Parses a whole session log held in memory (tests, and callers that hold the bytes). */
export function parseCopilotFile(path: string, data: Buffer): ParsedFile {
  return parseLinesWith(copilotReading({ path }), data);
}
