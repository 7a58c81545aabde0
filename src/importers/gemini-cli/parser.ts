// Turns one Gemini CLI session file into toolcanon events: a tool_call per ToolCallRecord and a
// usage event per gemini message with tokens. Reads the JSONL log (one record per line, a
// message appended again whole each time it changes), streamed in two passes (GeminiIndex, then
// GeminiParser), and the legacy `.json` document (one ConversationRecord, its messages through
// the same two passes). Pure: bytes in, events, malformed records and counts out; never throws
// on a bad record.
import { findSpan, indexArray, indexObject } from '../../util/json-spans.ts';
import { errorSummary, normaliseTimestamp, type RawToolInput, stableEventId, type ToolCallFields, toolCallEnvelopeWithin, type UsageFields, usageEnvelope, type Envelope } from '../envelope.ts';
import { describeValue, lineAt, MalformedStream, readObject, type ObjectReading, type RawLine } from '../lines.ts';
import { LastLines, parseLinesWith, ReleaseQueue, type Held } from '../stream.ts';
import type { ImportOutput, ImportedEvent, LineParser, LineReading, MalformedRecord, ParsedFile } from '../types.ts';
import { fileStem, parentSessionOf } from './paths.ts';
import {
  MESSAGE_TYPES,
  mcpServerOf,
  messageFault,
  metadataFault,
  readMessage,
  readMetadata,
  readTokens,
  readToolCall,
  readToolResult,
  recordKind,
  tokensFault,
  toolCallFault,
  unknownRecordFault,
  type SessionMetadata,
  type ToolCallRecord,
  type TokensSummary,
} from './types.ts';
import { MAX_ID_CHARS, isObject, type JsonObject } from '../json.ts';

const HARNESS = 'gemini_cli';



/** One raw record: a JSONL line, or the document or one of its messages in a `.json` file. */
interface RawRecord {
  /** The record's own text (a line, or the slice of the document holding the message), BOM removed. */
  readonly text: string;
  /** The record's bytes as read, for its dead letter. */
  readonly raw: string;
  readonly reading: ObjectReading;
  /** 1-based line where the record starts. */
  readonly lineNo: number;
  readonly endOffset: number;
  /** Set on a `.json` document that parses but holds no readable `messages` array. */
  readonly documentFault?: string;
}

/** The records of a file and how much of it may be skipped by the next import. */
interface FileRecords {
  readonly records: RawRecord[];
  readonly completeBytes: number;
  /** The `.json` document itself, which holds the session metadata (undefined for JSONL). */
  readonly document: JsonObject | undefined;
  /** A `.json` file that does not parse yet (being rewritten): left for the next import. */
  readonly incomplete: boolean;
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A line of a JSONL file as a record (a byte order mark before the first one is not part of it). */
function recordOfLine(l: RawLine): RawRecord {
  const text = l.lineNo === 1 ? stripBom(l.text) : l.text;
  return { text, raw: l.text, reading: readObject(text), lineNo: l.lineNo, endOffset: l.endOffset };
}

/**
 * A legacy `.json` session: one ConversationRecord, rewritten whole at every change (pretty
 * printed), so no prefix of it may be skipped: completeBytes is 0 and every event ends at the
 * file's end, so a changed file re-emits all its events (their ids make that harmless). Each
 * message is a record of its own, at the line where it starts.
 */
function readJsonDocument(data: Buffer): FileRecords {
  const original = data.toString('utf8');
  const text = stripBom(original);
  const reading = readObject(text);
  if (!reading.ok && reading.problem === 'invalid_json') return { records: [], completeBytes: 0, document: undefined, incomplete: text.trim() !== '' };
  const whole: RawRecord = { text, raw: original, reading, lineNo: 1, endOffset: data.length };
  if (!reading.ok) return { records: [whole], completeBytes: 0, document: undefined, incomplete: false };
  const messagesSpan = indexObject(text)?.members.get('messages');
  const spans = messagesSpan ? indexArray(text, messagesSpan.start) : undefined;
  const messages = reading.value['messages'];
  if (!Array.isArray(messages) || spans === undefined || spans.length !== messages.length) {
    return { records: [{ ...whole, documentFault: documentFault(reading.value) }], completeBytes: 0, document: undefined, incomplete: false };
  }
  // Spans come in document order: the line of each is counted on from the previous one.
  let lineNo = 1;
  let counted = 0;
  const records = spans.map((span): RawRecord => {
    lineNo += lineAt(text.slice(counted, span.start), span.start - counted) - 1;
    counted = span.start;
    const slice = text.slice(span.start, span.end);
    return { text: slice, raw: slice, reading: readObject(slice), lineNo, endOffset: data.length };
  });
  return { records, completeBytes: 0, document: reading.value, incomplete: false };
}

/** A record's time, or why it has none. */
type RecordTime = { readonly ts: string } | { readonly ts: undefined; readonly problem: 'bad_timestamp' | 'no_timestamp'; readonly detail: string };

function readTime(value: unknown, field: string): RecordTime {
  const ts = typeof value === 'string' ? normaliseTimestamp(value) : undefined;
  if (ts !== undefined) return { ts };
  if (value === undefined || value === null) return { ts: undefined, problem: 'no_timestamp', detail: `\`${field}\` is ${describeValue(value)}: the record cannot be placed in time.` };
  return { ts: undefined, problem: 'bad_timestamp', detail: `\`${field}\` is ${describeValue(value)}, not an RFC 3339 time.` };
}

/** Where a record is: what held state keeps of it (not its text). */
interface RecordPos {
  readonly lineNo: number;
  readonly endOffset: number;
}

function posOf(record: RawRecord): RecordPos {
  return { lineNo: record.lineNo, endOffset: record.endOffset };
}

interface MessageState {
  readonly id: string;
  /** Order of the message's first record among the file's messages (the order of usage events on one line). */
  readonly seq: number;
  readonly turnId: string;
  /** The message's time, from the first version that gave one (a message keeps its time). */
  ts: string | undefined;
  model: string | undefined;
  isGemini: boolean;
  /** The last figures seen, and the record where they first appeared (it completes the event). */
  tokens?: { readonly value: TokensSummary; readonly record: RecordPos };
  /** A version's tokens were a dead letter: the message is not also counted as without tokens. */
  tokensMalformed: boolean;
}

interface CallState {
  /** The version of the call last seen, and the record where that version first appeared. */
  call: ToolCallRecord;
  record: RecordPos;
  rawArgs: RawToolInput;
  versionKey: string;
  model: string | undefined;
  readonly turnId: string;
  /** The time of the call's first version: stable while the file grows. */
  readonly ts: string;
  /** Order of the call's first version among the file's calls (the order of a record's calls). */
  readonly seq: number;
}


/**
 * The tool name as the events carry it. Gemini CLI registers an MCP tool under its bare name
 * (`server__tool` only when two servers clash) and logs that name; its display name still says
 * `<tool> (<server> MCP Server)`. A bare MCP name is qualified as `server__tool` so the
 * projection attributes it to its server (SPEC §2); a built-in tool keeps its name.
 */
export function eventToolName(call: Pick<ToolCallRecord, 'name' | 'displayName'>): string {
  const server = mcpServerOf(call.displayName);
  if (server === undefined || call.name.startsWith(`${server}__`)) return call.name;
  const qualified = `${server}__${call.name}`;
  return qualified.length <= MAX_ID_CHARS ? qualified : call.name;
}

/** The envelope status and error of a call from its `status` and `result`. */
export function callOutcome(call: Pick<ToolCallRecord, 'status' | 'result' | 'resultDisplay'>): { status: 'ok' | 'error' | 'pending'; error?: string } {
  switch (call.status) {
    case 'success':
      return { status: 'ok' };
    case 'error':
    case 'cancelled': {
      const display = typeof call.resultDisplay === 'string' ? call.resultDisplay : undefined;
      const message = readToolResult(call.result).error ?? display;
      const summary = message === undefined ? '' : errorSummary(message);
      if (call.status === 'error') return { status: 'error', error: summary === '' ? 'error' : summary };
      return { status: 'error', error: summary === '' ? 'cancelled' : `cancelled: ${summary}` };
    }
    default:
      // validating, scheduled, executing, awaiting_approval: the call has not finished.
      return { status: 'pending' };
  }
}

/** The session of a file: its metadata's id, or its name; a subagent's file belongs to its parent's session. */
interface FileSession {
  readonly sessionId: string;
  readonly fileAgentId: string | undefined;
}

function fileSession(path: string, metadata: SessionMetadata | undefined): FileSession {
  const ownId = metadata?.sessionId ?? fileStem(path);
  const parent = parentSessionOf(path);
  return { sessionId: parent ?? ownId, fileAgentId: parent === undefined ? undefined : ownId };
}

const messageKey = (id: string): string => `m:${id}`;
const callKey = (id: string): string => `c:${id}`;

/**
 * The first pass over a session file's records: the session metadata (the first record that is
 * one; the document's own for a `.json` file), and for every message id and tool call id the
 * last record that names it (a message is appended again whole each time it changes, with its
 * calls). A number per id, no text; it records every message record's id and every `toolCalls`
 * element's id, whatever else is wrong with them, so a superset of the records the parser
 * reads, and a collision or a record the parser then rejects only makes it hold an item longer.
 */
export class GeminiIndex {
  private readonly lastLines = new LastLines();
  private metadataFound = false;
  metadata: SessionMetadata | undefined;

  /** A `.json` document: its metadata is the document's. */
  setDocument(document: JsonObject): void {
    this.metadata = readMetadata(document);
    this.metadataFound = true;
  }

  scan(line: RawLine): void {
    this.scanRecord(recordOfLine(line));
  }

  scanRecord(record: RawRecord): void {
    if (!record.reading.ok) return;
    const o = record.reading.value;
    const kind = recordKind(o);
    if (kind === 'metadata' && !this.metadataFound) {
      this.metadata = readMetadata(o);
      this.metadataFound = this.metadata !== undefined;
    }
    if (kind !== 'message') return;
    this.lastLines.note(messageKey(o['id'] as string), record.lineNo);
    const toolCalls = o['toolCalls'];
    if (!Array.isArray(toolCalls)) return;
    for (const raw of toolCalls as readonly unknown[]) {
      if (isObject(raw) && typeof raw['id'] === 'string') this.lastLines.note(callKey(raw['id']), record.lineNo);
    }
  }

  lastLineOf(key: string): number {
    return this.lastLines.last(key);
  }
}

/**
 * Where a message's usage sorts among the events of its record's line: before the line's calls
 * (their rank is their order, from 0), usage events of one line (a compact `.json` document) in
 * the order their messages first appeared.
 */
function usageRank(m: MessageState): number {
  return m.seq - 2 ** 52;
}

type HeldItem = { readonly kind: 'message'; readonly state: MessageState } | { readonly kind: 'call'; readonly state: CallState };

/** Options of a streaming parse (tests of the bound). */
export interface GeminiParseOptions {
  /** The held bound (MAX_HELD_CHARS unless a test wants it reached). */
  readonly maxHeldChars?: number;
}

/**
 * The streaming parser of one session file: reads its records in order with the rules the
 * whole-file parse had, holds each message and call until the index says no later record names
 * it, and hands each event out in the whole-file order (the record that completed it, usage
 * before the record's calls, calls in the order they first appeared) once nothing held can come
 * before it. It holds the messages and calls still being written again and the events after
 * them, and the ids of user messages still named later (a copy of a prompt does not start a
 * turn).
 *
 * Past the held bound (ReleaseQueue), the held item that sorts first is written as it stands
 * and counted `written_before_final`; a later record that names it is a malformed record
 * `already_written`, kept with its bytes and not read.
 */
export class GeminiParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  private readonly malformed: MalformedStream;
  private readonly queue: ReleaseQueue<HeldItem>;
  /** Gemini messages held (their usage is not final), with their place in the queue. */
  private readonly messages = new Map<string, { state: MessageState; held: Held<HeldItem> | undefined; until: number }>();
  private readonly calls = new Map<string, { state: CallState; held: Held<HeldItem> }>();
  /** Keys of items written early (the held bound), with the last line that names them. */
  private readonly released = new Map<string, number>();
  private session: FileSession | undefined;
  private turnId = '';
  private metadataSeen = false;
  private callSeq = 0;
  private messageSeq = 0;
  private lineNo = 0;

  constructor(
    private readonly path: string,
    private readonly index: GeminiIndex,
    output: ImportOutput,
    options: GeminiParseOptions = {},
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
    this.queue = new ReleaseQueue<HeldItem>((item, early) => this.finish(item, early), (e) => output.event(e), options.maxHeldChars);
  }

  /** Messages and calls held, and events waiting for them. */
  get heldItems(): number {
    return this.queue.heldItems;
  }

  line(line: RawLine): void {
    this.record(recordOfLine(line));
  }

  /** Reads one record (a line, or a message of a `.json` document). */
  record(record: RawRecord): void {
    this.lineNo = record.lineNo;
    this.session ??= fileSession(this.path, this.index.metadata);
    this.read(record);
    this.queue.afterLine(record.lineNo);
    if (record.lineNo % 4096 === 0) this.sweep(record.lineNo);
  }

  /**
   * Reads one record of a `.json` document: every message of it is on the same few lines (one,
   * when the document is compact), so nothing is final before the end.
   */
  documentRecord(record: RawRecord): void {
    this.lineNo = record.lineNo;
    this.session ??= fileSession(this.path, this.index.metadata);
    this.read(record);
  }

  end(): void {
    this.queue.end();
    this.messages.clear();
  }

  /** Forgets the user messages (and early-written items) no later record names. */
  private sweep(lineNo: number): void {
    for (const [id, m] of this.messages) if (m.held === undefined && m.until <= lineNo) this.messages.delete(id);
    for (const [key, until] of this.released) if (until <= lineNo) this.released.delete(key);
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  private bad(record: RawRecord, problem: string, detail: string): void {
    this.malformed.add({ raw: record.raw, line: record.lineNo, problem, detail, endOffset: record.endOffset });
  }

  private isReleased(key: string): boolean {
    const until = this.released.get(key);
    return until !== undefined && until >= this.lineNo;
  }

  /** A message's state while a later record may still name it: a user message's too (a copy does not start a turn). */
  private messageOf(id: string): MessageState | undefined {
    const m = this.messages.get(id);
    if (m === undefined) return undefined;
    if (m.held === undefined && m.until < this.lineNo) {
      this.messages.delete(id);
      return undefined;
    }
    return m.state;
  }

  private read(record: RawRecord): void {
    if (!record.reading.ok) return this.bad(record, record.reading.problem, record.reading.detail);
    if (record.documentFault !== undefined) return this.bad(record, 'malformed:document', record.documentFault);
    const o = record.reading.value;
    switch (recordKind(o)) {
      case 'message':
        return this.readVersion(record, o);
      case 'rewind':
        // `{"$rewindTo": id}` drops that message and the later ones from the conversation. Their
        // requests were made and their tools ran: the events stay (see README, trap 4).
        return this.skip('rewind');
      case 'metadata_update':
        // `{"$set": {…}}`: lastUpdated, summary, directories, or the whole history after a
        // masking or compression sync (`messages`, each already appended as its own line).
        return this.skip('metadata_update');
      case 'metadata': {
        if (readMetadata(o) === undefined) this.bad(record, 'malformed:metadata', metadataFault(o));
        else if (this.metadataSeen) this.skip('metadata:repeated');
        else this.metadataSeen = true;
        return;
      }
      default:
        // Nothing Gemini CLI writes: no message, metadata, `$set` or `$rewindTo`.
        this.bad(record, 'malformed:record', unknownRecordFault(o));
    }
  }

  /** True when the record names an item already written early (the held bound): the record is then a dead letter. */
  private namesReleased(o: JsonObject): boolean {
    if (this.released.size === 0) return false;
    if (this.isReleased(messageKey(o['id'] as string))) return true;
    const toolCalls = o['toolCalls'];
    return Array.isArray(toolCalls) && (toolCalls as readonly unknown[]).some((raw) => isObject(raw) && typeof raw['id'] === 'string' && this.isReleased(callKey(raw['id'])));
  }

  private readVersion(record: RawRecord, o: JsonObject): void {
    const message = readMessage(o);
    if (message === undefined) return this.bad(record, 'malformed:message', messageFault(o));
    if (this.namesReleased(o)) {
      return this.bad(
        record,
        'already_written',
        `Message ${JSON.stringify(message.id)} (or one of its tool calls) was written before this version of it: the streamed import held more than its bound of messages and calls still being written, and wrote the first as it stood. The record is kept here instead of in their rows.`,
      );
    }
    const until = this.index.lastLineOf(messageKey(message.id));
    if (message.type === 'user') {
      // A prompt starts a turn; a copy of the same message later in the file does not.
      const known = this.messageOf(message.id) !== undefined;
      if (message.isPrompt && !known) this.turnId = message.id;
      if (!known) this.messages.set(message.id, { state: { id: message.id, seq: this.messageSeq++, turnId: this.turnId, ts: undefined, model: undefined, isGemini: false, tokensMalformed: false }, held: undefined, until });
      return;
    }
    if (message.type !== 'gemini') return this.skip(isKnownType(message.type) ? `message:${message.type}` : `message:unknown_type:${message.type.slice(0, 64)}`);
    const hasTokens = message.tokens !== undefined && message.tokens !== null;
    const time = readTime(message.timestamp, 'timestamp');
    if (time.ts === undefined && (hasTokens || message.toolCalls.length > 0)) return this.bad(record, time.problem, time.detail);
    let entry = this.messageOf(message.id) !== undefined ? this.messages.get(message.id) : undefined;
    if (entry === undefined) {
      entry = { state: { id: message.id, seq: this.messageSeq++, turnId: this.turnId, ts: time.ts, model: message.model, isGemini: true, tokensMalformed: false }, held: undefined, until };
      this.messages.set(message.id, entry);
    }
    const state = entry.state;
    // Its usage sorts at the record of its tokens, at or after this one.
    entry.held ??= this.queue.hold({ kind: 'message', state }, { a: record.lineNo, b: usageRank(state) }, until, 0);
    state.isGemini = true;
    state.ts ??= time.ts;
    if (message.model !== undefined) state.model = message.model;

    if (hasTokens) {
      const tokens = readTokens(message.tokens);
      // Only the usage is unreadable: the message's tool calls are still read.
      if (tokens === undefined) {
        this.bad(record, 'malformed:tokens', tokensFault(message.tokens));
        state.tokensMalformed = true;
      } else if (state.tokens === undefined || !sameTokens(state.tokens.value, tokens)) state.tokens = { value: tokens, record: posOf(record) };
    }

    message.toolCalls.forEach((raw, index) => {
      const call = readToolCall(raw);
      if (call === undefined) return this.bad(record, 'malformed:tool_call', toolCallFault(raw, index));
      const own = call.timestamp === undefined || call.timestamp === null ? undefined : readTime(call.timestamp, `toolCalls[${index}].timestamp`);
      if (own !== undefined && own.ts === undefined) return this.bad(record, own.problem, own.detail);
      const callTs = own?.ts ?? time.ts;
      if (callTs === undefined) return this.bad(record, 'no_timestamp', 'Neither the tool call nor its message has a `timestamp`.');
      // JSON.stringify recurses: a tool call nested deeper than the stack is a malformed record.
      let versionKey: string;
      try {
        versionKey = JSON.stringify(raw);
      } catch {
        return this.bad(record, 'too_deep', `toolCalls[${index}] is nested too deep to read.`);
      }
      const seen = this.calls.get(call.id);
      if (seen !== undefined && seen.state.versionKey === versionKey) return;
      const span = findSpan(record.text, ['toolCalls', index, 'args']);
      const rawArgs: RawToolInput = span ? { json: record.text.slice(span.start, span.end) } : { json: JSON.stringify((raw as JsonObject)['args']) }; // (raw stringified above: this cannot overflow)
      // What a held call keeps: its parsed version and the record text its input is a slice of.
      const cost = record.text.length + versionKey.length;
      if (seen === undefined) {
        const c: CallState = { call, record: posOf(record), rawArgs, versionKey, model: state.model, turnId: state.turnId, ts: callTs, seq: this.callSeq++ };
        const held = this.queue.hold({ kind: 'call', state: c }, { a: record.lineNo, b: c.seq }, this.index.lastLineOf(callKey(call.id)), cost);
        this.calls.set(call.id, { state: c, held });
      } else {
        Object.assign(seen.state, { call, record: posOf(record), rawArgs, versionKey, model: state.model ?? seen.state.model });
        this.queue.update(seen.held, seen.held.until, cost);
      }
    });
  }

  private finish(item: HeldItem, early: boolean): void {
    if (item.kind === 'message') {
      const m = this.messages.get(item.state.id);
      if (m !== undefined && m.state === item.state) this.messages.delete(item.state.id);
      if (early) this.releaseEarly(messageKey(item.state.id));
      this.finishMessage(item.state);
      return;
    }
    const c = item.state;
    this.calls.delete(c.call.id);
    if (early) this.releaseEarly(callKey(c.call.id));
    const session = this.session ?? fileSession(this.path, this.index.metadata);
    const result = readToolResult(c.call.result);
    const outcome = callOutcome(c.call);
    const agentId = c.call.agentId ?? session.fileAgentId;
    const fields: ToolCallFields = {
      event_id: stableEventId(HARNESS, session.sessionId, 'tool', c.call.id),
      ts: c.ts,
      harness: HARNESS,
      session_id: session.sessionId,
      ...(agentId === undefined ? {} : { agent_id: agentId }),
      ...(c.turnId === '' ? {} : { turn_id: c.turnId }),
      call_id: c.call.id,
      ...(c.model === undefined ? {} : { model: c.model }),
      tool: eventToolName(c.call),
      status: outcome.status,
      ...(result.text === undefined ? {} : { output: result.text }),
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
      ...(result.images > 0 ? { images: Math.min(result.images, 10_000) } : {}),
    };
    const { envelope: text, truncated } = toolCallEnvelopeWithin(fields, c.rawArgs);
    if (truncated) this.skip('output_truncated');
    this.queue.ready({ a: c.record.lineNo, b: c.seq }, this.event(c.record, text));
  }

  private releaseEarly(key: string): void {
    this.skip('written_before_final');
    this.released.set(key, this.index.lastLineOf(key));
  }

  private event(record: RecordPos, envelope: Envelope): ImportedEvent {
    return { envelope, source: `${this.path}:${record.lineNo}`, endOffset: record.endOffset };
  }

  private finishMessage(m: MessageState): void {
    if (!m.isGemini) return;
    if (m.tokens === undefined || m.ts === undefined) {
      if (!m.tokensMalformed) this.skip('gemini_without_tokens');
      return;
    }
    const session = this.session ?? fileSession(this.path, this.index.metadata);
    const t = m.tokens.value;
    const fields: UsageFields = {
      event_id: stableEventId(HARNESS, session.sessionId, 'usage', m.id),
      ts: m.ts,
      harness: HARNESS,
      session_id: session.sessionId,
      ...(session.fileAgentId === undefined ? {} : { agent_id: session.fileAgentId }),
      ...(m.turnId === '' ? {} : { turn_id: m.turnId }),
      ...(m.model === undefined ? {} : { model: m.model }),
      request_id: m.id,
      // Tool-use prompt tokens are input the model read beside the prompt (not in promptTokenCount).
      input_tokens: t.input + t.tool,
      output_tokens: t.output,
      cache_read_tokens: t.cached,
      reasoning_tokens: t.thoughts,
    };
    this.queue.ready({ a: m.tokens.record.lineNo, b: usageRank(m) }, this.event(m.tokens.record, usageEnvelope(fields)));
  }
}

/** The streaming reading of one JSONL session file: the first pass fills the index the parser uses. */
export function geminiReading(path: string, options: GeminiParseOptions = {}): LineReading & { readonly index: GeminiIndex } {
  const index = new GeminiIndex();
  return {
    index,
    scan: (line) => index.scan(line),
    parser: (output) => new GeminiParser(path, index, output, options),
  };
}

/** A legacy `.json` document, whole: its messages through the same two passes. */
function parseGeminiDocument(path: string, data: Buffer, options: GeminiParseOptions): ParsedFile {
  const file = readJsonDocument(data);
  const index = new GeminiIndex();
  if (file.document !== undefined) index.setDocument(file.document);
  for (const r of file.records) index.scanRecord(r);
  const events: ImportedEvent[] = [];
  const malformed: MalformedRecord[] = [];
  const parser = new GeminiParser(path, index, { event: (e) => events.push(e), malformed: (m) => malformed.push(m) }, options);
  if (file.incomplete) parser.skipped['incomplete_document'] = 1;
  for (const r of file.records) parser.documentRecord(r);
  parser.end();
  return { events, malformed, completeBytes: file.completeBytes, recordsRead: file.records.length, skipped: parser.skipped };
}

/** Parses a whole session file held in memory: what `parseFile` returns. */
export function parseGeminiFile(path: string, data: Buffer, options: GeminiParseOptions = {}): ParsedFile {
  return path.endsWith('.json') ? parseGeminiDocument(path, data, options) : parseLinesWith(geminiReading(path, options), data);
}

function isKnownType(type: string): boolean {
  return (MESSAGE_TYPES as readonly string[]).includes(type);
}

function sameTokens(a: TokensSummary, b: TokensSummary): boolean {
  return a.input === b.input && a.output === b.output && a.cached === b.cached && a.thoughts === b.thoughts && a.tool === b.tool;
}

/** Why a `.json` document is no ConversationRecord with a `messages` array. */
function documentFault(o: JsonObject): string {
  return `\`messages\` is ${describeValue(o['messages'])}, not an array of messages: the document is no Gemini CLI conversation.`;
}
