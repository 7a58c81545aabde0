// Turns an ACP capture (JSONL of JSON-RPC messages, bare or in a recorder's wrapper) into
// toolcanon tool_call events: each `tool_call` joined with its `tool_call_update`s by
// session and toolCallId. Streaming, in two passes over the lines (AcpIndex, then AcpParser):
// each call is handed out once no later line updates it. Pure: the caller passes the time to
// use when lines carry none. A line or a call that cannot be read is returned as malformed
// (with its line); lines of messages that carry no tool call are counted.
import type { Harness } from '../../canonical/meta.ts';
import { findSpan } from '../../util/json-spans.ts';
import { stableEventId, toolCallEnvelope, type RawToolInput } from '../envelope.ts';
import { describeValue, MalformedStream, rawOf, readObject, type RawLine } from '../lines.ts';
import { LastLines, parseLinesWith, ReleaseQueue, type Held } from '../stream.ts';
import type { ImportOutput, LineParser, LineReading, MalformedRecord, ParsedFile } from '../types.ts';
import { isObject, locateMessage, readToolCallFields, type JsonObject, type ToolCallFields } from './types.ts';

export interface AcpParseOptions {
  /** Epoch ms used as `ts` when the capture's lines carry no time (the index passes the file's mtime). */
  readonly fallbackTimeMs?: number;
  /** The held bound (MAX_HELD_CHARS unless a test wants it reached). */
  readonly maxHeldChars?: number;
}

/** The harness of an ACP agent from the `agentInfo.name` of its `initialize` response. */
export function harnessForAgent(name: string): Harness | undefined {
  const lower = name.toLowerCase();
  if (lower.includes('grok')) return 'grok_build';
  if (lower.includes('claude')) return 'claude_code';
  if (lower.includes('codex')) return 'codex';
  if (lower.includes('opencode')) return 'opencode';
  return undefined;
}

/** Captures whose agent cannot be told are attributed to Grok Build, the ACP agent this pipeline serves. */
export const DEFAULT_ACP_HARNESS: Harness = 'grok_build';

const TOOL_NAME_MAX = 256;

interface Span {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/** Where a line is, and its record as a malformed record would keep it (only while it may be needed). */
interface FirstLine {
  readonly lineNo: number;
  readonly endOffset: number;
  raw: string | Uint8Array | undefined;
}

/** A tool call as the updates so far describe it. */
interface CallState {
  readonly key: string;
  readonly sessionId: string;
  readonly toolCallId: string;
  /** The first line of the call: a call that cannot be emitted is malformed there. */
  readonly firstLine: FirstLine;
  /** Whether a `tool_call` update announced the call (else only updates of it are in the file). */
  announced: boolean;
  readonly turnId: string;
  model: string;
  /** Time of the first update (the line's own time), and whether the line had one. */
  firstMs: number | undefined;
  finishedMs: number | undefined;
  firstTitle: string | undefined;
  title: string | undefined;
  kind: string | undefined;
  status: string | undefined;
  xaiName: string | undefined;
  xaiNamespace: Harness | undefined;
  claudeToolName: string | undefined;
  rawInput: Span | undefined;
  rawOutput: Span | undefined;
  contentText: string | undefined;
  images: number;
  source: string;
  endOffset: number;
}

const TERMINAL = new Set(['completed', 'failed']);

function count(skipped: Record<string, number>, key: string): void {
  skipped[key] = (skipped[key] ?? 0) + 1;
}

function inputOf(span: Span | undefined): RawToolInput {
  if (!span) return { json: '{}' };
  const raw = span.text.slice(span.start, span.end);
  if (raw.startsWith('{')) return { json: raw };
  if (raw.startsWith('"')) return { string: JSON.parse(raw) as string };
  return { string: raw };
}

function outputOf(call: CallState): string | undefined {
  if (call.rawOutput) {
    const raw = call.rawOutput.text.slice(call.rawOutput.start, call.rawOutput.end);
    return raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  return call.contentText !== undefined && call.contentText !== '' ? call.contentText : undefined;
}

function callKey(sessionId: string, toolCallId: string): string {
  return `${sessionId}\u0000${toolCallId}`;
}

/** The JSON-RPC methods whose response the parser reads (agent, model), by request id. */
const ANSWERED_METHODS: ReadonlySet<string> = new Set(['initialize', 'session/new', 'session/load', 'session/prompt']);

/** The tool call a session/update or a permission request merges into, if it names one. */
function mergedKey(message: JsonObject): string | undefined {
  const method = message['method'];
  const params = isObject(message['params']) ? message['params'] : undefined;
  const sessionId = params?.['sessionId'];
  if (typeof sessionId !== 'string' || sessionId === '') return undefined;
  let call: unknown;
  if (method === 'session/update') {
    const update = params?.['update'];
    if (!isObject(update) || (update['sessionUpdate'] !== 'tool_call' && update['sessionUpdate'] !== 'tool_call_update')) return undefined;
    call = update;
  } else if (method === 'session/request_permission') call = params?.['toolCall'];
  else return undefined;
  if (!isObject(call)) return undefined;
  const id = readToolCallFields(call)?.toolCallId;
  return id === undefined ? undefined : callKey(sessionId, id);
}

/** The agent an `initialize` response names, if it names one. */
function agentOfResult(result: JsonObject, previous: Harness | undefined): Harness | undefined {
  const agentInfo = result['agentInfo'];
  return isObject(agentInfo) && typeof agentInfo['name'] === 'string' ? (harnessForAgent(agentInfo['name']) ?? previous) : previous;
}

/**
 * The first pass over a capture: for every call (session and toolCallId) the last line that
 * merges into it, and the agent the capture's `initialize` responses name (the last one that
 * names a known agent; every call's harness falls back to it, also a call made before it). A
 * number per call, no text.
 */
export class AcpIndex {
  private readonly lastLines = new LastLines();
  /** The agent's harness, final once every line was scanned. */
  agentHarness: Harness | undefined;

  scan(line: RawLine): void {
    const read = readObject(line.text);
    if (!read.ok) return;
    const located = locateMessage(read.value);
    if (!located) return;
    const message = located.message;
    if (typeof message['method'] !== 'string') {
      if (isObject(message['result'])) this.agentHarness = agentOfResult(message['result'], this.agentHarness);
      return;
    }
    const key = mergedKey(message);
    if (key !== undefined) this.lastLines.note(key, line.lineNo);
  }

  lastLineOf(key: string): number {
    return this.lastLines.last(key);
  }
}

/** A line being merged into a call. */
interface MergedLine {
  readonly raw: RawLine;
  readonly text: string;
  readonly source: string;
  readonly endOffset: number;
  readonly timeMs: number | undefined;
}

/**
 * The streaming parser of one capture: reads its lines in order with the rules the whole-file
 * parse had, merges each update into its call, and hands each call out (in the order the calls
 * started) once the index says no later line updates it and every call started before it is
 * out. It holds the calls still open and the calls after them; the requests awaiting their
 * response (to read the session's model from it) and each session's model and turn.
 *
 * Past the held bound (ReleaseQueue), the open call that started first is written as it stands
 * and counted `call_written_before_final`; a later update of it is a malformed record
 * `call_already_written`, kept with its bytes instead of in the call's row.
 */
export class AcpParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  private readonly malformed: MalformedStream;
  private readonly queue: ReleaseQueue<CallState>;
  private readonly calls = new Map<string, { state: CallState; held: Held<CallState> }>();
  /** Calls written early (the held bound), with the last line that names them. */
  private readonly released = new Map<string, number>();
  /** Client requests awaiting their response, by JSON-RPC id: what the response will tell. */
  private readonly pending = new Map<string, { method: string; sessionId: string | undefined }>();
  private readonly models = new Map<string, string>();
  private readonly turns = new Map<string, string>();

  constructor(
    private readonly path: string,
    private readonly index: AcpIndex,
    output: ImportOutput,
    private readonly options: AcpParseOptions = {},
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
    this.queue = new ReleaseQueue<CallState>((c, early) => this.finishCall(c, early), (e) => output.event(e), options.maxHeldChars);
  }

  /** Calls held (open, or waiting for an earlier one). */
  get heldItems(): number {
    return this.queue.heldItems;
  }

  line(raw: RawLine): void {
    this.read(raw);
    this.queue.afterLine(raw.lineNo);
    if (this.released.size > 0 && raw.lineNo % 4096 === 0) for (const [key, until] of this.released) if (until <= raw.lineNo) this.released.delete(key);
  }

  end(): void {
    this.queue.end();
  }

  private read(raw: RawLine): void {
    const skipped = this.skipped;
    const malformed = this.malformed;
    const read = readObject(raw.text);
    if (!read.ok) return malformed.addLine(raw, read.problem, read.detail);
    const located = locateMessage(read.value);
    // A line with no JSON-RPC message in it (a recorder's header, say): not read on purpose.
    if (!located) return count(skipped, 'unknown');
    const { message, paramsPath } = located;
    const at: MergedLine = { raw, text: raw.text, source: `${this.path}:${raw.lineNo}`, endOffset: raw.endOffset, timeMs: located.timeMs };
    const method = typeof message['method'] === 'string' ? message['method'] : undefined;
    const params = isObject(message['params']) ? message['params'] : undefined;
    const id = message['id'];
    const idKey = typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;

    if (method === undefined) {
      // A response: what it tells about the agent (the index has it), a session's model. Never an event itself.
      const request = idKey !== undefined ? this.pending.get(idKey) : undefined;
      if (request && idKey !== undefined) this.pending.delete(idKey);
      const result = isObject(message['result']) ? message['result'] : undefined;
      if (result) this.readResponse(request, result);
      return count(skipped, 'jsonrpc:response');
    }
    const sessionId = typeof params?.['sessionId'] === 'string' ? params['sessionId'] : undefined;
    if (idKey !== undefined && ANSWERED_METHODS.has(method)) this.pending.set(idKey, { method, sessionId });
    if (method === 'session/prompt' && sessionId && idKey !== undefined) this.turns.set(sessionId, idKey);
    if (method === 'session/set_model' && sessionId && typeof params?.['modelId'] === 'string') this.models.set(sessionId, params['modelId']);

    if (method === 'session/update') {
      const update = params?.['update'];
      if (!sessionId) return malformed.addLine(raw, 'session_update:no_session', `\`params.sessionId\` of a session/update is ${describeValue(params?.['sessionId'])}, not a string.`);
      if (!isObject(update)) return malformed.addLine(raw, 'session_update:no_update', `\`params.update\` of a session/update is ${describeValue(update)}, not an object.`);
      const kind = update['sessionUpdate'];
      if (typeof kind !== 'string') return malformed.addLine(raw, 'session_update:no_kind', `\`params.update.sessionUpdate\` is ${describeValue(kind)}, not a string.`);
      if (kind !== 'tool_call' && kind !== 'tool_call_update') return count(skipped, `session_update:${kind}`);
      const fields = readToolCallFields(update);
      if (!fields) return malformed.addLine(raw, `session_update:${kind}:no_tool_call_id`, `\`toolCallId\` of a ${kind} is ${describeValue(update['toolCallId'])}, not a non-empty string.`);
      return this.merge(sessionId, fields, kind === 'tool_call', [...paramsPath, 'update'], at);
    }
    if (method === 'session/request_permission') {
      // The permission request describes the same call (often with its rawInput): merged.
      const toolCall = params?.['toolCall'];
      if (!sessionId) return malformed.addLine(raw, 'request_permission:no_session', `\`params.sessionId\` of a session/request_permission is ${describeValue(params?.['sessionId'])}, not a string.`);
      if (!isObject(toolCall)) return malformed.addLine(raw, 'request_permission:no_tool_call', `\`params.toolCall\` of a session/request_permission is ${describeValue(toolCall)}, not an object.`);
      const fields = readToolCallFields(toolCall);
      if (!fields) return malformed.addLine(raw, 'request_permission:no_tool_call_id', `\`params.toolCall.toolCallId\` is ${describeValue(toolCall['toolCallId'])}, not a non-empty string.`);
      return this.merge(sessionId, fields, false, [...paramsPath, 'toolCall'], at);
    }
    count(skipped, `jsonrpc:${method}`);
  }

  private readResponse(request: { method: string; sessionId: string | undefined } | undefined, result: JsonObject): void {
    const session = typeof result['sessionId'] === 'string' ? result['sessionId'] : request?.sessionId;
    const modelsInfo = result['models'];
    if (session && isObject(modelsInfo) && typeof modelsInfo['currentModelId'] === 'string') this.models.set(session, modelsInfo['currentModelId']);
  }

  private merge(sessionId: string, fields: ToolCallFields, announces: boolean, updatePath: readonly string[], line: MergedLine): void {
    const key = callKey(sessionId, fields.toolCallId);
    let open = this.calls.get(key);
    if (!open) {
      const until = this.released.get(key);
      if (until !== undefined && until >= line.raw.lineNo) {
        this.malformed.addLine(
          line.raw,
          'call_already_written',
          `The update of tool call ${JSON.stringify(fields.toolCallId)} came after the call was written: the streamed import held more than its bound of open calls, and wrote the call as it stood. The line is kept here instead of in the call's row.`,
        );
        return;
      }
      const raw = rawOf(line.raw);
      const state: CallState = {
        key,
        sessionId,
        toolCallId: fields.toolCallId,
        firstLine: { lineNo: line.raw.lineNo, endOffset: line.endOffset, raw: typeof raw === 'string' ? raw : Buffer.from(raw) },
        announced: false,
        turnId: this.turns.get(sessionId) ?? '',
        model: this.models.get(sessionId) ?? '',
        firstMs: line.timeMs,
        finishedMs: undefined,
        firstTitle: fields.title,
        title: undefined,
        kind: undefined,
        status: undefined,
        xaiName: undefined,
        xaiNamespace: undefined,
        claudeToolName: undefined,
        rawInput: undefined,
        rawOutput: undefined,
        contentText: undefined,
        images: 0,
        source: line.source,
        endOffset: line.endOffset,
      };
      open = { state, held: this.queue.hold(state, { a: line.raw.lineNo, b: 0 }, this.index.lastLineOf(key), 0) };
      this.calls.set(key, open);
    }
    const call = open.state;
    if (announces) call.announced = true;
    // ACP: an update replaces the fields it carries (content replaces the whole collection).
    if (fields.title !== undefined) call.title = fields.title;
    call.firstTitle ??= fields.title;
    if (fields.kind !== undefined) call.kind = fields.kind;
    if (fields.status !== undefined) call.status = fields.status;
    if (fields.meta.xaiName !== undefined) call.xaiName = fields.meta.xaiName;
    if (fields.meta.xaiNamespace !== undefined) call.xaiNamespace = fields.meta.xaiNamespace;
    if (fields.meta.claudeToolName !== undefined) call.claudeToolName = fields.meta.claudeToolName;
    if (fields.contentText !== undefined) {
      call.contentText = fields.contentText;
      call.images = fields.contentImages ?? 0;
    }
    if (fields.hasRawInput) {
      const span = findSpan(line.text, [...updatePath, 'rawInput']);
      if (span) call.rawInput = { text: line.text, ...span };
    }
    if (fields.hasRawOutput) {
      const span = findSpan(line.text, [...updatePath, 'rawOutput']);
      if (span) call.rawOutput = { text: line.text, ...span };
    }
    if (fields.status !== undefined && TERMINAL.has(fields.status) && call.finishedMs === undefined) call.finishedMs = line.timeMs;
    call.firstMs ??= line.timeMs;
    call.source = line.source;
    call.endOffset = line.endOffset;
    // The first line's record is kept only while the call may still be malformed there.
    if (toolOf(call) !== undefined && (call.firstMs !== undefined || this.options.fallbackTimeMs !== undefined)) call.firstLine.raw = undefined;
    this.queue.update(open.held, open.held.until, callCost(call));
  }

  private malformedAtFirstLine(call: CallState, problem: string, detail: string): void {
    const first = call.firstLine;
    const record: MalformedRecord = { raw: first.raw ?? '', line: first.lineNo, problem, detail, endOffset: first.endOffset };
    this.malformed.add(record);
  }

  /** A call no later line updates (or, `early`, one the bound makes the parser write now). */
  private finishCall(call: CallState, early: boolean): void {
    this.calls.delete(call.key);
    if (early) {
      count(this.skipped, 'call_written_before_final');
      this.released.set(call.key, this.index.lastLineOf(call.key));
    }
    const tool = toolOf(call);
    if (!tool && !call.announced) {
      // Updates of a call announced before the capture began (or in another file), none of
      // which names it: like a tool result without its tool use, there is nothing to join.
      count(this.skipped, 'tool_call_update:without_tool_call');
      return;
    }
    if (!tool) {
      this.malformedAtFirstLine(call, 'tool_call:no_name', `Tool call ${JSON.stringify(call.toolCallId)} has no \`_meta\` tool name, \`title\` or \`kind\` in any of its updates.`);
      return;
    }
    const harness: Harness = call.xaiNamespace ?? (call.claudeToolName !== undefined ? 'claude_code' : undefined) ?? this.index.agentHarness ?? DEFAULT_ACP_HARNESS;
    const startMs = call.firstMs ?? this.options.fallbackTimeMs;
    if (startMs === undefined) {
      this.malformedAtFirstLine(call, 'tool_call:no_time', `Tool call ${JSON.stringify(call.toolCallId)} has no time: its lines carry no \`ts\`, \`timestamp\` or \`time\`, and the file's time is unknown.`);
      return;
    }
    const status = call.status === 'completed' ? 'ok' : call.status === 'failed' ? 'error' : 'pending';
    const output = outputOf(call);
    // The error text: what the client was shown (text content), else the raw output.
    const error = status === 'error' ? (call.contentText || output) : undefined;
    const durationMs = status !== 'pending' && call.firstMs !== undefined && call.finishedMs !== undefined && call.finishedMs >= call.firstMs ? call.finishedMs - call.firstMs : undefined;
    const line = toolCallEnvelope(
      {
        event_id: stableEventId('acp', call.sessionId, call.toolCallId),
        ts: new Date(startMs).toISOString(),
        harness,
        session_id: call.sessionId,
        turn_id: call.turnId,
        call_id: call.toolCallId,
        model: call.model,
        tool,
        status,
        ...(output !== undefined ? { output } : {}),
        ...(error !== undefined ? { error } : {}),
        ...(durationMs !== undefined ? { duration_ms: durationMs } : {}),
        ...(call.images > 0 ? { images: call.images } : {}),
      },
      inputOf(call.rawInput),
    );
    // Calls are in the order they started.
    this.queue.ready({ a: call.firstLine.lineNo, b: 0 }, { envelope: line, source: call.source, endOffset: call.endOffset });
  }
}

/** The tool name of a call as its updates so far give it. */
function toolOf(call: CallState): string | undefined {
  const fromTitle = call.firstTitle ?? call.title ?? call.kind;
  return call.xaiName ?? call.claudeToolName ?? fromTitle?.slice(0, TOOL_NAME_MAX);
}

/** What a held call keeps: the lines its spans are in, its content text, its first line's record. */
function callCost(call: CallState): number {
  const input = call.rawInput?.text.length ?? 0;
  const output = call.rawOutput !== undefined && call.rawOutput.text !== call.rawInput?.text ? call.rawOutput.text.length : 0;
  const raw = call.firstLine.raw?.length ?? 0;
  return input + output + (call.contentText?.length ?? 0) + raw;
}

/** The streaming reading of one capture: the first pass fills the index the parser uses. */
export function acpReading(path: string, options: AcpParseOptions = {}): LineReading & { readonly index: AcpIndex } {
  const index = new AcpIndex();
  return {
    index,
    scan: (line) => index.scan(line),
    parser: (output) => new AcpParser(path, index, output, options),
  };
}

/** Parses a whole capture held in memory (both passes over its bytes): what `parseFile` returns. */
export function parseAcpFile(path: string, data: Buffer, options: AcpParseOptions = {}): ParsedFile {
  return parseLinesWith(acpReading(path, options), data);
}
