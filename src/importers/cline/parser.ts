// Turns one task file of Cline, Roo Code or Kilo Code into toolcanon events. A task folder
// `tasks/<task id>/` holds two JSON documents, each rewritten whole (atomically) at every change:
// `ui_messages.json` (what the chat shows: an `api_req_started` message per model request, its
// JSON text updated with the request's usage once the response has streamed) gives one usage
// event per request; `api_conversation_history.json` (the messages sent to the model) gives one
// tool_call per tool use, joined to its result in the next user message. A rewritten document
// may change any part of itself, so every event ends at the file's end and completeBytes is 0: a
// changed file is read again whole and its events, whose ids are stable, are stored once.
// Never throws on a bad record: an element that cannot be read is a malformed record at its line.
import { basename, dirname } from 'node:path';
import { DEFAULT_LIMITS } from '../../decode/limits.ts';
import { indexArray, skipValue } from '../../util/json-spans.ts';
import { errorSummary, stableEventId, type ToolCallFields, toolCallEnvelopeWithin, usageEnvelope, type Envelope } from '../envelope.ts';
import { idMember, isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';
import { describeValue, MalformedRecords, readObject } from '../lines.ts';
import type { ImportedEvent, ParsedFile } from '../types.ts';
import { failedText, mcpToolName, modelOf, msTime, readReqUsage, resultContent, resultMarker, uncachedInput, xmlToolUses, type ClineFamily, type ToolResult, type ToolUse } from './types.ts';

/** Deepest tool input the events carry (the envelope is depth 1, `input` sits in it). */
const MAX_INPUT_DEPTH = DEFAULT_LIMITS.maxDepth - 1;

/** Which task a file belongs to, and whose subtask it is (Roo Code's history_item.json). */
export interface TaskContext {
  /** The task's root task, when it is a subtask (`rootTaskId`, else `parentTaskId`). */
  readonly rootTaskId?: string;
}

/** The task files this importer reads, by name. */
export const UI_MESSAGES = 'ui_messages.json';
export const API_HISTORY = 'api_conversation_history.json';

/** One element of the document's top-level array, with the line it starts at. */
interface Element {
  readonly index: number;
  readonly text: string;
  readonly lineNo: number;
  readonly value: unknown;
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** The task id: the folder the file is in (Cline: Date.now() as text; Roo Code, Kilo Code: a uuid). */
export function taskIdOf(path: string): string {
  const id = basename(dirname(path));
  return id === '' || id === '.' || id === '/' ? 'unknown' : id.slice(0, MAX_ID_CHARS);
}

class TaskFile {
  readonly events: ImportedEvent[] = [];
  readonly malformed = new MalformedRecords();
  readonly skipped: Record<string, number> = {};
  readonly taskId: string;
  readonly sessionId: string;
  readonly agentId: string | undefined;

  constructor(
    readonly path: string,
    readonly data: Buffer,
    readonly family: ClineFamily,
    task: TaskContext,
  ) {
    this.taskId = taskIdOf(path);
    const root = task.rootTaskId !== undefined && task.rootTaskId !== '' && task.rootTaskId !== this.taskId ? task.rootTaskId.slice(0, MAX_ID_CHARS) : undefined;
    // A subtask (Roo Code's new_task) has a context window of its own: its root task's session, its own agent.
    this.sessionId = root ?? this.taskId;
    this.agentId = root === undefined ? undefined : this.taskId;
  }

  skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  bad(e: Element, problem: string, detail: string): void {
    this.malformed.add({ raw: e.text, line: e.lineNo, problem, detail, endOffset: this.data.length });
  }

  emit(envelope: Envelope, e: Element): void {
    this.events.push({ envelope, source: `${this.path}:${e.lineNo}`, endOffset: this.data.length });
  }

  /** The document's elements, or undefined after a malformed record for the whole file. */
  elements(): Element[] | undefined {
    const original = this.data.toString('utf8');
    const text = stripBom(original);
    const whole = { index: 0, text: original, lineNo: 1, value: undefined };
    if (text.trim() === '') {
      this.skip('empty_document');
      return undefined;
    }
    // Both harnesses write the file atomically (a temporary file renamed over it): a document
    // that does not parse is damaged, not half written, and is one malformed record.
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      const reading = readObject(text);
      this.bad(whole, 'invalid_json', reading.ok ? 'The document is not valid JSON.' : reading.detail);
      return undefined;
    }
    const spans = indexArray(text);
    if (!Array.isArray(value) || spans === undefined || spans.length !== value.length) {
      this.bad(whole, 'not_an_array', `The document is JSON but ${describeValue(value)}, not the array of messages the harness writes.`);
      return undefined;
    }
    let lineNo = 1;
    let counted = 0;
    return spans.map((span, index): Element => {
      for (let i = counted; i < span.start; i++) if (text.charCodeAt(i) === 0x0a) lineNo++;
      counted = span.start;
      return { index, text: text.slice(span.start, span.end), lineNo, value: (value as unknown[])[index] };
    });
  }
}

// ------------------------------------------------------------------------- ui_messages.json

/**
 * A turn: the n-th message of the user in the task. Both files count the same messages (the
 * task, then each feedback or answer: `say: "user_feedback"` in ui_messages.json, a `<feedback>`
 * or `<answer>` block or a new prompt in api_conversation_history.json), so a request and the
 * calls of its response share their turn.
 */
function turnId(taskId: string, n: number): string {
  return `${taskId}#${n}`;
}

/** `say` messages whose text carries a request's usage. */
const USAGE_SAYS = new Set(['api_req_started', 'deleted_api_reqs', 'subagent_usage']);

function readUiMessages(f: TaskFile, elements: readonly Element[]): void {
  let turns = 0;
  for (const e of elements) {
    const o = e.value;
    if (!isObject(o)) {
      f.bad(e, 'not_an_object', `The message is ${describeValue(o)}, not an object.`);
      continue;
    }
    const turn = turns === 0 ? '' : turnId(f.taskId, turns);
    const say = o['say'];
    const type = o['type'];
    if (type !== 'say' && type !== 'ask') {
      f.bad(e, 'malformed:message', `\`type\` is ${describeValue(type)}, not "say" or "ask".`);
      continue;
    }
    if (type === 'ask' || typeof say !== 'string') {
      f.skip(`ask:${typeof o['ask'] === 'string' ? o['ask'].slice(0, 64) : 'unknown'}`);
      continue;
    }
    // The task's prompt (Cline: `say: "task"`; Roo Code and Kilo Code: the first message, a
    // `say: "text"`) and each later message of the user (feedback, an answer) start a turn.
    if (say === 'task' || say === 'user_feedback' || (say === 'text' && e.index === 0)) {
      turns++;
      f.skip('user_prompt');
      continue;
    }
    if (!USAGE_SAYS.has(say)) {
      f.skip(`say:${say.slice(0, 64)}`);
      continue;
    }
    const usage = readReqUsage(o['text']);
    if (usage === 'none') {
      f.skip(`${say}_without_usage`);
      continue;
    }
    if ('fault' in usage) {
      f.bad(e, 'malformed:usage', usage.fault);
      continue;
    }
    const ts = msTime(o['ts']);
    if (ts === undefined) {
      f.bad(e, o['ts'] === undefined ? 'no_timestamp' : 'bad_timestamp', `\`ts\` is ${describeValue(o['ts'])}, not a time in milliseconds: the request cannot be placed in time.`);
      continue;
    }
    const { input, total } = uncachedInput(usage, f.family);
    if (total) f.skip('input_total_split');
    const request = `${f.taskId}:${String(o['ts'])}${say === 'api_req_started' ? '' : `:${say}`}`;
    const model = modelOf(o);
    // Cline's subagents run inside the task and report their summed usage once per batch:
    // their context windows are their own, so the figures go to an agent of their own.
    const agentId = say === 'subagent_usage' ? `subagents:${String(o['ts'])}` : f.agentId;
    f.emit(
      usageEnvelope({
        event_id: stableEventId(f.family.harness, f.sessionId, 'usage', request),
        ts,
        harness: f.family.harness,
        session_id: f.sessionId,
        ...(agentId === undefined ? {} : { agent_id: agentId }),
        ...(turn === '' ? {} : { turn_id: turn }),
        ...(model === undefined ? {} : { model }),
        request_id: request,
        input_tokens: input,
        output_tokens: usage.tokensOut,
        cache_read_tokens: usage.cacheReads,
        cache_write_tokens: usage.cacheWrites,
      }),
      e,
    );
  }
}

// ------------------------------------------------------------------------- api_conversation_history.json

interface PendingCall {
  readonly use: ToolUse;
  readonly ts: string;
  readonly turnId: string;
  readonly model: string | undefined;
  readonly element: Element;
}

/** Nesting depth of a JSON text (0 for a scalar). */
function depthOf(json: string): number {
  return skipValue(json, 0).depth;
}

function readToolUses(f: TaskFile, e: Element, message: JsonObject): (ToolUse | { fault: string })[] {
  const stamp = typeof message['ts'] === 'number' ? String(message['ts']) : `#${e.index}`;
  const content = message['content'];
  const out: (ToolUse | { fault: string })[] = [];
  const blocks: readonly unknown[] = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? (content as readonly unknown[]) : [];
  let xml = 0;
  blocks.forEach((b, i) => {
    if (!isObject(b)) return;
    if (b['type'] === 'tool_use') {
      const id = idMember(b, 'id');
      const name = idMember(b, 'name');
      if (id === undefined || name === undefined) return out.push({ fault: `\`content[${i}]\` is a tool_use block whose \`${id === undefined ? 'id' : 'name'}\` is ${describeValue(b[id === undefined ? 'id' : 'name'])}, not a non-empty string of at most ${MAX_ID_CHARS} characters.` });
      const input = b['input'];
      if (input !== undefined && input !== null && !isObject(input)) return out.push({ fault: `\`content[${i}].input\` is ${describeValue(input)}, not an object.` });
      const json = input === undefined || input === null ? '{}' : JSON.stringify(input);
      out.push({ id, name, input: { json }, native: true });
      return;
    }
    if (b['type'] === 'text' && typeof b['text'] === 'string') {
      for (const use of xmlToolUses(b['text'], f.family.xmlTools)) {
        out.push({ id: `${f.taskId}:${stamp}:${xml}`, name: use.name, input: { params: use.params }, native: false });
        xml++;
      }
    }
  });
  return out;
}

/** The envelope's tool name and raw input of a use (MCP calls as `server__tool` with their arguments). */
function envelopeCall(use: ToolUse): { tool: string; input: { json: string } } {
  let object: JsonObject | undefined;
  let json: string;
  if ('json' in use.input) {
    json = use.input.json;
    const parsed: unknown = JSON.parse(json);
    object = isObject(parsed) ? parsed : undefined;
  } else {
    object = use.input.params;
    json = JSON.stringify(use.input.params);
  }
  const mcp = mcpToolName(use.name, object);
  if (mcp === undefined) return { tool: use.name, input: { json } };
  if (use.name !== 'use_mcp_tool') return { tool: mcp, input: { json } };
  // use_mcp_tool's arguments: a JSON object, or its JSON text (the XML parameter, and what models send natively).
  const args = object?.['arguments'];
  if (isObject(args)) return { tool: mcp, input: { json: JSON.stringify(args) } };
  if (typeof args === 'string') {
    try {
      const parsed: unknown = JSON.parse(args);
      if (isObject(parsed)) return { tool: mcp, input: { json: JSON.stringify(parsed) } };
    } catch {
      // not JSON: kept as the use's own parameters below
    }
  }
  return { tool: mcp, input: { json: args === undefined ? '{}' : json } };
}

function emitCall(f: TaskFile, call: PendingCall, result: ToolResult | undefined): void {
  const { tool, input } = envelopeCall(call.use);
  const base = {
    event_id: stableEventId(f.family.harness, f.sessionId, 'tool', call.use.id),
    ts: call.ts,
    harness: f.family.harness,
    session_id: f.sessionId,
    ...(f.agentId === undefined ? {} : { agent_id: f.agentId }),
    ...(call.turnId === '' ? {} : { turn_id: call.turnId }),
    call_id: call.use.id,
    ...(call.model === undefined ? {} : { model: call.model }),
    tool,
  } as const;
  let fields: ToolCallFields;
  if (result === undefined) fields = { ...base, status: 'pending' };
  else {
    const failed = result.text === undefined ? undefined : failedText(result.text);
    const error = result.isError ? errorSummary(failed ?? result.text ?? '') || 'error' : failed;
    fields = {
      ...base,
      status: error === undefined ? 'ok' : 'error',
      ...(result.text === undefined ? {} : { output: result.text }),
      ...(error === undefined ? {} : { error }),
      ...(result.images > 0 ? { images: Math.min(result.images, 10_000) } : {}),
    };
  }
  const { envelope, truncated } = toolCallEnvelopeWithin(fields, input);
  if (truncated) f.skip('output_truncated');
  f.emit(envelope, call.element);
}

/** Whether a user message is one the user wrote (a turn), not only tool results. */
function isPrompt(content: unknown): boolean {
  if (typeof content === 'string') return resultMarker(content) === undefined;
  if (!Array.isArray(content)) return false;
  const blocks = (content as readonly unknown[]).filter(isObject);
  if (blocks.some((b) => b['type'] === 'tool_result')) return false;
  const first = blocks.find((b) => b['type'] === 'text');
  return first !== undefined && typeof first['text'] === 'string' && resultMarker(first['text']) === undefined;
}

/** The results in a user message: tool_result blocks by id, and the XML results in order. */
function resultsOf(content: unknown): { byId: Map<string, ToolResult>; xml: ToolResult[] } {
  const byId = new Map<string, ToolResult>();
  const xml: ToolResult[] = [];
  const blocks: readonly unknown[] = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? (content as readonly unknown[]) : [];
  let open: { texts: string[]; images: number } | undefined;
  const close = (): void => {
    if (open) {
      const text = open.texts.join('\n');
      xml.push({ text: text === '' ? undefined : text, isError: false, images: open.images });
    }
    open = undefined;
  };
  for (const b of blocks) {
    if (!isObject(b)) continue;
    if (b['type'] === 'tool_result') {
      close();
      const id = idMember(b, 'tool_use_id');
      if (id === undefined) continue;
      const { text, images } = resultContent(b['content']);
      byId.set(id, { text, isError: b['is_error'] === true, images });
      continue;
    }
    if (b['type'] === 'text' && typeof b['text'] === 'string') {
      const marker = resultMarker(b['text']);
      if (marker !== undefined) {
        close();
        open = { texts: [], images: 0 };
        // The marker and the result can share one block (`[x] Result:\n<output>`).
        const rest = b['text'].replace(/^\[[^\]]*\] Result:\s*/, '');
        if (rest !== '') open.texts.push(rest);
      } else if (open) {
        // Environment details and the next prompt follow the results: not a tool's output.
        if (b['text'].startsWith('<environment_details>') || b['text'].startsWith('<feedback>')) close();
        else open.texts.push(b['text']);
      }
      continue;
    }
    if (b['type'] === 'image' && open) open.images++;
  }
  close();
  return { byId, xml };
}

/** Blocks of a tool-results message that carry what the user said: feedback on a denial, an answer. */
function userSaid(content: unknown): boolean {
  if (!Array.isArray(content)) return false;
  return (content as readonly unknown[]).some((b) => isObject(b) && typeof b['text'] === 'string' && /^<(?:feedback|answer)>/.test(b['text']));
}

function readApiHistory(f: TaskFile, elements: readonly Element[]): void {
  let turns = 0;
  let lastTs: string | undefined;
  // Calls waiting for the next user message: native ones by id, XML ones in order.
  let waiting: PendingCall[] = [];
  const flush = (results: { byId: Map<string, ToolResult>; xml: ToolResult[] } | undefined): void => {
    let x = 0;
    for (const call of waiting) {
      const result = call.use.native ? results?.byId.get(call.use.id) : results?.xml[x++];
      emitCall(f, call, result);
    }
    waiting = [];
  };
  for (const e of elements) {
    const o = e.value;
    if (!isObject(o)) {
      f.bad(e, 'not_an_object', `The message is ${describeValue(o)}, not an object.`);
      continue;
    }
    const role = o['role'];
    const ts = msTime(o['ts']);
    if (ts !== undefined) lastTs = ts;
    if (role === 'user') {
      const content = o['content'];
      if (isPrompt(content)) {
        flush(undefined);
        turns++;
        f.skip('user_prompt');
        continue;
      }
      flush(resultsOf(content));
      if (userSaid(content)) turns++;
      f.skip('tool_results');
      continue;
    }
    if (role !== 'assistant') {
      f.bad(e, 'malformed:message', `\`role\` is ${describeValue(role)}, not "user" or "assistant".`);
      continue;
    }
    // A response the user never answered (the task was closed): its calls did not run, or ran without a recorded result.
    flush(undefined);
    const uses = readToolUses(f, e, o);
    if (uses.length === 0) {
      f.skip('assistant_without_tool_use');
      continue;
    }
    // Old builds wrote no `ts`: the previous message's, else a Cline task id (Date.now() at its start).
    const when = ts ?? lastTs ?? (/^\d{13}$/.test(f.taskId) ? msTime(Number(f.taskId)) : undefined);
    const model = modelOf(o);
    for (const use of uses) {
      if ('fault' in use) {
        f.bad(e, 'malformed:tool_use', use.fault);
        continue;
      }
      if (when === undefined) {
        f.bad(e, 'no_timestamp', '`ts` is missing here and on every message before it, and the task id is no time: the call cannot be placed in time.');
        break;
      }
      if ('json' in use.input && depthOf(use.input.json) > MAX_INPUT_DEPTH) {
        f.bad(e, 'too_deep', `\`input\` of tool use ${use.id} is nested more than ${MAX_INPUT_DEPTH} levels.`);
        continue;
      }
      waiting.push({ use, ts: when, turnId: turns === 0 ? '' : turnId(f.taskId, turns), model, element: e });
    }
  }
  flush(undefined);
}

/** Parses one task file: `ui_messages.json` (usage) or `api_conversation_history.json` (tool calls). */
export function parseTaskFile(path: string, data: Buffer, family: ClineFamily, task: TaskContext = {}): ParsedFile {
  const f = new TaskFile(path, data, family, task);
  const elements = f.elements();
  const kind = basename(path);
  if (elements !== undefined) {
    if (kind === API_HISTORY) readApiHistory(f, elements);
    else readUiMessages(f, elements);
  }
  return { events: f.events, malformed: f.malformed.records, completeBytes: 0, recordsRead: elements?.length ?? 1, skipped: f.skipped };
}
