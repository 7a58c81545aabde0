// Turns the lines of one Claude Code transcript into toolcanon events: one `usage` event per
// distinct API response and one `tool_call` event per tool_use, joined with its tool_result.
// Pure functions: no I/O, never throws on a bad record (it is returned as malformed, with its
// line, or counted when it is a record type skipped on purpose).
import { findSpan } from '../../decode/spans.ts';
import { normaliseTimestamp, stableEventId, toolCallLine, usageLine, type RawToolInput, type ToolCallFields } from '../envelope.ts';
import { describeValue, MalformedRecords, readObject, type RawLine } from '../lines.ts';
import type { ImportedEvent, MalformedRecord } from '../types.ts';
import {
  IGNORED_RECORD_TYPES,
  assistantFault,
  envelopeFault,
  isAssistantRecord,
  isEnvelope,
  isJsonObject,
  isToolResultBlock,
  isToolUseBlock,
  isUserRecord,
  toUsage,
  toolUseFault,
  usageFault,
  userFault,
  type RawAssistantRecord,
  type RawEnvelope,
  type RawToolResultBlock,
  type RawUsage,
  type RawUserRecord,
} from './types.ts';

const HARNESS = 'claude_code';

/**
 * Largest event the importer emits, in bytes of the envelope line: the pipeline's default
 * limit is 4 MiB, and a tool output beyond this is truncated (counted as `output_truncated`)
 * rather than the whole call becoming a dead letter.
 */
export const MAX_EMITTED_EVENT_BYTES = 3.5 * 1024 * 1024;

/** Longest `error` text (UTF-16 units): the first line of an error result, which may be huge. */
const MAX_ERROR_CHARS = 2000;

/**
 * Claude Code writes these as user lines when the user interrupts a response; they end a turn
 * rather than start one.
 */
const INTERRUPT_MARKER = '[Request interrupted by user';

/** The model name Claude Code gives to messages it makes up itself (API errors, interrupts). */
const SYNTHETIC_MODEL = '<synthetic>';

const IGNORED: ReadonlySet<string> = new Set(IGNORED_RECORD_TYPES);

export interface TranscriptContext {
  /** The file's path, used in each event's `source` (`path:line`). */
  readonly path: string;
  /** Session id for lines that carry none (see `fallbackSessionId` in paths.ts). */
  readonly fallbackSessionId: string;
}

export interface ParsedTranscript {
  /** In time order: by timestamp, then by the line that started the event. */
  readonly events: ImportedEvent[];
  /** Lines that could not be read, each once (the first problem found on the line). */
  readonly malformed: MalformedRecord[];
  readonly skipped: Record<string, number>;
}

/** One API response, possibly written over several lines sharing (message.id, requestId). */
interface ResponseState {
  readonly messageId: string;
  readonly requestId: string;
  readonly sessionId: string;
  /** The subagent that made the request ('' for the main agent): its context is its own. */
  readonly agentId: string;
  readonly turnId: string;
  readonly model: string;
  /** Timestamp of the response's first line: stable while the response is still being written. */
  readonly ts: string;
  readonly firstLine: RawLine;
  /** The last line of the response: it completes the event. */
  lastLine: RawLine;
  /** The usage of the line with the largest output count so far. */
  usage: RawUsage;
}

interface ToolUseState {
  readonly id: string;
  readonly name: string;
  readonly input: RawToolInput;
  readonly sessionId: string;
  readonly agentId: string;
  readonly turnId: string;
  readonly model: string;
  readonly ts: string;
  readonly line: RawLine;
  /** Position of the block in its message, to keep parallel calls in their logged order. */
  readonly blockIndex: number;
}

interface ToolResultState {
  readonly block: RawToolResultBlock;
  readonly ts: string | undefined;
  readonly line: RawLine;
}

interface SortableEvent extends ImportedEvent {
  readonly sortMs: number;
  readonly sortLine: number;
  /** Usage before the tool calls of the same line, then calls in block order. */
  readonly sortRank: number;
}

/**
 * The turn a line belongs to is the uuid of the user prompt that started it. Turns are tracked
 * per conversation thread: older builds wrote subagent (sidechain) messages into the main
 * transcript, and a sidechain's prompt must not end the main thread's turn.
 */
function threadOf(record: RawEnvelope): string {
  if (typeof record.agentId === 'string' && record.agentId !== '') return `agent:${record.agentId}`;
  return record.isSidechain === true ? 'sidechain' : 'main';
}

/**
 * True for a user line that starts a turn: a prompt (string content, or text / image blocks),
 * not a tool result, not a harness-injected meta line, not a compaction summary (the turn
 * goes on after an automatic compaction) and not an interrupt marker.
 */
export function isPromptRecord(record: RawUserRecord): boolean {
  if (record.isMeta === true || record.isCompactSummary === true) return false;
  const content = record.message.content;
  if (typeof content === 'string') return !content.startsWith(INTERRUPT_MARKER);
  let prompt = false;
  for (const block of content) {
    if (!isJsonObject(block)) continue;
    const type = block['type'];
    if (type === 'tool_result') return false;
    if (type === 'text') {
      const text = block['text'];
      if (typeof text === 'string' && text.startsWith(INTERRUPT_MARKER)) return false;
      prompt = true;
    } else if (type === 'image' || type === 'document') prompt = true;
  }
  return prompt;
}

/**
 * The tool_result content as text (text blocks joined by newlines) and its image count. A
 * ToolSearch result lists the tools it found as `tool_reference` blocks: each becomes a line with
 * the tool's name, so discovery reads which tools a search named.
 */
export function resultText(content: unknown): { text: string | undefined; images: number } {
  if (typeof content === 'string') return { text: content, images: 0 };
  if (!Array.isArray(content)) return { text: undefined, images: 0 };
  const texts: string[] = [];
  let images = 0;
  for (const block of content as readonly unknown[]) {
    if (!isJsonObject(block)) continue;
    if (block['type'] === 'text' && typeof block['text'] === 'string') texts.push(block['text']);
    else if (block['type'] === 'tool_reference' && typeof block['tool_name'] === 'string') texts.push(block['tool_name']);
    else if (block['type'] === 'image') images++;
  }
  return { text: texts.join('\n'), images };
}

/** The first line of an error result, bounded, for the envelope's `error`. */
function errorSummary(text: string): string {
  const nl = text.indexOf('\n');
  const first = nl < 0 ? text : text.slice(0, nl);
  return first.length > MAX_ERROR_CHARS ? first.slice(0, MAX_ERROR_CHARS) : first;
}

/**
 * The tool's raw input as logged: the verbatim JSON text of the `input` object taken from the
 * line (so big integers, escapes and key order survive), or the string the harness logged.
 */
function rawInputOf(lineText: string, blockIndex: number, input: unknown): RawToolInput {
  if (typeof input === 'string') return { string: input };
  const span = findSpan(lineText, ['message', 'content', blockIndex, 'input']);
  const text = span ? lineText.slice(span.start, span.end) : '';
  // An object is spliced in verbatim. Anything else (never seen: null, an array) travels as
  // its JSON text in a string, so it still reaches raw_input instead of failing the schema.
  if (isJsonObject(input) && text.startsWith('{')) return { json: text };
  return { string: text };
}

function durationMs(startTs: string, endTs: string | undefined): number | undefined {
  if (endTs === undefined) return undefined;
  const ms = Date.parse(endTs) - Date.parse(startTs);
  return Number.isFinite(ms) && ms >= 0 ? Math.round(ms) : undefined;
}

/** Bytes one UTF-16 unit takes inside a JSON string as JSON.stringify writes it, in UTF-8. */
function jsonUnitBytes(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22 || c === 0x5c) return 2; // \" and \\
  if (c < 0x20) return c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdfff) {
    // A well-formed pair is 4 bytes (2 per unit); a lone surrogate is escaped as \udxxx.
    const pair = c <= 0xdbff ? isLow(text.charCodeAt(i + 1)) : isHigh(text.charCodeAt(i - 1));
    return pair ? 2 : 6;
  }
  return 3;
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/**
 * Removes the end of `output` until the event line fits `maxBytes`: walks back from the end
 * adding up the encoded size of what it removes, never splitting a surrogate pair.
 */
function fitOutput(fields: ToolCallFields, input: RawToolInput, maxBytes: number): { line: string; truncated: boolean } {
  let line = toolCallLine(fields, input);
  let bytes = Buffer.byteLength(line, 'utf8');
  if (bytes <= maxBytes || fields.output === undefined) return { line, truncated: false };
  let output = fields.output;
  while (bytes > maxBytes && output.length > 0) {
    let cut = output.length;
    let removed = 0;
    while (cut > 0 && removed < bytes - maxBytes) removed += jsonUnitBytes(output, --cut);
    if (cut > 0 && isHigh(output.charCodeAt(cut - 1)) && isLow(output.charCodeAt(cut))) cut--;
    output = output.slice(0, cut);
    line = toolCallLine({ ...fields, output }, input);
    bytes = Buffer.byteLength(line, 'utf8');
  }
  return { line, truncated: true };
}

function count(skipped: Record<string, number>, key: string): void {
  skipped[key] = (skipped[key] ?? 0) + 1;
}

/** A record type as a counter key: bounded, since it comes from the file. */
function typeKey(type: string): string {
  const t = type.length > 64 ? `${type.slice(0, 64)}…` : type;
  return IGNORED.has(t) ? t : `unknown_type:${t}`;
}

/** Parses the complete lines of one transcript file into events, in time order. */
export function parseTranscript(lines: readonly RawLine[], context: TranscriptContext): ParsedTranscript {
  const skipped: Record<string, number> = {};
  const malformed = new MalformedRecords();
  const turns = new Map<string, string>();
  const responses = new Map<string, ResponseState>();
  const toolUses = new Map<string, ToolUseState>();
  const results = new Map<string, ToolResultState>();

  function sessionOf(record: RawEnvelope): string {
    const id = record.sessionId;
    return typeof id === 'string' && id !== '' && id.length <= 256 ? id : context.fallbackSessionId;
  }

  function readUser(record: RawUserRecord, line: RawLine): void {
    if (isPromptRecord(record)) {
      // A prompt without a usable uuid still ends the previous turn: its calls get ''.
      const uuid = typeof record.uuid === 'string' && record.uuid.length <= 256 ? record.uuid : '';
      turns.set(threadOf(record), uuid);
      return;
    }
    const content = record.message.content;
    if (typeof content === 'string') return;
    const ts = normaliseTimestamp(record.timestamp);
    for (const block of content) {
      if (!isToolResultBlock(block)) {
        if (isJsonObject(block) && block['type'] === 'tool_result') {
          malformed.addLine(line, 'malformed_tool_result', `A tool_result block's \`tool_use_id\` is ${describeValue(block['tool_use_id'])}, not a non-empty string.`);
        }
        continue;
      }
      // The first result of a call is kept: a later copy cannot change an event already written.
      if (results.has(block.tool_use_id)) count(skipped, 'duplicate_tool_result');
      else results.set(block.tool_use_id, { block, ts, line });
    }
  }

  function readAssistant(record: RawAssistantRecord, text: string, line: RawLine): void {
    const ts = normaliseTimestamp(record.timestamp);
    if (ts === undefined) {
      malformed.addLine(line, 'bad_timestamp', `\`timestamp\` is ${describeValue(record.timestamp)}, not an ISO 8601 time.`);
      return;
    }
    const message = record.message;
    const sessionId = sessionOf(record);
    const agentId = typeof record.agentId === 'string' ? record.agentId : '';
    const turnId = turns.get(threadOf(record)) ?? '';
    const model = typeof message.model === 'string' ? message.model : '';

    if (message.usage !== undefined && message.usage !== null) readUsage(record, line, ts, sessionId, agentId, turnId, model);

    for (const [blockIndex, block] of message.content.entries()) {
      if (!isToolUseBlock(block)) {
        if (isJsonObject(block) && block['type'] === 'tool_use') malformed.addLine(line, 'malformed_tool_use', toolUseFault(block));
        continue;
      }
      if (toolUses.has(block.id)) {
        count(skipped, 'duplicate_tool_use');
        continue;
      }
      toolUses.set(block.id, { id: block.id, name: block.name, input: rawInputOf(text, blockIndex, block.input), sessionId, agentId, turnId, model, ts, line, blockIndex });
    }
  }

  function readUsage(record: RawAssistantRecord, line: RawLine, ts: string, sessionId: string, agentId: string, turnId: string, model: string): void {
    const message = record.message;
    const usage = toUsage(message.usage);
    if (usage === undefined) {
      // The line's tool calls are still read: only its usage is unreadable.
      malformed.addLine(line, 'bad_usage', usageFault(message.usage));
      return;
    }
    // Claude Code's own placeholder messages (API errors, interrupts) were never metered.
    if (model === SYNTHETIC_MODEL) {
      count(skipped, 'synthetic_usage');
      return;
    }
    const messageId = typeof message.id === 'string' ? message.id : '';
    if (messageId === '') {
      // Without the id the streamed copies of a response cannot be told apart: counting the
      // usage anyway could count one response several times.
      malformed.addLine(line, 'usage_without_message_id', `\`message.id\` is ${describeValue(message.id)}: the usage cannot be deduplicated without it.`);
      return;
    }
    const requestId = typeof record.requestId === 'string' ? record.requestId : '';
    const key = `${messageId}\u0000${requestId}`;
    const seen = responses.get(key);
    if (seen === undefined) {
      responses.set(key, { messageId, requestId, sessionId, agentId, turnId, model, ts, firstLine: line, lastLine: line, usage });
      return;
    }
    // A streamed response repeats its usage on every line; early lines carry a partial
    // output_tokens. Keep the largest output count (ties: the later line), i.e. the final one.
    seen.lastLine = line;
    if (usage.output_tokens >= seen.usage.output_tokens) seen.usage = usage;
  }

  for (const line of lines) {
    // A byte order mark at the start of the file is not part of the first record.
    const text = line.lineNo === 1 && line.text.charCodeAt(0) === 0xfeff ? line.text.slice(1) : line.text;
    const parsed = readObject(text);
    if (!parsed.ok) {
      malformed.addLine(line, parsed.problem, parsed.detail);
      continue;
    }
    const record = parsed.value;
    if (!isEnvelope(record)) {
      malformed.addLine(line, 'malformed_record', envelopeFault(record) ?? 'The record is no transcript record.');
      continue;
    }
    if (record.type === 'assistant') {
      if (isAssistantRecord(record)) readAssistant(record, text, line);
      else malformed.addLine(line, 'malformed_assistant', assistantFault(record) ?? 'The record is no assistant record.');
    } else if (record.type === 'user') {
      if (isUserRecord(record)) readUser(record, line);
      else malformed.addLine(line, 'malformed_user', userFault(record) ?? 'The record is no user record.');
    } else count(skipped, typeKey(record.type));
  }

  const events: SortableEvent[] = [];
  const source = (line: RawLine): string => `${context.path}:${line.lineNo}`;

  for (const r of responses.values()) {
    const u = r.usage;
    const line = usageLine({
      event_id: stableEventId(HARNESS, r.messageId, r.requestId),
      ts: r.ts,
      harness: HARNESS,
      session_id: r.sessionId,
      ...(r.agentId === '' ? {} : { agent_id: r.agentId }),
      turn_id: r.turnId,
      model: r.model,
      request_id: r.requestId !== '' ? r.requestId : r.messageId,
      input_tokens: u.input_tokens,
      output_tokens: u.output_tokens,
      ...(u.cache_read_input_tokens === undefined ? {} : { cache_read_tokens: u.cache_read_input_tokens }),
      ...(u.cache_creation_input_tokens === undefined ? {} : { cache_write_tokens: u.cache_creation_input_tokens }),
    });
    events.push({ line, source: source(r.lastLine), endOffset: r.lastLine.endOffset, sortMs: Date.parse(r.ts), sortLine: r.firstLine.lineNo, sortRank: 0 });
  }

  for (const call of toolUses.values()) {
    const result = results.get(call.id);
    results.delete(call.id);
    const base = {
      event_id: stableEventId(HARNESS, call.sessionId, call.id),
      ts: call.ts,
      harness: HARNESS,
      session_id: call.sessionId,
      ...(call.agentId === '' ? {} : { agent_id: call.agentId }),
      turn_id: call.turnId,
      call_id: call.id,
      model: call.model,
      tool: call.name,
    } as const;
    let fields: ToolCallFields;
    let completedBy = call.line;
    if (result === undefined) fields = { ...base, status: 'pending' };
    else {
      const { text, images } = resultText(result.block.content);
      const isError = result.block.is_error === true;
      const duration = durationMs(call.ts, result.ts);
      fields = {
        ...base,
        status: isError ? 'error' : 'ok',
        ...(text === undefined ? {} : { output: text }),
        ...(isError && text !== undefined && text !== '' ? { error: errorSummary(text) } : {}),
        ...(duration === undefined ? {} : { duration_ms: duration }),
        ...(images > 0 ? { images } : {}),
      };
      if (result.line.endOffset > completedBy.endOffset) completedBy = result.line;
    }
    const { line, truncated } = fitOutput(fields, call.input, MAX_EMITTED_EVENT_BYTES);
    if (truncated) count(skipped, 'output_truncated');
    events.push({ line, source: source(completedBy), endOffset: completedBy.endOffset, sortMs: Date.parse(call.ts), sortLine: call.line.lineNo, sortRank: 1 + call.blockIndex });
  }

  // Results whose tool_use is not in this file (a resumed session's earlier file, say).
  if (results.size > 0) skipped['tool_result_without_tool_use'] = results.size;

  events.sort((a, b) => a.sortMs - b.sortMs || a.sortLine - b.sortLine || a.sortRank - b.sortRank);
  return { events: events.map(({ line, source: s, endOffset }) => ({ line, source: s, endOffset })), malformed: malformed.records, skipped };
}
