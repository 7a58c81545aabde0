// The oracle of the streaming opencode parser: the whole-file parser as it was before the importer
// streamed (src/importers/opencode/parser.ts at commit c04471f), unchanged but for its imports.
// test/importers/opencode-stream.test.ts checks that the streaming parser gives exactly what this gives.
// Turns opencode logs into toolcanon events: storage JSON files (one message or part per file),
// `opencode run --format json` lines, bus event lines and JSONL dumps of storage objects. Pure:
// the caller passes the messages that live in other files (the storage layout keeps a part's
// model and turn in its message's file). A record that cannot be read is returned as malformed
// with its line and bytes; one skipped on purpose is counted.
import { findSpan, indexArray } from '../../../src/util/json-spans.ts';
import { stableEventId, toolCallLine, usageLine, type RawToolInput } from '../../../src/importers/envelope.ts';
import { describeValue, lineAt, MalformedRecords, readObject, splitCompleteLines } from '../../../src/importers/lines.ts';
import type { ImportedEvent, MalformedRecord, ParsedFile } from '../../../src/importers/types.ts';
import {
  isObject,
  looksLikeMessage,
  messageFault,
  modelName,
  readBusEvent,
  readMessage,
  readRunEvent,
  readStepFinishPart,
  readToolPart,
  toolPartFault,
  type JsonObject,
  type OpencodeMessage,
  type OpencodeStepFinishPart,
  type OpencodeToolPart,
} from '../../../src/importers/opencode/types.ts';

export interface OpencodeParseContext {
  /** Messages kept in other files, by message id (storage layout: the part's message file). */
  readonly messages?: ReadonlyMap<string, OpencodeMessage>;
}

/**
 * One raw record: a line of a JSONL file, a whole storage JSON file, or one message or part of
 * an `opencode export` document. `base` is where the record's object starts in `text`.
 */
interface RawRecord {
  readonly text: string;
  readonly base: number;
  /** Where the record's own text ends in `text` (its bytes, for a malformed record). */
  readonly end: number;
  /** 1-based line of a JSONL record; undefined for a record of a document (found when needed). */
  readonly lineNo: number | undefined;
  /** The record's object, already parsed (undefined: not a JSON object, see `fault`). */
  readonly value: JsonObject | undefined;
  /** Why the record is no JSON object, when it is not. */
  readonly fault?: { readonly problem: string; readonly detail: string };
  readonly source: string;
  readonly endOffset: number;
  /** A storage part file: its step-finish tokens are also in its message's file. */
  readonly storagePart: boolean;
}

/** A record as a malformed record: its own text, at the line where it starts. */
function malformedOf(record: RawRecord, problem: string, detail: string): MalformedRecord {
  const line = record.lineNo ?? lineAt(record.text, record.base);
  return { raw: record.text.slice(record.base, record.end), line, problem, detail, endOffset: record.endOffset };
}

interface Observed extends RawRecord {
  /** Position in the file, to keep events in file order. */
  readonly order: number;
}

interface ToolObservation extends Observed {
  readonly part: OpencodeToolPart;
  /** Path from the record's root to the part object, for the verbatim input span. */
  readonly partPath: readonly string[];
  readonly sessionID?: string;
  readonly eventMs?: number;
}

interface StepObservation extends Observed {
  readonly part: OpencodeStepFinishPart;
  readonly sessionID?: string;
  readonly eventMs?: number;
}

interface MessageObservation extends Observed {
  readonly message: OpencodeMessage;
}

interface Candidate {
  readonly event: ImportedEvent;
  readonly order: number;
  /** A finished call (ok or error) beats a pending one of the same id. */
  readonly finished: boolean;
}

/** Epoch milliseconds as RFC 3339 UTC. */
export function epochMsToRfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

const STATUS: Readonly<Record<string, 'ok' | 'error'>> = { completed: 'ok', error: 'error' };

/**
 * The raw input: the verbatim text of `state.input` (an object as logged, or a string's content).
 * A pending part has `input: {}` and the arguments streamed so far in `raw`: those are kept.
 */
function rawInputOf(text: string, base: number, partPath: readonly string[]): RawToolInput {
  const span = findSpan(text, [...partPath, 'state', 'input'], base);
  const raw = span ? text.slice(span.start, span.end) : undefined;
  if (raw === undefined || /^\{\s*\}$/.test(raw)) {
    const rawSpan = findSpan(text, [...partPath, 'state', 'raw'], base);
    const streamed = rawSpan ? text.slice(rawSpan.start, rawSpan.end) : '';
    if (streamed.startsWith('"') && streamed !== '""') return { string: JSON.parse(streamed) as string };
  }
  if (raw === undefined) return { json: '{}' };
  if (raw.startsWith('{')) return { json: raw };
  if (raw.startsWith('"')) return { string: JSON.parse(raw) as string };
  return { string: raw };
}

function count(skipped: Record<string, number>, key: string): void {
  skipped[key] = (skipped[key] ?? 0) + 1;
}

/**
 * The records of an `opencode export` document `{info, messages: [{info, parts: [...]}]}`:
 * each message's info and each part, located in the text once (not per record).
 */
function exportRecords(path: string, text: string, doc: JsonObject, endOffset: number): RawRecord[] | undefined {
  const messages = doc['messages'];
  const messagesSpan = findSpan(text, ['messages']);
  if (!isObject(doc['info']) || !Array.isArray(messages) || !messagesSpan) return undefined;
  const messageSpans = indexArray(text, messagesSpan.start) ?? [];
  const records: RawRecord[] = [];
  const add = (value: unknown, span: { start: number; end: number }, what: string): void => {
    const fault = isObject(value) ? {} : { fault: { problem: 'not_an_object', detail: `The export's ${what} is ${describeValue(value)}, not an object.` } };
    records.push({ text, base: span.start, end: span.end, lineNo: undefined, value: isObject(value) ? value : undefined, ...fault, source: `${path}:#${records.length}`, endOffset, storagePart: false });
  };
  const whole = { start: 0, end: text.length };
  messages.forEach((message: unknown, i) => {
    const at = messageSpans[i];
    if (!isObject(message) || !at) return add(message, at ?? whole, 'message');
    add(message['info'], findSpan(text, ['info'], at.start) ?? at, 'message info');
    const partsSpan = findSpan(text, ['parts'], at.start);
    const partSpans = partsSpan ? (indexArray(text, partsSpan.start) ?? []) : [];
    const parts = message['parts'];
    if (Array.isArray(parts)) parts.forEach((part: unknown, j) => add(part, partSpans[j] ?? at, 'part'));
  });
  return records;
}

/**
 * Splits the file into raw records: a `.json` file is one storage object (or an `opencode
 * export` document), anything else JSONL.
 */
function readRecords(path: string, data: Buffer): { records: RawRecord[]; completeBytes: number; unparsed: boolean } {
  if (path.endsWith('.json')) {
    // A whole-file document has no prefix that a later import may skip: opencode rewrites its
    // storage files in place (a part from running to completed, a message's tokens at each
    // step), possibly to the same size. completeBytes 0 makes every changed file re-emit all
    // its events (endOffset = file size); the event ids make that harmless. A file that does
    // not parse (being rewritten) is left for the next import the same way: like the torn last
    // line of a JSONL file, it is not malformed. A whole document that parses but is no object
    // is malformed.
    const text = data.toString('utf8').replace(/^\uFEFF/, '');
    const read = readObject(text);
    if (!read.ok && read.problem === 'invalid_json') return { records: [], completeBytes: 0, unparsed: text.trim() !== '' };
    const whole = { text, base: 0, end: text.length, lineNo: undefined, source: `${path}:#0`, endOffset: data.length };
    if (!read.ok) return { records: [{ ...whole, value: undefined, fault: read, storagePart: false }], completeBytes: 0, unparsed: false };
    const doc = read.value;
    const exported = exportRecords(path, text, doc, data.length);
    if (exported) return { records: exported, completeBytes: 0, unparsed: false };
    const storagePart = typeof doc['messageID'] === 'string';
    return { records: [{ ...whole, value: doc, storagePart }], completeBytes: 0, unparsed: false };
  }
  const { lines, completeBytes } = splitCompleteLines(data);
  return {
    records: lines.map((l) => {
      const read = readObject(l.text);
      const common = { text: l.text, base: 0, end: l.text.length, lineNo: l.lineNo, source: `${path}:${l.lineNo}`, endOffset: l.endOffset, storagePart: false };
      return read.ok ? { ...common, value: read.value } : { ...common, value: undefined, fault: read };
    }),
    completeBytes,
    unparsed: false,
  };
}

export function parseOpencodeFile(path: string, data: Buffer, context: OpencodeParseContext = {}): ParsedFile {
  const { records, completeBytes, unparsed } = readRecords(path, data);
  const skipped: Record<string, number> = {};
  const malformed = new MalformedRecords();
  if (unparsed) count(skipped, 'incomplete_document');

  const tools: ToolObservation[] = [];
  const steps: StepObservation[] = [];
  const fileMessages: MessageObservation[] = [];

  const observePart = (part: JsonObject, partPath: readonly string[], where: Observed, sessionID: string | undefined, eventMs: number | undefined, prefix: string): void => {
    const type = typeof part['type'] === 'string' ? part['type'] : 'unknown';
    if (type === 'tool') {
      const tool = readToolPart(part);
      if (!tool) return malformed.add(malformedOf(where, `${prefix}tool:malformed`, toolPartFault(part)));
      tools.push({ ...where, part: tool, partPath, ...(sessionID ? { sessionID } : {}), ...(eventMs ? { eventMs } : {}) });
      return;
    }
    if (type === 'step-finish') {
      // In the storage layout the message file carries the same tokens: one level only.
      if (where.storagePart) return count(skipped, 'part:step-finish:usage_from_message');
      const step = readStepFinishPart(part);
      if (!step) return malformed.add(malformedOf(where, `${prefix}step-finish:malformed`, `The step-finish part's \`type\` is ${describeValue(part['type'])}.`));
      steps.push({ ...where, part: step, ...(sessionID ? { sessionID } : {}), ...(eventMs ? { eventMs } : {}) });
      return;
    }
    count(skipped, `${prefix}${type}`);
  };

  records.forEach((record, order) => {
    const where: Observed = { ...record, order };
    const value = record.value;
    if (!value) return malformed.add(malformedOf(record, record.fault?.problem ?? 'not_an_object', record.fault?.detail ?? 'The record is not a JSON object.'));
    const run = readRunEvent(value);
    if (run) {
      if (run.type !== 'tool_use' && run.type !== 'step_finish') return count(skipped, `run:${run.type}`);
      return observePart(run.part, ['part'], where, run.sessionID ?? stringOf(run.part['sessionID']), run.timestampMs, 'run:');
    }
    const bus = readBusEvent(value);
    if (bus) {
      if (bus.type === 'message.part.updated' && isObject(bus.properties['part'])) {
        const part = bus.properties['part'];
        return observePart(part, ['properties', 'part'], where, stringOf(part['sessionID']) ?? stringOf(bus.properties['sessionID']), undefined, 'bus:');
      }
      if (bus.type === 'message.updated') {
        const message = readMessage(bus.properties['info']);
        if (!message) return malformed.add(malformedOf(record, 'bus:message.updated:malformed', messageFault(bus.properties['info'])));
        fileMessages.push({ ...where, message });
        return;
      }
      return count(skipped, `bus:${bus.type}`);
    }
    const message = readMessage(value);
    if (message) {
      fileMessages.push({ ...where, message });
      return;
    }
    if (typeof value['type'] === 'string' && (typeof value['messageID'] === 'string' || typeof value['callID'] === 'string')) {
      return observePart(value, [], where, stringOf(value['sessionID']), undefined, 'part:');
    }
    if (looksLikeMessage(value)) return malformed.add(malformedOf(record, 'malformed_message', messageFault(value)));
    // Some other storage object (a session's or a project's info in a dump): not read on purpose.
    count(skipped, 'unknown');
  });

  // Messages: the file's own (the latest record of each id) over those from other files.
  const messages = new Map<string, OpencodeMessage>(context.messages ?? []);
  const latestMessage = new Map<string, MessageObservation>();
  for (const m of fileMessages) {
    messages.set(m.message.id, m.message);
    latestMessage.set(m.message.id, m);
  }

  const byId = new Map<string, Candidate>();
  const offer = (c: Candidate, id: string): void => {
    const prior = byId.get(id);
    if (!prior || c.finished || !prior.finished) byId.set(id, c);
  };

  for (const t of tools) {
    const sessionID = t.part.sessionID ?? t.sessionID;
    const callID = t.part.callID ?? t.part.id;
    if (!sessionID) {
      malformed.add(malformedOf(t, 'tool:no_session', 'The tool part has no `sessionID`, and neither has the record around it.'));
      continue;
    }
    if (!callID) {
      malformed.add(malformedOf(t, 'tool:no_call_id', 'The tool part has neither a `callID` nor an `id`.'));
      continue;
    }
    const message = t.part.messageID ? messages.get(t.part.messageID) : undefined;
    const startMs = t.part.startMs ?? t.eventMs ?? message?.createdMs;
    if (startMs === undefined) {
      malformed.add(malformedOf(t, 'tool:no_time', 'The tool part has no `state.time.start` in epoch milliseconds, its record no `timestamp` and its message no `time.created`.'));
      continue;
    }
    const status = STATUS[t.part.status] ?? 'pending';
    const durationMs = t.part.startMs !== undefined && t.part.endMs !== undefined && t.part.endMs >= t.part.startMs ? Math.round(t.part.endMs - t.part.startMs) : undefined;
    const eventId = stableEventId('opencode', sessionID, callID);
    const line = toolCallLine(
      {
        event_id: eventId,
        ts: epochMsToRfc3339(startMs),
        harness: 'opencode',
        session_id: sessionID,
        turn_id: message?.parentID ?? '',
        call_id: callID,
        model: modelName(message),
        tool: t.part.tool,
        status,
        ...(t.part.output !== undefined ? { output: t.part.output } : {}),
        ...(status === 'error' && t.part.error !== undefined ? { error: t.part.error } : {}),
        ...(durationMs !== undefined && status !== 'pending' ? { duration_ms: durationMs } : {}),
      },
      rawInputOf(t.text, t.base, t.partPath),
    );
    offer({ event: { line, source: t.source, endOffset: t.endOffset }, order: t.order, finished: status !== 'pending' }, eventId);
  }

  // Usage: one event per assistant message (dedup key: session + message id). The message's
  // tokens are those of its last step (opencode overwrites them at each step-finish), so a
  // message in the file wins over its step-finish parts; without it, the last step-finish does.
  const usageSource = new Map<string, { obs: Observed; message?: OpencodeMessage; step?: StepObservation }>();
  for (const [id, m] of latestMessage) {
    if (m.message.role !== 'assistant') {
      count(skipped, `message:${m.message.role || 'unknown'}`);
      continue;
    }
    usageSource.set(`${m.message.sessionID}\u0000${id}`, { obs: m, message: m.message });
  }
  for (const s of steps) {
    const sessionID = s.part.sessionID ?? s.sessionID;
    const messageID = s.part.messageID;
    if (!sessionID || !messageID) {
      malformed.add(malformedOf(s, 'step-finish:no_message_id', `The step-finish part has no \`${sessionID ? 'messageID' : 'sessionID'}\`: its usage cannot be deduplicated against its message.`));
      continue;
    }
    const key = `${sessionID}\u0000${messageID}`;
    const prior = usageSource.get(key);
    if (prior?.message) {
      count(skipped, 'step-finish:covered_by_message');
      continue;
    }
    if (prior?.step) count(skipped, 'step-finish:earlier_step_of_message');
    usageSource.set(key, { obs: s, step: s });
  }

  for (const [key, u] of usageSource) {
    const [sessionID = '', messageID = ''] = key.split('\u0000');
    const message = u.message ?? messages.get(messageID);
    const tokens = u.message ? u.message.tokens : u.step?.part.tokens;
    const what = u.message ? 'message' : 'step-finish';
    const badTokens = u.message ? u.message.tokensFault : u.step?.part.tokensFault;
    if (badTokens !== undefined) {
      malformed.add(malformedOf(u.obs, `${what}:bad_tokens`, badTokens));
      continue;
    }
    if (!tokens || tokens.input + tokens.output + (tokens.reasoning ?? 0) + (tokens.cacheRead ?? 0) + (tokens.cacheWrite ?? 0) === 0) {
      // An assistant message still streaming (or a failed request) has zero tokens.
      count(skipped, `${what}:no_usage`);
      continue;
    }
    const ms = u.message ? (u.message.completedMs ?? u.message.createdMs) : (u.step?.eventMs ?? message?.completedMs ?? message?.createdMs);
    if (ms === undefined) {
      const detail = u.message
        ? 'The message has no `time.completed` or `time.created` in epoch milliseconds.'
        : 'The step-finish has no time: its record has no `timestamp` in epoch milliseconds and its message no `time.completed` or `time.created`.';
      malformed.add(malformedOf(u.obs, `${what}:no_time`, detail));
      continue;
    }
    const eventId = stableEventId('opencode', 'usage', sessionID, messageID);
    const line = usageLine({
      event_id: eventId,
      ts: epochMsToRfc3339(ms),
      harness: 'opencode',
      session_id: sessionID,
      ...(message?.parentID ? { turn_id: message.parentID } : {}),
      model: modelName(message),
      request_id: messageID,
      input_tokens: tokens.input,
      output_tokens: tokens.output,
      ...(tokens.cacheRead !== undefined ? { cache_read_tokens: tokens.cacheRead } : {}),
      ...(tokens.cacheWrite !== undefined ? { cache_write_tokens: tokens.cacheWrite } : {}),
      ...(tokens.reasoning !== undefined ? { reasoning_tokens: tokens.reasoning } : {}),
    });
    byId.set(eventId, { event: { line, source: u.obs.source, endOffset: u.obs.endOffset }, order: u.obs.order, finished: true });
  }

  const events = [...byId.values()].sort((a, b) => a.order - b.order).map((c) => c.event);
  return { events, malformed: malformed.records, completeBytes, recordsRead: records.length, skipped };
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
