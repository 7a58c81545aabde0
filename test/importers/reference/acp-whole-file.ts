// The oracle of the streaming acp parser: the whole-file parser as it was before the importer
// streamed (src/importers/acp/parser.ts at commit c04471f), unchanged but for its imports.
// test/importers/acp-stream.test.ts checks that the streaming parser gives exactly what this gives.
// Turns an ACP capture (JSONL of JSON-RPC messages, bare or in a recorder's wrapper) into
// toolcanon tool_call events: each `tool_call` joined with its `tool_call_update`s by
// session and toolCallId. Pure: the caller passes the time to use when lines carry none. A line
// or a call that cannot be read is returned as malformed (with its line); lines of messages
// that carry no tool call are counted.
import type { Harness } from '../../../src/canonical/meta.ts';
import { findSpan } from '../../../src/util/json-spans.ts';
import { stableEventId, toolCallLine, type RawToolInput } from '../../../src/importers/envelope.ts';
import { describeValue, MalformedRecords, readObject, splitCompleteLines, type RawLine } from '../../../src/importers/lines.ts';
import type { ImportedEvent, ParsedFile } from '../../../src/importers/types.ts';
import { isObject, locateMessage, readToolCallFields, type JsonObject, type ToolCallFields } from '../../../src/importers/acp/types.ts';

export interface AcpParseOptions {
  /** Epoch ms used as `ts` when the capture's lines carry no time (the index passes the file's mtime). */
  readonly fallbackTimeMs?: number;
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

/** A tool call as the updates so far describe it. */
interface CallState {
  readonly sessionId: string;
  readonly toolCallId: string;
  readonly order: number;
  /** The first line of the call: a call that cannot be emitted is malformed there. */
  readonly firstLine: RawLine;
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

export function parseAcpFile(path: string, data: Buffer, options: AcpParseOptions = {}): ParsedFile {
  const { lines, completeBytes } = splitCompleteLines(data);
  const skipped: Record<string, number> = {};
  const malformed = new MalformedRecords();
  const calls = new Map<string, CallState>();
  let agentHarness: Harness | undefined;
  /** Client requests awaiting their response, by JSON-RPC id: what the response will tell. */
  const pending = new Map<string, { method: string; sessionId: string | undefined }>();
  const models = new Map<string, string>();
  const turns = new Map<string, string>();

  const merge = (sessionId: string, fields: ToolCallFields, announces: boolean, updatePath: readonly string[], line: { raw: RawLine; text: string; source: string; endOffset: number; timeMs: number | undefined; order: number }): void => {
    const key = `${sessionId}\u0000${fields.toolCallId}`;
    let call = calls.get(key);
    if (!call) {
      call = {
        sessionId,
        toolCallId: fields.toolCallId,
        order: line.order,
        firstLine: line.raw,
        announced: false,
        turnId: turns.get(sessionId) ?? '',
        model: models.get(sessionId) ?? '',
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
      calls.set(key, call);
    }
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
  };

  lines.forEach((raw, order) => {
    const read = readObject(raw.text);
    if (!read.ok) return malformed.addLine(raw, read.problem, read.detail);
    const located = locateMessage(read.value);
    // A line with no JSON-RPC message in it (a recorder's header, say): not read on purpose.
    if (!located) return count(skipped, 'unknown');
    const { message, paramsPath } = located;
    const at = { raw, text: raw.text, source: `${path}:${raw.lineNo}`, endOffset: raw.endOffset, timeMs: located.timeMs, order };
    const method = typeof message['method'] === 'string' ? message['method'] : undefined;
    const params = isObject(message['params']) ? message['params'] : undefined;
    const id = message['id'];
    const idKey = typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;

    if (method === undefined) {
      // A response: what it tells about the agent, a session's model. Never an event itself.
      const request = idKey !== undefined ? pending.get(idKey) : undefined;
      if (request && idKey !== undefined) pending.delete(idKey);
      const result = isObject(message['result']) ? message['result'] : undefined;
      if (result) readResponse(request, result);
      return count(skipped, 'jsonrpc:response');
    }
    const sessionId = typeof params?.['sessionId'] === 'string' ? params['sessionId'] : undefined;
    if (idKey !== undefined && (method === 'initialize' || method === 'session/new' || method === 'session/load' || method === 'session/prompt')) {
      pending.set(idKey, { method, sessionId });
    }
    if (method === 'session/prompt' && sessionId && idKey !== undefined) turns.set(sessionId, idKey);
    if (method === 'session/set_model' && sessionId && typeof params?.['modelId'] === 'string') models.set(sessionId, params['modelId']);

    if (method === 'session/update') {
      const update = params?.['update'];
      if (!sessionId) return malformed.addLine(raw, 'session_update:no_session', `\`params.sessionId\` of a session/update is ${describeValue(params?.['sessionId'])}, not a string.`);
      if (!isObject(update)) return malformed.addLine(raw, 'session_update:no_update', `\`params.update\` of a session/update is ${describeValue(update)}, not an object.`);
      const kind = update['sessionUpdate'];
      if (typeof kind !== 'string') return malformed.addLine(raw, 'session_update:no_kind', `\`params.update.sessionUpdate\` is ${describeValue(kind)}, not a string.`);
      if (kind !== 'tool_call' && kind !== 'tool_call_update') return count(skipped, `session_update:${kind}`);
      const fields = readToolCallFields(update);
      if (!fields) return malformed.addLine(raw, `session_update:${kind}:no_tool_call_id`, `\`toolCallId\` of a ${kind} is ${describeValue(update['toolCallId'])}, not a non-empty string.`);
      return merge(sessionId, fields, kind === 'tool_call', [...paramsPath, 'update'], at);
    }
    if (method === 'session/request_permission') {
      // The permission request describes the same call (often with its rawInput): merged.
      const toolCall = params?.['toolCall'];
      if (!sessionId) return malformed.addLine(raw, 'request_permission:no_session', `\`params.sessionId\` of a session/request_permission is ${describeValue(params?.['sessionId'])}, not a string.`);
      if (!isObject(toolCall)) return malformed.addLine(raw, 'request_permission:no_tool_call', `\`params.toolCall\` of a session/request_permission is ${describeValue(toolCall)}, not an object.`);
      const fields = readToolCallFields(toolCall);
      if (!fields) return malformed.addLine(raw, 'request_permission:no_tool_call_id', `\`params.toolCall.toolCallId\` is ${describeValue(toolCall['toolCallId'])}, not a non-empty string.`);
      return merge(sessionId, fields, false, [...paramsPath, 'toolCall'], at);
    }
    count(skipped, `jsonrpc:${method}`);
  });

  function readResponse(request: { method: string; sessionId: string | undefined } | undefined, result: JsonObject): void {
    const agentInfo = result['agentInfo'];
    if (isObject(agentInfo) && typeof agentInfo['name'] === 'string') agentHarness = harnessForAgent(agentInfo['name']) ?? agentHarness;
    const session = typeof result['sessionId'] === 'string' ? result['sessionId'] : request?.sessionId;
    const modelsInfo = result['models'];
    if (session && isObject(modelsInfo) && typeof modelsInfo['currentModelId'] === 'string') models.set(session, modelsInfo['currentModelId']);
  }

  const events: ImportedEvent[] = [];
  for (const call of [...calls.values()].sort((a, b) => a.order - b.order)) {
    const fromTitle = call.firstTitle ?? call.title ?? call.kind;
    const tool = call.xaiName ?? call.claudeToolName ?? fromTitle?.slice(0, TOOL_NAME_MAX);
    if (!tool && !call.announced) {
      // Updates of a call announced before the capture began (or in another file), none of
      // which names it: like a tool result without its tool use, there is nothing to join.
      count(skipped, 'tool_call_update:without_tool_call');
      continue;
    }
    if (!tool) {
      malformed.addLine(call.firstLine, 'tool_call:no_name', `Tool call ${JSON.stringify(call.toolCallId)} has no \`_meta\` tool name, \`title\` or \`kind\` in any of its updates.`);
      continue;
    }
    const harness: Harness = call.xaiNamespace ?? (call.claudeToolName !== undefined ? 'claude_code' : undefined) ?? agentHarness ?? DEFAULT_ACP_HARNESS;
    const startMs = call.firstMs ?? options.fallbackTimeMs;
    if (startMs === undefined) {
      malformed.addLine(call.firstLine, 'tool_call:no_time', `Tool call ${JSON.stringify(call.toolCallId)} has no time: its lines carry no \`ts\`, \`timestamp\` or \`time\`, and the file's time is unknown.`);
      continue;
    }
    const status = call.status === 'completed' ? 'ok' : call.status === 'failed' ? 'error' : 'pending';
    const output = outputOf(call);
    // The error text: what the client was shown (text content), else the raw output.
    const error = status === 'error' ? (call.contentText || output) : undefined;
    const durationMs = status !== 'pending' && call.firstMs !== undefined && call.finishedMs !== undefined && call.finishedMs >= call.firstMs ? call.finishedMs - call.firstMs : undefined;
    const line = toolCallLine(
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
    events.push({ line, source: call.source, endOffset: call.endOffset });
  }
  return { events, malformed: malformed.records, completeBytes, recordsRead: lines.length, skipped };
}
