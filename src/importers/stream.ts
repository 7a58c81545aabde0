// Reading a line-format file through its LineReading: from disk (the runner, readLinePasses: a
// small file in one read, a large one in chunks), or from a buffer already in memory (parseFile,
// for tests and callers that hold the bytes). All go through the same LineSplitter and the same
// parser, so they give the same events.
import { closeSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { LineSplitter, splitCompleteLines, type RawLine } from './lines.ts';
import type { ImportedEvent, LineReading, MalformedRecord, ParsedFile } from './types.ts';

/** Bytes read from disk at a time. */
export const READ_CHUNK_BYTES = 1024 * 1024;

/** Parses a whole file held in memory through a streaming reading: what parseFile returns. */
export function parseLinesWith(reading: LineReading, data: Buffer): ParsedFile {
  const events: ImportedEvent[] = [];
  const malformed: MalformedRecord[] = [];
  let recordsRead = 0;
  if (reading.scan) {
    const scan = reading.scan;
    const splitter = new LineSplitter();
    splitter.push(data, scan);
    splitter.end(scan);
  }
  const parser = reading.parser({ event: (e) => events.push(e), malformed: (m) => malformed.push(m) });
  const splitter = new LineSplitter();
  const feed = (line: RawLine): void => {
    recordsRead++;
    parser.line(line);
  };
  splitter.push(data, feed);
  splitter.end(feed);
  parser.end();
  return { events, malformed, completeBytes: splitter.completeBytes, recordsRead: parser.recordsRead ?? recordsRead, skipped: parser.skipped };
}

export interface ChunkedRead {
  /** Bytes up to the end of the last complete line. */
  readonly completeBytes: number;
  /** Bytes read from the file. */
  readonly bytesRead: number;
  /** Complete, non-blank lines handed to `onLine`. */
  readonly lines: number;
}

export interface ChunkedReadOptions {
  /** Bytes read at a time (READ_CHUNK_BYTES unless a test wants more chunks). */
  readonly chunkBytes?: number;
  /** Read no further than this offset (a file still being written may have grown since). */
  readonly limitBytes?: number;
  /** Called after each chunk is split, with the file offset reached and the bytes held. */
  readonly onChunk?: (bytesRead: number, heldBytes: number) => void;
}

/**
 * Reads a file in chunks and hands its complete lines to `onLine`, awaiting it when it returns
 * a promise (the runner flushes a batch there, so reading waits for the sink). What is held is
 * one chunk plus the line that spans chunks, whatever the file's size.
 */
export async function readLinesInChunks(path: string, onLine: (line: RawLine) => void | Promise<void>, options: ChunkedReadOptions = {}): Promise<ChunkedRead> {
  const chunkBytes = options.chunkBytes ?? READ_CHUNK_BYTES;
  const limit = options.limitBytes ?? Number.POSITIVE_INFINITY;
  const splitter = new LineSplitter();
  const handle = await open(path, 'r');
  let bytesRead = 0;
  let lines = 0;
  const pending: RawLine[] = [];
  const collect = (line: RawLine): void => {
    pending.push(line);
  };
  const drain = async (): Promise<void> => {
    for (const line of pending) {
      lines++;
      const r = onLine(line);
      if (r !== undefined) await r;
    }
    pending.length = 0;
  };
  try {
    for (;;) {
      const want = Math.min(chunkBytes, limit - bytesRead);
      if (want <= 0) break;
      // A fresh buffer per chunk: lines handed out are views into it and may outlive the read.
      const chunk = Buffer.allocUnsafe(want);
      const { bytesRead: n } = await handle.read(chunk, 0, want, bytesRead);
      if (n === 0) break;
      bytesRead += n;
      splitter.push(n === want ? chunk : chunk.subarray(0, n), collect);
      options.onChunk?.(bytesRead, splitter.heldBytes);
      await drain();
    }
    splitter.end(collect);
    await drain();
  } finally {
    await handle.close();
  }
  return { completeBytes: splitter.completeBytes, bytesRead, lines };
}

/**
 * A file this size or smaller is read in one go, and once for both passes of a reading with a
 * first pass (its lines kept between them); a larger one is read in chunks (twice for two
 * passes), so what is held stays bounded.
 */
export const READ_ONCE_MAX_BYTES = 8 * 1024 * 1024;

/** Lines of a file read once, at most (see readLinePasses); a file with more is read in chunks. */
export const READ_ONCE_MAX_LINES = 32 * 1024;

/** Whether `data` holds more than `max` newlines (counted no further than that). */
function newlinesOver(data: Buffer, max: number): boolean {
  let n = 0;
  for (let at = data.indexOf(0x0a); at >= 0; at = data.indexOf(0x0a, at + 1)) if (++n > max) return true;
  return false;
}

/**
 * The passes of a reading over a file's complete lines, no further than `limitBytes`: the first
 * pass (`scan`, when the reading has one), then the one `second` makes once the first is done,
 * over the lines the first found complete. A file of up to READ_ONCE_MAX_BYTES and
 * READ_ONCE_MAX_LINES (with no chunk size or chunk callback asked for) is read and split once,
 * and both passes go over the same lines: each line's text is made once, when a pass first reads
 * it. Gives what the last pass
 * read, as readLinesInChunks would have.
 */
export async function readLinePasses(
  path: string,
  scan: ((line: RawLine) => void) | undefined,
  second: () => (line: RawLine) => void | Promise<void>,
  options: ChunkedReadOptions & { readonly limitBytes: number },
): Promise<ChunkedRead> {
  const chunked = async (): Promise<ChunkedRead> => {
    const { chunkBytes, onChunk } = options;
    const limitBytes = scan === undefined ? options.limitBytes : (await readLinesInChunks(path, scan, { limitBytes: options.limitBytes, ...(chunkBytes === undefined ? {} : { chunkBytes }) })).completeBytes;
    return readLinesInChunks(path, second(), { ...(chunkBytes === undefined ? {} : { chunkBytes }), ...(onChunk === undefined ? {} : { onChunk }), limitBytes });
  };
  if (options.limitBytes > READ_ONCE_MAX_BYTES || options.chunkBytes !== undefined || options.onChunk !== undefined) return chunked();
  // Read synchronously: a small file is read from the page cache in well under a millisecond,
  // while an asynchronous open, read and close each wait for a thread of libuv's pool, which the
  // embedded engine's queries hold for as long as they run. Nothing to read: not opened (a
  // named pipe would block the process until something writes to it).
  let data = Buffer.alloc(0);
  if (options.limitBytes > 0) {
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.allocUnsafe(options.limitBytes);
      let at = 0;
      while (at < buffer.length) {
        const n = readSync(fd, buffer, at, buffer.length - at, at);
        if (n === 0) break;
        at += n;
      }
      data = buffer.subarray(0, at);
    } finally {
      closeSync(fd);
    }
  }
  // Each line held costs an object and a view of the bytes (~150 bytes): a file of many short
  // lines is read in chunks instead, so what is held stays near the file's size.
  if (newlinesOver(data, READ_ONCE_MAX_LINES)) return chunked();
  const { lines, completeBytes } = splitCompleteLines(data);
  if (scan !== undefined) for (const line of lines) scan(line);
  const onLine = second();
  for (let i = 0; i < lines.length; i++) {
    const r = onLine(lines[i] as RawLine);
    // Not held past its pass: its bytes and text go once the parser is done with them.
    (lines as (RawLine | undefined)[])[i] = undefined;
    if (r !== undefined) await r;
  }
  // The second pass of two would have read up to the end of the last complete line; one pass
  // alone, the bytes there are.
  return { completeBytes, bytesRead: scan === undefined ? data.length : completeBytes, lines: lines.length };
}

// ------------------------------------------------------------------------- held state

/**
 * The most a streaming parser holds, in UTF-16 units of the texts it keeps (inputs, outputs,
 * lines whose spans it keeps, events waiting for an earlier one) plus HELD_ITEM_CHARS per held
 * item. A real log never comes near it: a call waits a few lines for its output. Past it, the
 * parser writes the item that sorts first as it stands (ReleaseQueue), so a file built to keep
 * everything open costs this much memory, not its size.
 */
export const MAX_HELD_CHARS = 32 * 1024 * 1024;

/** What one held item (a call, a message, an event) counts for besides its texts. */
export const HELD_ITEM_CHARS = 256;

/**
 * A 52-bit hash of a key, for a first pass's maps: two keys that collide share the latest line
 * of both, which only makes the parser hold an item longer, never hand it out early.
 */
export function hashKey(text: string): number {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 15);
  }
  return (h1 >>> 0) * 0x100000 + ((h2 >>> 0) & 0xfffff);
}

/**
 * The first pass's record of where each key (a call id, a message id) is last mentioned: a
 * number per key, no text. `last` of a key never noted is 0.
 */
export class LastLines {
  private readonly lines = new Map<number, number>();

  get size(): number {
    return this.lines.size;
  }

  note(key: string, lineNo: number): void {
    this.lines.set(hashKey(key), lineNo);
  }

  last(key: string): number {
    return this.lines.get(hashKey(key)) ?? 0;
  }
}

/** Where an event sorts in the whole-file order: by `a`, then `b`. */
export interface SortPosition {
  readonly a: number;
  readonly b: number;
}

function before(x: SortPosition, y: SortPosition): boolean {
  return x.a !== y.a ? x.a < y.a : x.b < y.b;
}

/** A binary min-heap. */
class Heap<T> {
  private readonly items: T[] = [];

  constructor(private readonly less: (x: T, y: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const h = this.items;
    h.push(item);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent] as T;
      if (!this.less(item, p)) break;
      h[i] = p;
      i = parent;
    }
    h[i] = item;
  }

  /** Keeps only the items `keep` takes. */
  filter(keep: (item: T) => boolean): void {
    const kept = this.items.filter(keep);
    this.items.length = 0;
    for (const item of kept) this.push(item);
  }

  pop(): T | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (top === undefined || last === undefined || h.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const child = r < h.length && this.less(h[r] as T, h[l] as T) ? r : l;
      if (!this.less(h[child] as T, last)) break;
      h[i] = h[child] as T;
      i = child;
    }
    h[i] = last;
    return top;
  }
}

/** An item a parser holds until no later line can change it. */
export interface Held<T> {
  readonly item: T;
  /** No event of the item sorts before this (a lower bound: its events may sort later). */
  readonly low: SortPosition;
  /** The last line that can change the item (the first pass says): final once it is read. */
  until: number;
  /** What it holds (see MAX_HELD_CHARS). */
  cost: number;
  /** False once finished. */
  live: boolean;
}

interface ReadyEvent {
  readonly at: SortPosition;
  readonly seq: number;
  readonly event: ImportedEvent;
  readonly cost: number;
}

/**
 * The order keeper of a streaming parser whose whole-file version sorted its events at the end.
 * The parser holds each item (a call waiting for its output, a message that may be written
 * again) until the first pass says no later line names it; then `finish` turns it into its
 * events, handed back through `ready` with the position the whole-file sort gave them. A ready
 * event goes out once no held item can sort before it, so the output is the whole-file parse's
 * events in its order.
 *
 * What is held is bounded by `maxHeldChars`: past it, the first thing in the order goes out
 * early, a ready event as it is, or a held item finished as it stands (`finish` is told it is
 * early, and the parser then deals with the later lines that name it; each parser's README says
 * how). Nothing is dropped; a file that reaches the bound gets its items written before their
 * last lines.
 */
export class ReleaseQueue<T> {
  private readonly byUntil = new Heap<{ readonly held: Held<T>; readonly until: number }>((x, y) => x.until < y.until);
  private readonly byLow = new Heap<Held<T>>((x, y) => before(x.low, y.low));
  private readonly readyEvents = new Heap<ReadyEvent>((x, y) => (x.at.a !== y.at.a || x.at.b !== y.at.b ? before(x.at, y.at) : x.seq < y.seq));
  private seq = 0;
  private live = 0;
  private dead = 0;
  private chars = 0;
  /** Items finished early because the bound was reached. */
  releasedEarly = 0;
  /** The largest held cost seen (tests, benchmarks). */
  peakChars = 0;

  constructor(
    private readonly finish: (item: T, early: boolean) => void,
    private readonly output: (event: ImportedEvent) => void,
    private readonly maxHeldChars: number = MAX_HELD_CHARS,
  ) {}

  /** Items held and events waiting. */
  get heldItems(): number {
    return this.live + this.readyEvents.size;
  }

  get heldChars(): number {
    return this.chars;
  }

  hold(item: T, low: SortPosition, until: number, cost: number): Held<T> {
    const held: Held<T> = { item, low, until, cost: cost + HELD_ITEM_CHARS, live: true };
    this.live++;
    this.chars += held.cost;
    this.byLow.push(held);
    this.byUntil.push({ held, until });
    return held;
  }

  /** The item's last line moved on (a merge) or what it holds changed. */
  update(held: Held<T>, until: number, cost: number): void {
    if (!held.live) return;
    this.chars += cost + HELD_ITEM_CHARS - held.cost;
    held.cost = cost + HELD_ITEM_CHARS;
    if (until > held.until) {
      held.until = until;
      this.byUntil.push({ held, until });
    }
  }

  /** Drops an item without events (merged into another one). */
  drop(held: Held<T>): void {
    if (!held.live) return;
    held.live = false;
    this.live--;
    this.chars -= held.cost;
    // Finished items stay in the heaps until they reach the top: past a few thousand, and more
    // than the live ones, they are swept (an item held long would otherwise keep every item
    // finished after it).
    if (++this.dead > 4096 && this.dead > 2 * this.live) {
      this.byLow.filter((h) => h.live);
      this.byUntil.filter((e) => e.held.live && e.held.until === e.until);
      this.dead = 0;
    }
  }

  /** An event whose place in the order is `at`. */
  ready(at: SortPosition, event: ImportedEvent): void {
    const cost = event.envelope.chars + HELD_ITEM_CHARS;
    this.chars += cost;
    this.readyEvents.push({ at, seq: this.seq++, event, cost });
  }

  /** After the parser read line `lineNo`: finishes what is final, hands out what is first. */
  afterLine(lineNo: number): void {
    for (let top = this.byUntil.peek(); top !== undefined && top.until <= lineNo; top = this.byUntil.peek()) {
      this.byUntil.pop();
      if (top.held.live && top.held.until === top.until) this.finishHeld(top.held, false);
    }
    this.releaseBefore(this.lowestHeld());
    this.peakChars = Math.max(this.peakChars, this.chars);
    while (this.chars > this.maxHeldChars) {
      const first = this.readyEvents.peek();
      const held = this.lowestHeld();
      if (first !== undefined && (held === undefined || before(first.at, held.low))) this.emitFirst();
      else if (held !== undefined) {
        this.releasedEarly++;
        this.finishHeld(held, true);
      } else break;
    }
  }

  /** After the last line: every item is final. */
  end(): void {
    for (let held = this.lowestHeld(); held !== undefined; held = this.lowestHeld()) this.finishHeld(held, false);
    this.releaseBefore(undefined);
  }

  private finishHeld(held: Held<T>, early: boolean): void {
    this.drop(held);
    this.finish(held.item, early);
  }

  private lowestHeld(): Held<T> | undefined {
    for (let top = this.byLow.peek(); top !== undefined; top = this.byLow.peek()) {
      if (top.live) return top;
      this.byLow.pop();
      if (this.dead > 0) this.dead--;
    }
    return undefined;
  }

  private releaseBefore(held: Held<T> | undefined): void {
    for (let first = this.readyEvents.peek(); first !== undefined; first = this.readyEvents.peek()) {
      if (held !== undefined && !before(first.at, held.low)) return;
      this.emitFirst();
    }
  }

  private emitFirst(): void {
    const first = this.readyEvents.pop();
    if (first === undefined) return;
    this.chars -= first.cost;
    this.output(first.event);
  }
}
