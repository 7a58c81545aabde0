// The streamed reading of an OTLP/JSON file with one export per line (`.jsonl`: what a
// collector's or an SDK's file exporter writes), in two passes over its lines, giving exactly
// what the whole-file parse (parser.ts parseOtlpFile) gives: the same events in the same order
// and bytes, the same malformed records, counters and offsets. No I/O, never throws.
//
// - The first pass (`scan`) fills the OtlpIndex (what reading an item needs of the rest of the
//   file: the spans of each trace, Claude Code's requests of each session) and notes, for each
//   identity key, the last position of an item with that key (LastPositions).
// - The second pass reads each line's items with the same item reader as the whole-file parse.
//   The whole-file parse keeps, of the items that make events with one event id, the last one,
//   in its place in the file. So an event is held until no later item can make one with its
//   id (the last position of its key is passed), and handed out in file order; one a later item
//   replaces is dropped. The key is a superset of the id's parts an item has on its own (a
//   span's trace and span id or tool call id, a log record's session and call, request or
//   sequence): items with one id always share a key, so an event is never handed out early;
//   items sharing a key with other ids only make the events after them wait longer.
//
// What it holds: the index (a few strings per span and per request), a number per key, and
// the events waiting for a later copy (none in an export without repeated ids).
import type { Envelope } from '../envelope.ts';
import { MalformedStream, rawOf, readObject, type RawLine } from '../lines.ts';
import type { ImportOutput, LineParser, LineReading } from '../types.ts';
import { exportFault, itemReader, logEventName, malformedItem, OtlpIndex, type Item, type Located, type OtlpParseOptions } from './parser.ts';
import { anyString, isOtlpExport, readExport, type OtlpItem } from './types.ts';

/** A position in the file: the line, then the item's place in its export. */
interface Position {
  readonly lineNo: number;
  readonly index: number;
}

function isAfter(x: Position, y: Position): boolean {
  return x.lineNo !== y.lineNo ? x.lineNo > y.lineNo : x.index > y.index;
}

/**
 * The key an item's event id is made from, as far as the item alone says (see the file's
 * comment): equal event ids imply equal keys.
 */
function identityKey(item: OtlpItem, index: OtlpIndex): string | undefined {
  if (item.kind === 'span') {
    // A tool call's id is made from its call id when it has one; any other span's from its trace and span id.
    const isTool = anyString(item.span.attributes.get('gen_ai.operation.name')) === 'execute_tool';
    const callId = isTool ? (anyString(item.span.attributes.get('gen_ai.tool.call.id')) ?? '') : '';
    return callId ? `span-call\u0000${callId}` : `span\u0000${item.span.traceId}\u0000${item.span.spanId}`;
  }
  if (item.kind !== 'log') return undefined;
  const a = item.record.attributes;
  const name = logEventName(item.record, index.harnessOf(item.resource));
  const session = anyString(a.get('session.id')) ?? '';
  const sequence = anyString(a.get('event.sequence')) ?? '';
  let part: string;
  if (name === 'claude_code.tool_result' || name === 'claude_code.tool_decision') part = `call\u0000${anyString(a.get('tool_use_id')) || `seq\u0000${sequence}`}`;
  else if (name === 'claude_code.api_request') part = `request\u0000${anyString(a.get('request_id')) || anyString(a.get('client_request_id')) || `seq\u0000${sequence}`}`;
  else if (name === 'claude_code.mcp_server_connection') part = `seq\u0000${sequence}`;
  else return undefined;
  return `log\u0000${session}\u0000${part}`;
}

/**
 * A 52-bit hash of a key: the first pass keeps a number per key, not its text. Two keys that
 * collide share the later position of both, which only makes an event wait longer.
 */
function hashKey(text: string): number {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 15);
  }
  return (h1 >>> 0) * 0x100000 + ((h2 >>> 0) & 0xfffff);
}

/** The first pass's last position of each identity key. */
class LastPositions {
  private readonly last = new Map<number, Position>();

  note(key: string, at: Position): void {
    this.last.set(hashKey(key), at);
  }

  of(key: string): Position | undefined {
    return this.last.get(hashKey(key));
  }
}

/** The text an export is read from: a byte order mark is not part of it (on any line, as the whole-file parse reads it). */
function exportText(line: RawLine): string {
  return line.text.replace(/^\uFEFF/, '');
}

/** The exports' items of one line, or undefined when the line is no OTLP export. */
function itemsOf(text: string): OtlpItem[] | undefined {
  const read = readObject(text);
  return read.ok && isOtlpExport(read.value) ? readExport(read.value) : undefined;
}

interface Waiting {
  readonly eventId: string;
  readonly envelope: Envelope;
  readonly source: string;
  readonly endOffset: number;
  /** The last position of its key: final once it is read. */
  readonly until: Position;
  dropped: boolean;
}

/** The second pass: each line's items read as the whole-file parse reads them, events handed out in file order once final. */
class OtlpLineParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  /** Spans and log records, plus the lines that were no OTLP export (as the whole-file parse counts). */
  recordsRead = 0;
  private readonly malformed: MalformedStream;
  private readonly waiting: Waiting[] = [];
  private head = 0;
  private readonly waitingById = new Map<string, Waiting>();
  private readonly read: (item: Item) => void;
  private current: Position = { lineNo: 0, index: 0 };
  private currentKey: string | undefined;

  constructor(
    private readonly path: string,
    private readonly index: OtlpIndex,
    private readonly last: LastPositions,
    private readonly output: ImportOutput,
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
    this.read = itemReader(index, {
      emit: (eventId, line, at) => this.hold(eventId, line, at),
      bad: (at, problem, detail) => this.malformed.add(malformedItem(at, problem, detail)),
      count: (key) => {
        this.skipped[key] = (this.skipped[key] ?? 0) + 1;
      },
    });
  }

  line(line: RawLine): void {
    const text = exportText(line);
    const read = readObject(text);
    if (!read.ok) {
      this.recordsRead++;
      this.malformed.add({ raw: rawOf(line), line: line.lineNo, problem: read.problem, detail: read.detail, endOffset: line.endOffset });
      return;
    }
    const doc = read.value;
    if (!isOtlpExport(doc)) {
      this.recordsRead++;
      const fault = exportFault(doc);
      // A metrics export, or any other object: not read on purpose.
      if (fault === undefined) this.skipped['not_otlp'] = (this.skipped['not_otlp'] ?? 0) + 1;
      else this.malformed.add({ raw: rawOf(line), line: line.lineNo, problem: 'malformed_export', detail: fault, endOffset: line.endOffset });
      return;
    }
    const at = { source: `${this.path}:${line.lineNo}`, endOffset: line.endOffset, exportText: text, lineNo: line.lineNo };
    for (const [i, item] of readExport(doc).entries()) {
      this.recordsRead++;
      this.current = { lineNo: line.lineNo, index: i };
      this.currentKey = identityKey(item, this.index);
      // `order` only sorts the whole-file parse's events: here they go out in file order.
      const located: Item = { ...item, ...at, order: 0 };
      this.read(located);
      this.release(false);
    }
  }

  end(): void {
    this.release(true);
  }

  private hold(eventId: string, envelope: Envelope, at: Located): void {
    const earlier = this.waitingById.get(eventId);
    // The whole-file parse keeps the last item of an id, where that item is.
    if (earlier) earlier.dropped = true;
    const key = this.currentKey;
    const until = (key === undefined ? undefined : this.last.of(key)) ?? this.current;
    const w: Waiting = { eventId, envelope, source: at.source, endOffset: at.endOffset, until, dropped: false };
    this.waiting.push(w);
    this.waitingById.set(eventId, w);
  }

  /** Hands out the waiting events, in file order, while the first one is final (all of them at the end). */
  private release(atEnd: boolean): void {
    while (this.head < this.waiting.length) {
      const w = this.waiting[this.head] as Waiting;
      if (!w.dropped && !atEnd && isAfter(w.until, this.current)) break;
      this.head++;
      if (this.waitingById.get(w.eventId) === w) this.waitingById.delete(w.eventId);
      if (!w.dropped) this.output.event({ envelope: w.envelope, source: w.source, endOffset: w.endOffset });
    }
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
  }
}

/** The streamed reading of one `.jsonl` OTLP file: the first pass fills the index the parser uses. */
export function otlpLinesReading(path: string, options: OtlpParseOptions = {}): LineReading & { readonly index: OtlpIndex } {
  const index = new OtlpIndex(options);
  const last = new LastPositions();
  let sealed = false;
  return {
    index,
    scan: (line) => {
      const items = itemsOf(exportText(line));
      if (!items) return;
      for (const [i, item] of items.entries()) {
        index.add(item);
        const key = identityKey(item, index);
        if (key !== undefined) last.note(key, { lineNo: line.lineNo, index: i });
      }
    },
    parser: (output) => {
      if (!sealed) index.seal();
      sealed = true;
      return new OtlpLineParser(path, index, last, output);
    },
  };
}
