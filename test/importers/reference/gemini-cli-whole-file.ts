// The oracle of the streaming gemini-cli parser: the whole-file parser as it was before the importer
// streamed (src/importers/gemini-cli/parser.ts at commit c04471f), unchanged but for its imports.
// test/importers/gemini-cli-stream.test.ts checks that the streaming parser gives exactly what this gives.
// Turns one Gemini CLI session file into toolcanon events: a tool_call per ToolCallRecord and a
// usage event per gemini message with tokens. Reads the JSONL log (one record per line, a
// message appended again whole each time it changes) and the legacy `.json` document (one
// ConversationRecord). Pure: bytes in, events, malformed records and counts out; never throws
// on a bad record.
import { findSpan, indexArray, indexObject } from '../../../src/util/json-spans.ts';
import { normaliseTimestamp, stableEventId, toolCallLineWithin, usageLine, type RawToolInput, type ToolCallFields, type UsageFields } from '../../../src/importers/envelope.ts';
import { describeValue, lineAt, MalformedRecords, readObject, splitCompleteLines, type ObjectReading } from '../../../src/importers/lines.ts';
import type { ImportedEvent, ParsedFile } from '../../../src/importers/types.ts';
import { fileStem, parentSessionOf } from '../../../src/importers/gemini-cli/paths.ts';
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
  type ToolCallRecord,
  type TokensSummary,
} from '../../../src/importers/gemini-cli/types.ts';
import { MAX_ID_CHARS, type JsonObject } from '../../../src/importers/json.ts';

const HARNESS = 'gemini_cli';


/** Longest `error` text (UTF-16 units): the first line of the call's error message. */
const MAX_ERROR_CHARS = 2000;

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

function readJsonlRecords(data: Buffer): FileRecords {
  const { lines, completeBytes } = splitCompleteLines(data);
  const records = lines.map((l): RawRecord => {
    const text = l.lineNo === 1 ? stripBom(l.text) : l.text;
    return { text, raw: l.text, reading: readObject(text), lineNo: l.lineNo, endOffset: l.endOffset };
  });
  return { records, completeBytes, document: undefined, incomplete: false };
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

interface MessageState {
  readonly id: string;
  readonly turnId: string;
  /** The message's time, from the first version that gave one (a message keeps its time). */
  ts: string | undefined;
  model: string | undefined;
  isGemini: boolean;
  /** The last figures seen, and the record where they first appeared (it completes the event). */
  tokens?: { readonly value: TokensSummary; readonly record: RawRecord };
  /** A version's tokens were a dead letter: the message is not also counted as without tokens. */
  tokensMalformed: boolean;
}

interface CallState {
  /** The version of the call last seen, and the record where that version first appeared. */
  call: ToolCallRecord;
  record: RawRecord;
  rawArgs: RawToolInput;
  versionKey: string;
  model: string | undefined;
  readonly turnId: string;
  /** The time of the call's first version: stable while the file grows. */
  readonly ts: string;
}

interface Ordered {
  readonly lineNo: number;
  /** Usage before the calls of the same record, then the calls in logged order. */
  readonly rank: number;
  readonly seq: number;
  readonly event: ImportedEvent;
}

/** The first line of an error text, bounded. */
function errorSummary(text: string): string {
  const nl = text.indexOf('\n');
  const first = (nl < 0 ? text : text.slice(0, nl)).trim();
  return first.length > MAX_ERROR_CHARS ? first.slice(0, MAX_ERROR_CHARS) : first;
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

export function parseGeminiFile(path: string, data: Buffer): ParsedFile {
  const file = path.endsWith('.json') ? readJsonDocument(data) : readJsonlRecords(data);
  const skipped: Record<string, number> = {};
  const skip = (what: string): void => {
    skipped[what] = (skipped[what] ?? 0) + 1;
  };
  if (file.incomplete) skip('incomplete_document');
  const malformed = new MalformedRecords();
  const bad = (record: RawRecord, problem: string, detail: string): void => {
    malformed.add({ raw: record.raw, line: record.lineNo, problem, detail, endOffset: record.endOffset });
  };

  // The session: the metadata line (or the document); a subagent's file sits in a folder named
  // after its parent session, whose session it belongs to, with its own id as the agent.
  let metadata = file.document ? readMetadata(file.document) : undefined;
  if (file.document === undefined) {
    for (const r of file.records) {
      if (r.reading.ok && recordKind(r.reading.value) === 'metadata') {
        metadata = readMetadata(r.reading.value);
        if (metadata) break;
      }
    }
  }
  const ownId = metadata?.sessionId ?? fileStem(path);
  const parent = parentSessionOf(path);
  const sessionId = parent ?? ownId;
  const fileAgentId = parent === undefined ? undefined : ownId;

  const messages = new Map<string, MessageState>();
  const calls = new Map<string, CallState>();
  let turnId = '';
  let metadataSeen = false;

  const readGeminiVersion = (record: RawRecord, o: JsonObject): void => {
    const message = readMessage(o);
    if (message === undefined) return bad(record, 'malformed:message', messageFault(o));
    if (message.type === 'user') {
      // A prompt starts a turn; a copy of the same message later in the file does not.
      if (message.isPrompt && !messages.has(message.id)) turnId = message.id;
      if (!messages.has(message.id)) messages.set(message.id, { id: message.id, turnId, ts: undefined, model: undefined, isGemini: false, tokensMalformed: false });
      return;
    }
    if (message.type !== 'gemini') return skip(isKnownType(message.type) ? `message:${message.type}` : `message:unknown_type:${message.type.slice(0, 64)}`);
    const hasTokens = message.tokens !== undefined && message.tokens !== null;
    const time = readTime(message.timestamp, 'timestamp');
    if (time.ts === undefined && (hasTokens || message.toolCalls.length > 0)) return bad(record, time.problem, time.detail);
    let state = messages.get(message.id);
    if (state === undefined) {
      state = { id: message.id, turnId, ts: time.ts, model: message.model, isGemini: true, tokensMalformed: false };
      messages.set(message.id, state);
    }
    state.isGemini = true;
    state.ts ??= time.ts;
    if (message.model !== undefined) state.model = message.model;

    if (hasTokens) {
      const tokens = readTokens(message.tokens);
      // Only the usage is unreadable: the message's tool calls are still read.
      if (tokens === undefined) {
        bad(record, 'malformed:tokens', tokensFault(message.tokens));
        state.tokensMalformed = true;
      } else if (state.tokens === undefined || !sameTokens(state.tokens.value, tokens)) state.tokens = { value: tokens, record };
    }

    message.toolCalls.forEach((raw, index) => {
      const call = readToolCall(raw);
      if (call === undefined) return bad(record, 'malformed:tool_call', toolCallFault(raw, index));
      const own = call.timestamp === undefined || call.timestamp === null ? undefined : readTime(call.timestamp, `toolCalls[${index}].timestamp`);
      if (own !== undefined && own.ts === undefined) return bad(record, own.problem, own.detail);
      const callTs = own?.ts ?? time.ts;
      if (callTs === undefined) return bad(record, 'no_timestamp', 'Neither the tool call nor its message has a `timestamp`.');
      if (state === undefined) return;
      // JSON.stringify recurses: a tool call nested deeper than the stack is a malformed record.
      let versionKey: string;
      try {
        versionKey = JSON.stringify(raw);
      } catch {
        return bad(record, 'too_deep', `toolCalls[${index}] is nested too deep to read.`);
      }
      const seen = calls.get(call.id);
      if (seen !== undefined && seen.versionKey === versionKey) return;
      const span = findSpan(record.text, ['toolCalls', index, 'args']);
      const rawArgs: RawToolInput = span ? { json: record.text.slice(span.start, span.end) } : { json: JSON.stringify((raw as JsonObject)['args']) }; // (raw stringified above: this cannot overflow)
      if (seen === undefined) calls.set(call.id, { call, record, rawArgs, versionKey, model: state.model, turnId: state.turnId, ts: callTs });
      else Object.assign(seen, { call, record, rawArgs, versionKey, model: state.model ?? seen.model });
    });
  };

  for (const record of file.records) {
    if (!record.reading.ok) {
      bad(record, record.reading.problem, record.reading.detail);
      continue;
    }
    if (record.documentFault !== undefined) {
      bad(record, 'malformed:document', record.documentFault);
      continue;
    }
    const o = record.reading.value;
    switch (recordKind(o)) {
      case 'message':
        readGeminiVersion(record, o);
        break;
      case 'rewind':
        // `{"$rewindTo": id}` drops that message and the later ones from the conversation. Their
        // requests were made and their tools ran: the events stay (see README, trap 4).
        skip('rewind');
        break;
      case 'metadata_update':
        // `{"$set": {…}}`: lastUpdated, summary, directories, or the whole history after a
        // masking or compression sync (`messages`, each already appended as its own line).
        skip('metadata_update');
        break;
      case 'metadata': {
        if (readMetadata(o) === undefined) bad(record, 'malformed:metadata', metadataFault(o));
        else if (metadataSeen) skip('metadata:repeated');
        else metadataSeen = true;
        break;
      }
      default:
        // Nothing Gemini CLI writes: no message, metadata, `$set` or `$rewindTo`.
        bad(record, 'malformed:record', unknownRecordFault(o));
    }
  }

  const ordered: Ordered[] = [];
  const emit = (record: RawRecord, rank: number, line: string): void => {
    ordered.push({ lineNo: record.lineNo, rank, seq: ordered.length, event: { line, source: `${path}:${record.lineNo}`, endOffset: record.endOffset } });
  };

  for (const m of messages.values()) {
    if (!m.isGemini) continue;
    if (m.tokens === undefined || m.ts === undefined) {
      if (!m.tokensMalformed) skip('gemini_without_tokens');
      continue;
    }
    const t = m.tokens.value;
    const fields: UsageFields = {
      event_id: stableEventId(HARNESS, sessionId, 'usage', m.id),
      ts: m.ts,
      harness: HARNESS,
      session_id: sessionId,
      ...(fileAgentId === undefined ? {} : { agent_id: fileAgentId }),
      ...(m.turnId === '' ? {} : { turn_id: m.turnId }),
      ...(m.model === undefined ? {} : { model: m.model }),
      request_id: m.id,
      // Tool-use prompt tokens are input the model read beside the prompt (not in promptTokenCount).
      input_tokens: t.input + t.tool,
      output_tokens: t.output,
      cache_read_tokens: t.cached,
      reasoning_tokens: t.thoughts,
    };
    emit(m.tokens.record, 0, usageLine(fields));
  }

  for (const c of calls.values()) {
    const result = readToolResult(c.call.result);
    const outcome = callOutcome(c.call);
    const agentId = c.call.agentId ?? fileAgentId;
    const fields: ToolCallFields = {
      event_id: stableEventId(HARNESS, sessionId, 'tool', c.call.id),
      ts: c.ts,
      harness: HARNESS,
      session_id: sessionId,
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
    const { line: text, truncated } = toolCallLineWithin(fields, c.rawArgs);
    if (truncated) skip('output_truncated');
    emit(c.record, 1, text);
  }

  ordered.sort((a, b) => a.lineNo - b.lineNo || a.rank - b.rank || a.seq - b.seq);
  return { events: ordered.map((o) => o.event), malformed: malformed.records, completeBytes: file.completeBytes, recordsRead: file.records.length, skipped };
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
