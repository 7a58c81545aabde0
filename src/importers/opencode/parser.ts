// Turns opencode logs into toolcanon events: storage JSON files (one message or part per file),
// `opencode run --format json` lines, bus event lines and JSONL dumps of storage objects. A JSONL
// file is streamed in two passes (OpencodeIndex, then OpencodeParser); a `.json` file is one
// document. Pure: the caller passes the messages that live in other files (the storage layout
// keeps a part's model and turn in its message's file). A record that cannot be read is returned
// as malformed with its line and bytes; one skipped on purpose is counted.
import { findSpan, indexArray } from '../../util/json-spans.ts';
import { stableEventId, toolCallEnvelope, usageEnvelope, type RawToolInput } from '../envelope.ts';
import { describeValue, lineAt, MalformedRecords, MalformedStream, readObject, type RawLine } from '../lines.ts';
import { LastLines, parseLinesWith, ReleaseQueue, type Held } from '../stream.ts';
import type { ImportOutput, ImportedEvent, LineParser, LineReading, MalformedRecord, ParsedFile } from '../types.ts';
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
} from './types.ts';

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

/** A `.json` file: one storage object, or an `opencode export` document. */
function readDocumentRecords(path: string, data: Buffer): { records: RawRecord[]; unparsed: boolean } {
  // A whole-file document has no prefix that a later import may skip: opencode rewrites its
  // storage files in place (a part from running to completed, a message's tokens at each
  // step), possibly to the same size. completeBytes 0 makes every changed file re-emit all
  // its events (endOffset = file size); the event ids make that harmless. A file that does
  // not parse (being rewritten) is left for the next import the same way: like the torn last
  // line of a JSONL file, it is not malformed. A whole document that parses but is no object
  // is malformed.
  const text = data.toString('utf8').replace(/^\uFEFF/, '');
  const read = readObject(text);
  if (!read.ok && read.problem === 'invalid_json') return { records: [], unparsed: text.trim() !== '' };
  const whole = { text, base: 0, end: text.length, lineNo: undefined, source: `${path}:#0`, endOffset: data.length };
  if (!read.ok) return { records: [{ ...whole, value: undefined, fault: read, storagePart: false }], unparsed: false };
  const doc = read.value;
  const exported = exportRecords(path, text, doc, data.length);
  if (exported) return { records: exported, unparsed: false };
  const storagePart = typeof doc['messageID'] === 'string';
  return { records: [{ ...whole, value: doc, storagePart }], unparsed: false };
}

/** A line of a JSONL file as a record. */
function recordOfLine(path: string, l: RawLine): RawRecord {
  const read = readObject(l.text);
  const common = { text: l.text, base: 0, end: l.text.length, lineNo: l.lineNo, source: `${path}:${l.lineNo}`, endOffset: l.endOffset, storagePart: false };
  return read.ok ? { ...common, value: read.value } : { ...common, value: undefined, fault: read };
}

/** The records of a file that the parser reads together (a JSONL file: those that share an id). */
interface Observations {
  readonly tools: ToolObservation[];
  readonly steps: StepObservation[];
  readonly messages: MessageObservation[];
}

/** Where the first stage hands what it found in a record. */
interface ObservationSink {
  tool(t: ToolObservation): void;
  step(s: StepObservation): void;
  message(m: MessageObservation): void;
  malformed(m: MalformedRecord): void;
  skip(key: string): void;
}

/**
 * The first stage, one record at a time: what the record is (a tool part, a step-finish, a
 * message), or why it is malformed or skipped. A tool part without a session or a call id and a
 * step-finish without a session or a message id are malformed at once: nothing later changes that.
 */
function observe(record: RawRecord, order: number, sink: ObservationSink): void {
  const where: Observed = { ...record, order };
  const value = record.value;
  if (!value) return sink.malformed(malformedOf(record, record.fault?.problem ?? 'not_an_object', record.fault?.detail ?? 'The record is not a JSON object.'));
  const observePart = (part: JsonObject, partPath: readonly string[], sessionID: string | undefined, eventMs: number | undefined, prefix: string): void => {
    const type = typeof part['type'] === 'string' ? part['type'] : 'unknown';
    if (type === 'tool') {
      const tool = readToolPart(part);
      if (!tool) return sink.malformed(malformedOf(where, `${prefix}tool:malformed`, toolPartFault(part)));
      const t: ToolObservation = { ...where, part: tool, partPath, ...(sessionID ? { sessionID } : {}), ...(eventMs ? { eventMs } : {}) };
      if (!(t.part.sessionID ?? t.sessionID)) return sink.malformed(malformedOf(t, 'tool:no_session', 'The tool part has no `sessionID`, and neither has the record around it.'));
      if (!(t.part.callID ?? t.part.id)) return sink.malformed(malformedOf(t, 'tool:no_call_id', 'The tool part has neither a `callID` nor an `id`.'));
      return sink.tool(t);
    }
    if (type === 'step-finish') {
      // In the storage layout the message file carries the same tokens: one level only.
      if (where.storagePart) return sink.skip('part:step-finish:usage_from_message');
      const step = readStepFinishPart(part);
      if (!step) return sink.malformed(malformedOf(where, `${prefix}step-finish:malformed`, `The step-finish part's \`type\` is ${describeValue(part['type'])}.`));
      const s: StepObservation = { ...where, part: step, ...(sessionID ? { sessionID } : {}), ...(eventMs ? { eventMs } : {}) };
      const stepSession = s.part.sessionID ?? s.sessionID;
      if (!stepSession || !s.part.messageID) {
        return sink.malformed(malformedOf(s, 'step-finish:no_message_id', `The step-finish part has no \`${stepSession ? 'messageID' : 'sessionID'}\`: its usage cannot be deduplicated against its message.`));
      }
      return sink.step(s);
    }
    sink.skip(`${prefix}${type}`);
  };
  const run = readRunEvent(value);
  if (run) {
    if (run.type !== 'tool_use' && run.type !== 'step_finish') return sink.skip(`run:${run.type}`);
    return observePart(run.part, ['part'], run.sessionID ?? stringOf(run.part['sessionID']), run.timestampMs, 'run:');
  }
  const bus = readBusEvent(value);
  if (bus) {
    if (bus.type === 'message.part.updated' && isObject(bus.properties['part'])) {
      const part = bus.properties['part'];
      return observePart(part, ['properties', 'part'], stringOf(part['sessionID']) ?? stringOf(bus.properties['sessionID']), undefined, 'bus:');
    }
    if (bus.type === 'message.updated') {
      const message = readMessage(bus.properties['info']);
      if (!message) return sink.malformed(malformedOf(record, 'bus:message.updated:malformed', messageFault(bus.properties['info'])));
      return sink.message({ ...where, message });
    }
    return sink.skip(`bus:${bus.type}`);
  }
  const message = readMessage(value);
  if (message) return sink.message({ ...where, message });
  if (typeof value['type'] === 'string' && (typeof value['messageID'] === 'string' || typeof value['callID'] === 'string')) {
    return observePart(value, [], stringOf(value['sessionID']), undefined, 'part:');
  }
  if (looksLikeMessage(value)) return sink.malformed(malformedOf(record, 'malformed_message', messageFault(value)));
  // Some other storage object (a session's or a project's info in a dump): not read on purpose.
  sink.skip('unknown');
}

/** The ids that tie an observation to others: its message, its call. */
function keysOf(o: { kind: 'tool'; t: ToolObservation } | { kind: 'step'; s: StepObservation } | { kind: 'message'; m: MessageObservation }): string[] {
  switch (o.kind) {
    case 'tool': {
      const keys = [`t:${o.t.part.sessionID ?? o.t.sessionID ?? ''}\u0000${o.t.part.callID ?? o.t.part.id ?? ''}`];
      if (o.t.part.messageID) keys.push(`m:${o.t.part.messageID}`);
      return keys;
    }
    case 'step':
      return [`m:${o.s.part.messageID ?? ''}`];
    case 'message':
      return [`m:${o.m.message.id}`];
  }
}

/** Where the second stage hands what it completed. */
interface SettleSink {
  candidate(c: Candidate): void;
  malformed(m: MalformedRecord): void;
  skip(key: string): void;
}

/**
 * The second stage: the events of a set of observations that holds every record naming its
 * messages and calls (a whole file, or one group of a streamed file), each with the order of the
 * record it comes from.
 */
function settle(obs: Observations, context: OpencodeParseContext, sink: SettleSink): void {
  // Messages: the file's own (the latest record of each id) over those from other files.
  const messages = new Map<string, OpencodeMessage>(context.messages ?? []);
  const latestMessage = new Map<string, MessageObservation>();
  for (const m of obs.messages) {
    messages.set(m.message.id, m.message);
    latestMessage.set(m.message.id, m);
  }

  const byId = new Map<string, Candidate>();
  const offer = (c: Candidate, id: string): void => {
    const prior = byId.get(id);
    if (!prior || c.finished || !prior.finished) byId.set(id, c);
  };

  for (const t of obs.tools) {
    const sessionID = t.part.sessionID ?? t.sessionID;
    const callID = t.part.callID ?? t.part.id;
    if (!sessionID) {
      sink.malformed(malformedOf(t, 'tool:no_session', 'The tool part has no `sessionID`, and neither has the record around it.'));
      continue;
    }
    if (!callID) {
      sink.malformed(malformedOf(t, 'tool:no_call_id', 'The tool part has neither a `callID` nor an `id`.'));
      continue;
    }
    const message = t.part.messageID ? messages.get(t.part.messageID) : undefined;
    const startMs = t.part.startMs ?? t.eventMs ?? message?.createdMs;
    if (startMs === undefined) {
      sink.malformed(malformedOf(t, 'tool:no_time', 'The tool part has no `state.time.start` in epoch milliseconds, its record no `timestamp` and its message no `time.created`.'));
      continue;
    }
    const status = STATUS[t.part.status] ?? 'pending';
    const durationMs = t.part.startMs !== undefined && t.part.endMs !== undefined && t.part.endMs >= t.part.startMs ? Math.round(t.part.endMs - t.part.startMs) : undefined;
    const eventId = stableEventId('opencode', sessionID, callID);
    const line = toolCallEnvelope(
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
    offer({ event: { envelope: line, source: t.source, endOffset: t.endOffset }, order: t.order, finished: status !== 'pending' }, eventId);
  }

  // Usage: one event per assistant message (dedup key: session + message id). The message's
  // tokens are those of its last step (opencode overwrites them at each step-finish), so a
  // message in the file wins over its step-finish parts; without it, the last step-finish does.
  const usageSource = new Map<string, { obs: Observed; message?: OpencodeMessage; step?: StepObservation }>();
  for (const [id, m] of latestMessage) {
    if (m.message.role !== 'assistant') {
      sink.skip(`message:${m.message.role || 'unknown'}`);
      continue;
    }
    usageSource.set(`${m.message.sessionID}\u0000${id}`, { obs: m, message: m.message });
  }
  for (const s of obs.steps) {
    const sessionID = s.part.sessionID ?? s.sessionID;
    const messageID = s.part.messageID;
    if (!sessionID || !messageID) {
      sink.malformed(malformedOf(s, 'step-finish:no_message_id', `The step-finish part has no \`${sessionID ? 'messageID' : 'sessionID'}\`: its usage cannot be deduplicated against its message.`));
      continue;
    }
    const key = `${sessionID}\u0000${messageID}`;
    const prior = usageSource.get(key);
    if (prior?.message) {
      sink.skip('step-finish:covered_by_message');
      continue;
    }
    if (prior?.step) sink.skip('step-finish:earlier_step_of_message');
    usageSource.set(key, { obs: s, step: s });
  }

  for (const [key, u] of usageSource) {
    const [sessionID = '', messageID = ''] = key.split('\u0000');
    const message = u.message ?? messages.get(messageID);
    const tokens = u.message ? u.message.tokens : u.step?.part.tokens;
    const what = u.message ? 'message' : 'step-finish';
    const badTokens = u.message ? u.message.tokensFault : u.step?.part.tokensFault;
    if (badTokens !== undefined) {
      sink.malformed(malformedOf(u.obs, `${what}:bad_tokens`, badTokens));
      continue;
    }
    if (!tokens || tokens.input + tokens.output + (tokens.reasoning ?? 0) + (tokens.cacheRead ?? 0) + (tokens.cacheWrite ?? 0) === 0) {
      // An assistant message still streaming (or a failed request) has zero tokens.
      sink.skip(`${what}:no_usage`);
      continue;
    }
    const ms = u.message ? (u.message.completedMs ?? u.message.createdMs) : (u.step?.eventMs ?? message?.completedMs ?? message?.createdMs);
    if (ms === undefined) {
      const detail = u.message
        ? 'The message has no `time.completed` or `time.created` in epoch milliseconds.'
        : 'The step-finish has no time: its record has no `timestamp` in epoch milliseconds and its message no `time.completed` or `time.created`.';
      sink.malformed(malformedOf(u.obs, `${what}:no_time`, detail));
      continue;
    }
    const eventId = stableEventId('opencode', 'usage', sessionID, messageID);
    const line = usageEnvelope({
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
    byId.set(eventId, { event: { envelope: line, source: u.obs.source, endOffset: u.obs.endOffset }, order: u.obs.order, finished: true });
  }
  for (const c of byId.values()) sink.candidate(c);
}

/** A `.json` file, whole: one storage object or an export document. */
function parseOpencodeDocument(path: string, data: Buffer, context: OpencodeParseContext): ParsedFile {
  const { records, unparsed } = readDocumentRecords(path, data);
  const skipped: Record<string, number> = {};
  const malformed = new MalformedRecords();
  if (unparsed) count(skipped, 'incomplete_document');
  const obs: Observations = { tools: [], steps: [], messages: [] };
  const candidates: Candidate[] = [];
  const sink = {
    tool: (t: ToolObservation) => obs.tools.push(t),
    step: (s: StepObservation) => obs.steps.push(s),
    message: (m: MessageObservation) => obs.messages.push(m),
    candidate: (c: Candidate) => candidates.push(c),
    malformed: (m: MalformedRecord) => malformed.add(m),
    skip: (key: string) => count(skipped, key),
  };
  records.forEach((record, order) => observe(record, order, sink));
  settle(obs, context, sink);
  const events = candidates.sort((a, b) => a.order - b.order).map((c) => c.event);
  return { events, malformed: malformed.records, completeBytes: 0, recordsRead: records.length, skipped };
}

/**
 * The first pass over a JSONL file: for every message id and every call (session and call id),
 * the last line whose record names it. The parser reads the records that share an id together,
 * so this says when a group of them is complete. A number per id, no text; it runs the
 * parser's own first stage, so it notes exactly the ids the parser will join on.
 */
export class OpencodeIndex {
  private readonly lastLines = new LastLines();

  constructor(private readonly path: string) {}

  scan(line: RawLine): void {
    const note = (keys: string[]): void => {
      for (const k of keys) this.lastLines.note(k, line.lineNo);
    };
    observe(recordOfLine(this.path, line), line.lineNo, {
      tool: (t) => note(keysOf({ kind: 'tool', t })),
      step: (s) => note(keysOf({ kind: 'step', s })),
      message: (m) => note(keysOf({ kind: 'message', m })),
      malformed: () => undefined,
      skip: () => undefined,
    });
  }

  lastLineOf(key: string): number {
    return this.lastLines.last(key);
  }
}

/** Records that name the same messages and calls, read together once no later line names any of them. */
interface Group {
  readonly obs: Observations;
  readonly keys: Set<string>;
  held: Held<Group>;
}

/** Options of a streaming parse (tests of the bound). */
export interface OpencodeParseOptions {
  /** The held bound (MAX_HELD_CHARS unless a test wants it reached). */
  readonly maxHeldChars?: number;
}

/** A held observation without its parsed object (its text and fields are what the second stage reads). */
function lean<T extends Observed>(o: T): T {
  return { ...o, value: undefined };
}

/** Merges two lists in file order. */
function mergeOrdered<T extends Observed>(a: T[], b: readonly T[]): void {
  if (b.length === 0) return;
  a.push(...b);
  a.sort((x, y) => x.order - y.order);
}

function groupCost(g: Group): number {
  let n = 0;
  for (const list of [g.obs.tools, g.obs.steps, g.obs.messages] as const) for (const o of list) n += o.text.length;
  return n;
}

/**
 * The streaming parser of one JSONL file: reads each record with the whole-file rules, gathers
 * the records that name the same message or call into a group (a tool part, its message's
 * updates, the message's step-finish parts), and once the index says no later line names the
 * group's ids, reads the group as the whole-file parse read the file and hands its events out
 * in file order, once no held group can come before them. It holds the open groups (a message
 * still being updated, a call still running) and the events after them.
 *
 * Past the held bound (ReleaseQueue), the group that started first is read as it stands and
 * counted `written_before_final`; a later record that names one of its ids is a malformed
 * record `already_written`, kept with its bytes and not read.
 */
export class OpencodeParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  private readonly malformed: MalformedStream;
  private readonly queue: ReleaseQueue<Group>;
  private readonly groups = new Map<string, Group>();
  /** Ids of groups read early (the held bound), with the last line that names them. */
  private readonly released = new Map<string, number>();
  private lineNo = 0;

  constructor(
    private readonly path: string,
    private readonly index: OpencodeIndex,
    output: ImportOutput,
    options: OpencodeParseOptions = {},
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
    this.queue = new ReleaseQueue<Group>((g, early) => this.finish(g, early), (e) => output.event(e), options.maxHeldChars);
  }

  /** Groups held, and events waiting for them. */
  get heldItems(): number {
    return this.queue.heldItems;
  }

  line(line: RawLine): void {
    this.lineNo = line.lineNo;
    observe(recordOfLine(this.path, line), line.lineNo, {
      tool: (t) => this.join(keysOf({ kind: 'tool', t }), line, (obs) => obs.tools.push(lean(t))),
      step: (s) => this.join(keysOf({ kind: 'step', s }), line, (obs) => obs.steps.push(lean(s))),
      message: (m) => this.join(keysOf({ kind: 'message', m }), line, (obs) => obs.messages.push(lean(m))),
      malformed: (m) => this.malformed.add(m),
      skip: (key) => count(this.skipped, key),
    });
    this.queue.afterLine(line.lineNo);
    if (this.released.size > 0 && line.lineNo % 4096 === 0) for (const [key, until] of this.released) if (until <= line.lineNo) this.released.delete(key);
  }

  end(): void {
    this.queue.end();
  }

  private isReleased(key: string): boolean {
    const until = this.released.get(key);
    return until !== undefined && until >= this.lineNo;
  }

  /** Adds an observation to the group of its ids, merging the groups it ties together. */
  private join(keys: string[], line: RawLine, add: (obs: Observations) => void): void {
    if (this.released.size > 0 && keys.some((k) => this.isReleased(k))) {
      this.malformed.add({
        raw: line.text,
        line: line.lineNo,
        problem: 'already_written',
        detail:
          "The record names a message or call whose events were written before this record: the streamed import held more than its bound of open messages and calls, and read the first of them as it stood. The record is kept here instead of in their rows.",
        endOffset: line.endOffset,
      });
      return;
    }
    let group: Group | undefined;
    for (const k of keys) {
      const other = this.groups.get(k);
      if (other === undefined || other === group) continue;
      if (group === undefined) {
        group = other;
        continue;
      }
      // Two groups tied by this record: the one that started first takes the other in.
      const [keep, gone] = group.held.low.a <= other.held.low.a ? [group, other] : [other, group];
      mergeOrdered(keep.obs.tools, gone.obs.tools);
      mergeOrdered(keep.obs.steps, gone.obs.steps);
      mergeOrdered(keep.obs.messages, gone.obs.messages);
      for (const key of gone.keys) {
        keep.keys.add(key);
        this.groups.set(key, keep);
      }
      this.queue.drop(gone.held);
      this.queue.update(keep.held, Math.max(keep.held.until, gone.held.until), groupCost(keep));
      group = keep;
    }
    if (group === undefined) {
      const g: Group = { obs: { tools: [], steps: [], messages: [] }, keys: new Set(), held: undefined as unknown as Held<Group> };
      g.held = this.queue.hold(g, { a: line.lineNo, b: 0 }, line.lineNo, 0);
      group = g;
    }
    add(group.obs);
    let until = group.held.until;
    for (const k of keys) {
      if (!group.keys.has(k)) {
        group.keys.add(k);
        this.groups.set(k, group);
      }
      until = Math.max(until, this.index.lastLineOf(k));
    }
    this.queue.update(group.held, until, groupCost(group));
  }

  private finish(g: Group, early: boolean): void {
    for (const k of g.keys) {
      if (this.groups.get(k) === g) this.groups.delete(k);
      if (early) this.released.set(k, this.index.lastLineOf(k));
    }
    if (early) count(this.skipped, 'written_before_final');
    settle(g.obs, {}, {
      candidate: (c) => this.queue.ready({ a: c.order, b: 0 }, c.event),
      malformed: (m) => this.malformed.add(m),
      skip: (key) => count(this.skipped, key),
    });
  }
}

/** The streaming reading of one JSONL file: the first pass fills the index the parser uses. */
export function opencodeReading(path: string, options: OpencodeParseOptions = {}): LineReading & { readonly index: OpencodeIndex } {
  const index = new OpencodeIndex(path);
  return {
    index,
    scan: (line) => index.scan(line),
    parser: (output) => new OpencodeParser(path, index, output, options),
  };
}

/**
 * Parses a whole file held in memory: a `.json` file is one storage object (or an `opencode
 * export` document), anything else JSONL (through the streaming reading).
 */
export function parseOpencodeFile(path: string, data: Buffer, context: OpencodeParseContext = {}, options: OpencodeParseOptions = {}): ParsedFile {
  if (path.endsWith('.json')) return parseOpencodeDocument(path, data, context);
  return parseLinesWith(opencodeReading(path, options), data);
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
