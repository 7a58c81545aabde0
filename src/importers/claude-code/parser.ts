// Turns the lines of one Claude Code transcript into toolcanon events: one `usage` event per
// distinct API response and one `tool_call` event per tool_use, joined with its tool_result.
// Streaming, in two passes over the lines (TranscriptIndex, then TranscriptParser): each event
// is handed out as soon as it is final. No I/O, never throws on a bad record (it is returned as
// malformed, with its line, or counted when it is a record type skipped on purpose).
import { findSpan } from '../../util/json-spans.ts';
import { MAX_EVENT_LINE_BYTES, normaliseTimestamp, toolCallEnvelope, usageEnvelope, type RawToolInput, type ToolCallFields, type Envelope } from '../envelope.ts';
import { describeValue, MalformedStream, readObject, type RawLine } from '../lines.ts';
import { claudeCodeCallEventId, claudeCodeUsageEventId } from './ids.ts';
import type { ImportOutput, ImportedEvent, LineParser, LineReading, MalformedRecord } from '../types.ts';
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
 * Largest event the importer emits, in bytes of the envelope line (the importers' shared limit,
 * envelope.ts). Claude Code cuts an output beyond it without a marker (fitOutput), as it always has.
 */
export const MAX_EMITTED_EVENT_BYTES = MAX_EVENT_LINE_BYTES;

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
  readonly firstLine: LinePos;
  /** The last line of the response: it completes the event. */
  lastLine: LinePos;
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
  readonly line: LinePos;
  /** Position of the block in its message, to keep parallel calls in their logged order. */
  readonly blockIndex: number;
  /** The call's first result, once read. */
  result: ToolResultState | undefined;
}

interface ToolResultState {
  readonly block: RawToolResultBlock;
  readonly ts: string | undefined;
  readonly line: LinePos;
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
function fitOutput(fields: ToolCallFields, input: RawToolInput, maxBytes: number): { envelope: Envelope; truncated: boolean } {
  let envelope = toolCallEnvelope(fields, input);
  if (fields.output === undefined || envelope.mostBytes <= maxBytes) return { envelope, truncated: false };
  let bytes = Buffer.byteLength(envelope.text, 'utf8');
  if (bytes <= maxBytes) return { envelope, truncated: false };
  let output = fields.output;
  while (bytes > maxBytes && output.length > 0) {
    let cut = output.length;
    let removed = 0;
    while (cut > 0 && removed < bytes - maxBytes) removed += jsonUnitBytes(output, --cut);
    if (cut > 0 && isHigh(output.charCodeAt(cut - 1)) && isLow(output.charCodeAt(cut))) cut--;
    output = output.slice(0, cut);
    envelope = toolCallEnvelope({ ...fields, output }, input);
    bytes = Buffer.byteLength(envelope.text, 'utf8');
  }
  return { envelope, truncated: true };
}

function count(skipped: Record<string, number>, key: string): void {
  skipped[key] = (skipped[key] ?? 0) + 1;
}

/** A record type as a counter key: bounded, since it comes from the file. */
function typeKey(type: string): string {
  const t = type.length > 64 ? `${type.slice(0, 64)}…` : type;
  return IGNORED.has(t) ? t : `unknown_type:${t}`;
}

/** Where a line is in the file: what a held record keeps of it (not its text or bytes). */
interface LinePos {
  readonly lineNo: number;
  readonly endOffset: number;
}

function posOf(line: RawLine): LinePos {
  return { lineNo: line.lineNo, endOffset: line.endOffset };
}

/** The text a line's record is read from: a byte order mark at the start of the file is not part of it. */
function recordText(line: RawLine): string {
  return line.lineNo === 1 && line.text.charCodeAt(0) === 0xfeff ? line.text.slice(1) : line.text;
}

/**
 * A 52-bit hash of an id, for the first pass's maps: two ids that collide share the latest
 * line of both, which only makes the parser wait longer, never emit early.
 */
function hashId(text: string): number {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 15);
  }
  return (h1 >>> 0) * 0x100000 + ((h2 >>> 0) & 0xfffff);
}

function responseKey(messageId: string, requestId: string): string {
  return `${messageId}\u0000${requestId}`;
}

/**
 * The first pass over a transcript: what the streaming parser must know about the rest of the
 * file to hand an event out the moment it is final and still give exactly the events, in
 * exactly the order, that reading the whole file gives. Three things in a transcript can
 * change an event long after it started, and one thing can reorder events:
 *
 * - another line of the same response (message.id, requestId) can come later and raise its
 *   output count and move its `source` (`lastResponseLine`);
 * - a tool_result can come later and complete a call (`lastResultLine`); without knowing that
 *   none will, every unanswered call would be held to the end, and all events after it too;
 * - a tool_use can come after its result (a result kept waiting for it, `lastToolUseLine`);
 * - events are in time order, and a line's timestamp may be earlier than one before it (older
 *   builds interleaved sidechains): `descents` are the lines whose time is earlier than the
 *   latest time before them. An event can be handed out once no later line can start an
 *   earlier one: every later line that is no descent starts at or after the latest time seen.
 *
 * It keeps, per response, call and result id, a number of the line (ids hashed to numbers);
 * no text. Every check is conservative: it records any line that could be what the parser
 * reads (an `assistant` or `user` record, whatever else is wrong with it), so a superset of
 * the lines the parser uses, and a collision or a record the parser then rejects only delays
 * an event.
 */
export class TranscriptIndex {
  private readonly lastResponseLine = new Map<number, number>();
  private readonly lastResultLine = new Map<number, number>();
  private readonly lastToolUseLine = new Map<number, number>();
  private latestMs = Number.NEGATIVE_INFINITY;
  private readonly descentLines: number[] = [];
  private readonly descentMs: number[] = [];
  /** descentMinMs[i]: the earliest time of descents i and after (filled by `seal`). */
  private descentMinMs: number[] = [];
  private next = 0;
  private sealed = false;
  /** The response (hashed key) of the last assistant line with a message id: the one still streamed, if any. */
  lastResponse: number | undefined;

  /** Reads one line of the first pass. */
  scan(line: RawLine): void {
    let value: unknown;
    try {
      value = JSON.parse(recordText(line));
    } catch {
      return;
    }
    if (!isJsonObject(value)) return;
    const message = value['message'];
    if (value['type'] === 'assistant') {
      const raw = value['timestamp'];
      const ts = normaliseTimestamp(typeof raw === 'string' ? raw : undefined);
      if (ts !== undefined) {
        const ms = Date.parse(ts);
        if (ms < this.latestMs) {
          this.descentLines.push(line.lineNo);
          this.descentMs.push(ms);
        } else this.latestMs = ms;
      }
      if (!isJsonObject(message)) return;
      const id = message['id'];
      if (typeof id === 'string') {
        const requestId = value['requestId'];
        const key = hashId(responseKey(id, typeof requestId === 'string' ? requestId : ''));
        this.lastResponseLine.set(key, line.lineNo);
        this.lastResponse = key;
      }
      const content = message['content'];
      if (Array.isArray(content)) {
        for (const block of content as readonly unknown[]) {
          if (isJsonObject(block) && block['type'] === 'tool_use' && typeof block['id'] === 'string') this.lastToolUseLine.set(hashId(block['id']), line.lineNo);
        }
      }
    } else if (value['type'] === 'user' && isJsonObject(message)) {
      const content = message['content'];
      if (!Array.isArray(content)) return;
      for (const block of content as readonly unknown[]) {
        if (isJsonObject(block) && block['type'] === 'tool_result' && typeof block['tool_use_id'] === 'string') this.lastResultLine.set(hashId(block['tool_use_id']), line.lineNo);
      }
    }
  }

  private seal(): void {
    this.sealed = true;
    const n = this.descentMs.length;
    this.descentMinMs = new Array<number>(n);
    let min = Number.POSITIVE_INFINITY;
    for (let i = n - 1; i >= 0; i--) {
      min = Math.min(min, this.descentMs[i] ?? min);
      this.descentMinMs[i] = min;
    }
  }

  /** The earliest time a line after `lineNo` can start an event at, as far as order goes. */
  earliestAfter(lineNo: number): number {
    if (!this.sealed) this.seal();
    while (this.next < this.descentLines.length && (this.descentLines[this.next] ?? 0) <= lineNo) this.next++;
    return this.descentMinMs[this.next] ?? Number.POSITIVE_INFINITY;
  }

  /** Whether a line after `lineNo` may still be written for this response. */
  hasResponseAfter(messageId: string, requestId: string, lineNo: number): boolean {
    return (this.lastResponseLine.get(hashId(responseKey(messageId, requestId))) ?? 0) > lineNo;
  }

  /** Whether a line after `lineNo` may still hold a result for this call. */
  hasResultAfter(toolUseId: string, lineNo: number): boolean {
    return (this.lastResultLine.get(hashId(toolUseId)) ?? 0) > lineNo;
  }

  /** Whether a line after `lineNo` may still hold this call's tool_use. */
  hasToolUseAfter(toolUseId: string, lineNo: number): boolean {
    return (this.lastToolUseLine.get(hashId(toolUseId)) ?? 0) > lineNo;
  }
}

/** An event started but not yet handed out: held until final and first in time order. */
type HeldEvent = { readonly kind: 'usage'; readonly response: ResponseState; readonly sortMs: number; readonly sortLine: number; readonly sortRank: number } | { readonly kind: 'call'; readonly call: ToolUseState; readonly sortMs: number; readonly sortLine: number; readonly sortRank: number };

/** Time order: by timestamp, then the line that started the event, usage before the line's calls, then block order. */
function isBefore(a: HeldEvent, b: HeldEvent): boolean {
  if (a.sortMs !== b.sortMs) return a.sortMs < b.sortMs;
  if (a.sortLine !== b.sortLine) return a.sortLine < b.sortLine;
  return a.sortRank < b.sortRank;
}

/** A binary min-heap of held events in time order. */
class HeldEvents {
  private readonly heap: HeldEvent[] = [];

  get size(): number {
    return this.heap.length;
  }

  peek(): HeldEvent | undefined {
    return this.heap[0];
  }

  push(e: HeldEvent): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent] as HeldEvent;
      if (!isBefore(e, p)) break;
      h[i] = p;
      i = parent;
    }
    h[i] = e;
  }

  /** The events held, in no order. */
  items(): readonly HeldEvent[] {
    return this.heap;
  }

  pop(): HeldEvent | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (top === undefined || last === undefined || h.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const child = r < h.length && isBefore(h[r] as HeldEvent, h[l] as HeldEvent) ? r : l;
      if (!isBefore(h[child] as HeldEvent, last)) break;
      h[i] = h[child] as HeldEvent;
      i = child;
    }
    h[i] = last;
    return top;
  }
}

/**
 * The streaming parser of one transcript: reads its lines in order and hands each event to the
 * output as soon as it is final (no later line can change it, as the TranscriptIndex of the
 * same file says) and no later line can start an earlier one. It holds the calls still waiting
 * for their result, the responses that may still be written again, results waiting for their
 * tool_use, and the ids of the calls and results seen (a later copy is counted as a duplicate,
 * as the whole-file parse counts it): for a well-formed transcript, a handful of events.
 */
export class TranscriptParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  private readonly malformed: MalformedStream;
  private readonly turns = new Map<string, string>();
  /** Responses started and not yet handed out, by (message.id, requestId). */
  private readonly responses = new Map<string, ResponseState>();
  /** Calls started and not yet handed out, by tool_use id. */
  private readonly calls = new Map<string, ToolUseState>();
  /** Every tool_use id read (a later copy is a duplicate). */
  private readonly toolUseIds = new Set<string>();
  /** Every tool_use id a first result was read for (a later result is a duplicate). */
  private readonly resultIds = new Set<string>();
  /** First results read before their tool_use, while one may still come. */
  private readonly waitingResults = new Map<string, ToolResultState>();
  private unjoinedResults = 0;
  private readonly queue = new HeldEvents();
  private lineNo = 0;

  constructor(
    private readonly context: TranscriptContext,
    private readonly index: TranscriptIndex,
    private readonly output: ImportOutput,
    private readonly live?: { readonly settledBefore: number },
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
  }

  /** Events started and not yet handed out. */
  get heldEvents(): number {
    return this.queue.size;
  }

  line(line: RawLine): void {
    this.lineNo = line.lineNo;
    this.read(line);
    this.release(false);
  }

  /** After `end()` of a parser made live: the events kept back (see LineParser.held). */
  held: { events: number; fromOffset: number } | undefined;

  end(): void {
    this.release(true);
    if (this.live !== undefined && this.queue.size > 0) {
      let fromOffset = Number.POSITIVE_INFINITY;
      for (const e of this.queue.items()) {
        const end = e.kind === 'usage' ? e.response.lastLine.endOffset : (e.call.result?.line.endOffset ?? e.call.line.endOffset);
        fromOffset = Math.min(fromOffset, end - 1);
      }
      this.held = { events: this.queue.size, fromOffset };
    }
    // Results whose tool_use is not in this file (a resumed session's earlier file, say).
    const unjoined = this.unjoinedResults + this.waitingResults.size;
    this.waitingResults.clear();
    if (unjoined > 0) this.skipped['tool_result_without_tool_use'] = unjoined;
  }

  private read(line: RawLine): void {
    const text = recordText(line);
    const parsed = readObject(text);
    if (!parsed.ok) {
      this.malformed.addLine(line, parsed.problem, parsed.detail);
      return;
    }
    const record = parsed.value;
    if (!isEnvelope(record)) {
      this.malformed.addLine(line, 'malformed_record', envelopeFault(record) ?? 'The record is no transcript record.');
      return;
    }
    if (record.type === 'assistant') {
      if (isAssistantRecord(record)) this.readAssistant(record, text, line);
      else this.malformed.addLine(line, 'malformed_assistant', assistantFault(record) ?? 'The record is no assistant record.');
    } else if (record.type === 'user') {
      if (isUserRecord(record)) this.readUser(record, line);
      else this.malformed.addLine(line, 'malformed_user', userFault(record) ?? 'The record is no user record.');
    } else count(this.skipped, typeKey(record.type));
  }

  private sessionOf(record: RawEnvelope): string {
    const id = record.sessionId;
    return typeof id === 'string' && id !== '' && id.length <= 256 ? id : this.context.fallbackSessionId;
  }

  private readUser(record: RawUserRecord, line: RawLine): void {
    if (isPromptRecord(record)) {
      // A prompt without a usable uuid still ends the previous turn: its calls get ''.
      const uuid = typeof record.uuid === 'string' && record.uuid.length <= 256 ? record.uuid : '';
      this.turns.set(threadOf(record), uuid);
      return;
    }
    const content = record.message.content;
    if (typeof content === 'string') return;
    const ts = normaliseTimestamp(record.timestamp);
    for (const block of content) {
      if (!isToolResultBlock(block)) {
        if (isJsonObject(block) && block['type'] === 'tool_result') {
          this.malformed.addLine(line, 'malformed_tool_result', `A tool_result block's \`tool_use_id\` is ${describeValue(block['tool_use_id'])}, not a non-empty string.`);
        }
        continue;
      }
      // The first result of a call is kept: a later copy cannot change an event already written.
      const id = block.tool_use_id;
      if (this.resultIds.has(id)) {
        count(this.skipped, 'duplicate_tool_result');
        continue;
      }
      this.resultIds.add(id);
      const result: ToolResultState = { block, ts, line: posOf(line) };
      const call = this.calls.get(id);
      if (call !== undefined && call.result === undefined) call.result = result;
      else if (this.toolUseIds.has(id)) {
        // Unreachable: a call is held while the first pass saw a result for it on a later line.
        this.unjoinedResults++;
      } else if (this.index.hasToolUseAfter(id, line.lineNo)) this.waitingResults.set(id, result);
      else this.unjoinedResults++;
    }
  }

  private readAssistant(record: RawAssistantRecord, text: string, line: RawLine): void {
    const ts = normaliseTimestamp(record.timestamp);
    if (ts === undefined) {
      this.malformed.addLine(line, 'bad_timestamp', `\`timestamp\` is ${describeValue(record.timestamp)}, not an ISO 8601 time.`);
      return;
    }
    const message = record.message;
    const sessionId = this.sessionOf(record);
    const agentId = typeof record.agentId === 'string' ? record.agentId : '';
    const turnId = this.turns.get(threadOf(record)) ?? '';
    const model = typeof message.model === 'string' ? message.model : '';
    const sortMs = Date.parse(ts);

    if (message.usage !== undefined && message.usage !== null) this.readUsage(record, line, ts, sortMs, sessionId, agentId, turnId, model);

    for (const [blockIndex, block] of message.content.entries()) {
      if (!isToolUseBlock(block)) {
        if (isJsonObject(block) && block['type'] === 'tool_use') this.malformed.addLine(line, 'malformed_tool_use', toolUseFault(block));
        continue;
      }
      if (this.toolUseIds.has(block.id)) {
        count(this.skipped, 'duplicate_tool_use');
        continue;
      }
      this.toolUseIds.add(block.id);
      const result = this.waitingResults.get(block.id);
      if (result !== undefined) this.waitingResults.delete(block.id);
      const call: ToolUseState = { id: block.id, name: block.name, input: rawInputOf(text, blockIndex, block.input), sessionId, agentId, turnId, model, ts, line: posOf(line), blockIndex, result };
      this.calls.set(block.id, call);
      this.queue.push({ kind: 'call', call, sortMs, sortLine: line.lineNo, sortRank: 1 + blockIndex });
    }
  }

  private readUsage(record: RawAssistantRecord, line: RawLine, ts: string, sortMs: number, sessionId: string, agentId: string, turnId: string, model: string): void {
    const message = record.message;
    const usage = toUsage(message.usage);
    if (usage === undefined) {
      // The line's tool calls are still read: only its usage is unreadable.
      this.malformed.addLine(line, 'bad_usage', usageFault(message.usage));
      return;
    }
    // Claude Code's own placeholder messages (API errors, interrupts) were never metered.
    if (model === SYNTHETIC_MODEL) {
      count(this.skipped, 'synthetic_usage');
      return;
    }
    const messageId = typeof message.id === 'string' ? message.id : '';
    if (messageId === '') {
      // Without the id the streamed copies of a response cannot be told apart: counting the
      // usage anyway could count one response several times.
      this.malformed.addLine(line, 'usage_without_message_id', `\`message.id\` is ${describeValue(message.id)}: the usage cannot be deduplicated without it.`);
      return;
    }
    const requestId = typeof record.requestId === 'string' ? record.requestId : '';
    const key = responseKey(messageId, requestId);
    const seen = this.responses.get(key);
    if (seen === undefined) {
      const response: ResponseState = { messageId, requestId, sessionId, agentId, turnId, model, ts, firstLine: posOf(line), lastLine: posOf(line), usage };
      this.responses.set(key, response);
      this.queue.push({ kind: 'usage', response, sortMs, sortLine: line.lineNo, sortRank: 0 });
      return;
    }
    // A streamed response repeats its usage on every line; early lines carry a partial
    // output_tokens. Keep the largest output count (ties: the later line), i.e. the final one.
    seen.lastLine = posOf(line);
    if (usage.output_tokens >= seen.usage.output_tokens) seen.usage = usage;
  }

  /** Whether no later line can change the event. */
  private isFinal(e: HeldEvent): boolean {
    if (this.isOpen(e)) return false;
    if (e.kind === 'usage') return !this.index.hasResponseAfter(e.response.messageId, e.response.requestId, this.lineNo);
    return e.call.result !== undefined || !this.index.hasResultAfter(e.call.id, this.lineNo);
  }

  /**
   * Whether a line appended to a live file may still change the event (kept back then): a call
   * without a result in the file, and the response of the file's last assistant line (its
   * streamed copies may go on, results of its calls written in between; a line of another
   * response after it means it was written out).
   * An event that ends before `settledBefore` was handed out by an earlier run as it was
   * (the file was still long enough: an abandoned call, a session ended there) and stays so.
   */
  private isOpen(e: HeldEvent): boolean {
    const live = this.live;
    if (live === undefined) return false;
    if (e.kind === 'usage') return this.index.lastResponse === hashId(responseKey(e.response.messageId, e.response.requestId)) && e.response.lastLine.endOffset > live.settledBefore;
    return e.call.result === undefined && e.call.line.endOffset > live.settledBefore;
  }

  /** Hands out the held events that are final and first in time order (all of them at the end). */
  private release(atEnd: boolean): void {
    const earliest = atEnd ? Number.POSITIVE_INFINITY : this.index.earliestAfter(this.lineNo);
    for (let e = this.queue.peek(); e !== undefined; e = this.queue.peek()) {
      if (!atEnd && (e.sortMs > earliest || !this.isFinal(e))) return;
      if (atEnd && this.isOpen(e)) return;
      this.queue.pop();
      if (e.kind === 'usage') {
        this.responses.delete(responseKey(e.response.messageId, e.response.requestId));
        this.output.event(this.usageEvent(e.response));
      } else {
        this.calls.delete(e.call.id);
        this.output.event(this.callEvent(e.call));
      }
    }
  }

  private source(line: LinePos): string {
    return `${this.context.path}:${line.lineNo}`;
  }

  private usageEvent(r: ResponseState): ImportedEvent {
    const u = r.usage;
    const line = usageEnvelope({
      event_id: claudeCodeUsageEventId(r.sessionId, r.requestId, r.messageId),
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
    return { envelope: line, source: this.source(r.lastLine), endOffset: r.lastLine.endOffset };
  }

  private callEvent(call: ToolUseState): ImportedEvent {
    const result = call.result;
    const base = {
      event_id: claudeCodeCallEventId(call.sessionId, call.id),
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
    const { envelope, truncated } = fitOutput(fields, call.input, MAX_EMITTED_EVENT_BYTES);
    if (truncated) count(this.skipped, 'output_truncated');
    return { envelope, source: this.source(completedBy), endOffset: completedBy.endOffset };
  }
}

/** The streaming reading of one transcript: the first pass fills the index the parser uses. */
export function transcriptReading(context: TranscriptContext): LineReading & { readonly index: TranscriptIndex } {
  const index = new TranscriptIndex();
  return {
    index,
    scan: (line) => index.scan(line),
    parser: (output, live) => new TranscriptParser(context, index, output, live),
  };
}

/** Parses the complete lines of one transcript file into events, in time order (both passes over `lines`). */
export function parseTranscript(lines: readonly RawLine[], context: TranscriptContext): ParsedTranscript {
  const reading = transcriptReading(context);
  for (const line of lines) reading.index.scan(line);
  const events: ImportedEvent[] = [];
  const malformed: MalformedRecord[] = [];
  const parser = reading.parser({ event: (e) => events.push(e), malformed: (m) => malformed.push(m) });
  for (const line of lines) parser.line(line);
  parser.end();
  return { events, malformed, skipped: parser.skipped };
}
