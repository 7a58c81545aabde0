// The pipeline's one fixed shape: source -> decode/validate -> project -> sink, with counts that
// prove nothing was lost (events read = rows written + dead letters).
import { DEFAULT_ACCOUNTING, type AccountingConfig, toolOutputOf, type ToolOutput } from '../accounting/session.ts';
import type { ContentClass } from '../accounting/content-class.ts';
import { deadLetter, decodeEnvelope, decodeEvent, DEFAULT_LIMITS, nowClickHouseTime, UNKNOWN_MACHINE, type DecodeLimits, type DecodeOutcome } from '../decode/event.ts';
import { msToClickHouseTime } from '../util/time.ts';
import type { DeadLetterReason, DeadLetterRow, RowFlag } from '../model/records.ts';
import type { DiscoveryObservation, McpEventRow, McpToolRegistrationRow } from '../model/mcp.ts';
import { derivationsFor } from '../derive/index.ts';
import { emptyCounts, type PipelineCounts } from './counts.ts';
import type { BatchEvents, Derivation, DerivedCount } from '../derive/stage.ts';
import type { ContextRef, NativeColumn, Sink, ToolCallBatch } from '../model/sink.ts';
import { DecodeThread, decodeThreadAvailable, type ThreadOutput } from '../thread/decode.ts';
import type { TypedEvent } from '../decode/typed.ts';
import { fileLines, listInputFiles, type InputFile, type SourceLine } from '../source/file.ts';
import { drive, type RecordTarget } from '../source/record.ts';

export { emptyCounts, type PipelineCounts } from './counts.ts';

export interface BatchLimits {
  /** Flush when this many events are buffered. */
  readonly batchMaxRows: number;
  /** Flush when the buffered events hold about this many bytes. */
  readonly batchMaxBytes: number;
}

/**
 * Batches of 20,000 events / 32 MiB. Measured: 5,000 / 8 MiB lowers the peak anonymous memory
 * of a 1 M-event, 100 k-session replay from 626 to 435 MB (bench/growth.ts) but costs 35 % of
 * the replay rate on a quiet machine (bench/replay.ts: 9,748 vs 14,957 events/s): every batch
 * pays its accounting lookups and MCP / discovery recomputation once, whatever its size.
 */
export const DEFAULT_BATCH: BatchLimits = { batchMaxRows: 20_000, batchMaxBytes: 32 * 1024 * 1024 };

export interface BatchWriterHooks {
  /**
   * Called with the dead letters the sink has just acknowledged (again on a retried flush: the
   * same rows), e.g. so a stream worker can also publish them to a dead-letter topic.
   */
  readonly onDeadLettersWritten?: (rows: readonly DeadLetterRow[]) => void;
}

/**
 * A decoded event as the batch keeps it. A tool call's row is encoded for the sink as soon as
 * it is decoded (its large texts are not kept); what the accounting needs stays.
 */
type BufferedOutcome =
  | { readonly kind: 'row'; readonly call: ToolOutput; readonly outputClass: ContentClass; readonly ingestedAt: string; readonly discovery: DiscoveryObservation | undefined }
  | Exclude<DecodeOutcome, { kind: 'row' }>;

/** The events of one batch: tool-call rows already encoded, the rest as decoded. */
interface BatchBuffer {
  readonly outcomes: BufferedOutcome[];
  readonly toolCalls: ToolCallBatch;
  /** Flags of the encoded tool-call rows, counted once the sink acknowledged them. */
  readonly flags: Map<RowFlag, number>;
  /** Secrets redacted in the encoded tool-call rows. */
  redactions: number;
}

/**
 * A batch's tool-call rows take about half the bytes of its input lines (the tool outputs are
 * counted, not stored): sized for that, a full batch's buffer grows once at most.
 */
function emptyBuffer(sink: Sink, batchMaxBytes: number): BatchBuffer {
  return { outcomes: [], toolCalls: sink.toolCallBatch(Math.min(Math.max(batchMaxBytes >>> 1, 64 * 1024), 16 * 1024 * 1024)), flags: new Map(), redactions: 0 };
}

/** A batch's events by what they are (the derivations' input), split once. */
function split(outcomes: readonly BufferedOutcome[]): BatchEvents & { readonly usageEvents: number } {
  const deadLetters: DeadLetterRow[] = [];
  const mcpEvents: McpEventRow[] = [];
  const registrations: McpToolRegistrationRow[] = [];
  const discovery: DiscoveryObservation[] = [];
  let usageEvents = 0;
  for (const o of outcomes) {
    if (o.kind === 'dead') deadLetters.push(o.dead);
    else if (o.kind === 'mcp') {
      mcpEvents.push(o.event);
      for (const r of o.registrations) registrations.push(r);
    } else if (o.kind === 'row') {
      if (o.discovery) discovery.push(o.discovery);
    } else usageEvents++;
  }
  return { events: outcomes, deadLetters, mcpEvents, registrations, discovery, usageEvents };
}

/** Versions of derived rows: strictly increasing in a process, so a later derivation always wins. */
let lastComputedMs = 0;
function nextComputedAt(): string {
  lastComputedMs = Math.max(Date.now(), lastComputedMs + 1);
  return msToClickHouseTime(lastComputedMs);
}

/**
 * Buffers decoded events in arrival order and writes them in batches: decode/validate ->
 * project -> account -> sink. Counts only what the sink acknowledged.
 */
export class BatchWriter {
  private buffer: BatchBuffer;
  private bufferedBytes = 0;
  /** A batch taken off the buffer and not yet acknowledged; retried first by the next flush. */
  private sealed: { buffer: BatchBuffer; events: ReturnType<typeof split> | undefined } | undefined;
  /** What each batch derives, in order (src/derive/index.ts). */
  private readonly derivations: readonly Derivation<unknown>[];

  constructor(
    private readonly sink: Sink,
    readonly counts: PipelineCounts,
    private readonly batch: BatchLimits = DEFAULT_BATCH,
    accounting: AccountingConfig = DEFAULT_ACCOUNTING,
    private readonly hooks: BatchWriterHooks = {},
  ) {
    this.derivations = derivationsFor(accounting);
    this.buffer = emptyBuffer(sink, batch.batchMaxBytes);
  }

  /** Decodes one line into the batch: what it became, and whether the batch is due for a flush. */
  add(line: SourceLine, ingestedAt: string, limits: DecodeLimits): Added {
    this.counts.eventsRead++;
    this.bufferedBytes += line.bytes.byteLength;
    return this.keep(decodeEvent(line.bytes, line.source, ingestedAt, limits));
  }

  /**
   * Decodes an importer's typed event into the batch (no line made, as add() would decode it);
   * counted towards the batch's bytes as about its characters.
   */
  addTyped(event: TypedEvent, source: string, ingestedAt: string, limits: DecodeLimits): Added {
    this.counts.eventsRead++;
    this.bufferedBytes += event.chars;
    return this.keep(decodeEnvelope(event, source, ingestedAt, limits));
  }

  /** Keeps a decoded event in the batch: a tool call's row encoded now, what the accounting needs. */
  private keep(o: DecodeOutcome): Added {
    const b = this.buffer;
    if (o.kind === 'row') {
      const r = o.row;
      b.toolCalls.add(r);
      for (const f of r.flags) b.flags.set(f, (b.flags.get(f) ?? 0) + 1);
      b.redactions += r.redactions;
      b.outcomes.push({
        kind: 'row',
        outputClass: o.outputClass,
        ingestedAt: r.ingested_at,
        discovery: o.discovery,
        call: toolOutputOf(r),
      });
    } else b.outcomes.push(o);
    return { kind: o.kind, due: this.isBatchDue };
  }

  /** Whether the buffered events make a batch due (events or bytes). */
  get isBatchDue(): boolean {
    return this.buffer.outcomes.length >= this.batch.batchMaxRows || this.bufferedBytes >= this.batch.batchMaxBytes;
  }

  /** When a batch is due: events or bytes buffered. */
  get limits(): BatchLimits {
    return this.batch;
  }

  /** The columns the sink takes pre-encoded tool-call blocks in (a decode thread's), if it takes them. */
  blockColumns(): readonly NativeColumn[] | undefined {
    return this.sink.toolCallBlockColumns?.();
  }

  /**
   * Adds what a decode thread made of a message's lines (src/thread/decode.ts): its items in
   * order, its tool-call rows as the encoded block. The caller decides when a batch is due.
   */
  addDecoded(output: ThreadOutput): void {
    const b = this.buffer;
    if (output.block) {
      if (!b.toolCalls.addBlock) throw new TypeError('The sink takes no encoded tool-call blocks (toolCallBlockColumns)');
      const calls = [];
      for (const item of output.items) if (item.kind === 'row') calls.push(item.call);
      b.toolCalls.addBlock(output.block, calls);
    }
    for (const item of output.items) {
      this.counts.eventsRead++;
      if (item.kind === 'row') {
        for (const f of item.flags) b.flags.set(f, (b.flags.get(f) ?? 0) + 1);
        b.redactions += item.redactions;
        b.outcomes.push({ kind: 'row', outputClass: item.outputClass, ingestedAt: item.ingestedAt, discovery: item.discovery, call: item.call });
      } else b.outcomes.push(item);
    }
  }

  /**
   * Adds an input record that is a dead letter before decoding (an importer's malformed raw
   * record): counted as read, written with the batch.
   */
  addDeadLetter(dead: DeadLetterRow): Added {
    this.counts.eventsRead++;
    this.buffer.outcomes.push({ kind: 'dead', dead });
    this.bufferedBytes += dead.raw_bytes;
    return { kind: 'dead', due: this.isBatchDue };
  }

  /** Events added since the last seal (not including a sealed batch). */
  get buffered(): number {
    return this.buffer.outcomes.length;
  }

  /** Events buffered or being written, not yet acknowledged by the sink. */
  get pending(): number {
    return this.buffer.outcomes.length + (this.sealed?.buffer.outcomes.length ?? 0);
  }

  /** Takes the buffered events off the buffer as the batch to write next (no-op when one is sealed). */
  seal(): void {
    if (this.sealed || this.buffer.outcomes.length === 0) return;
    this.sealed = { buffer: this.buffer, events: undefined };
    this.buffer = emptyBuffer(this.sink, this.batch.batchMaxBytes);
    this.bufferedBytes = 0;
  }

  /**
   * Writes the sealed batch. It stays sealed until the sink acknowledged every insert, so a
   * failed write is retried as is by the next flush: the derived rows are computed once and
   * the tables deduplicate a partial write.
   */
  async writeSealed(): Promise<void> {
    const sealed = this.sealed;
    if (!sealed) return;
    const b = (sealed.events ??= split(sealed.buffer.outcomes));
    // The batch's own rows, then what it derives: a failure leaves the batch sealed, and the
    // next flush writes it again (each table stores a row once; see Derivation.run).
    await this.sink.writeDeadLetters(b.deadLetters);
    this.hooks.onDeadLettersWritten?.(b.deadLetters);
    await this.sink.writeToolCalls(sealed.buffer.toolCalls);
    const derived = new Map<DerivedCount, number>();
    for (const d of this.derivations) {
      const added = await d.run(this.sink, d.select(b), nextComputedAt());
      for (const [k, n] of Object.entries(added) as [DerivedCount, number][]) derived.set(k, (derived.get(k) ?? 0) + n);
    }
    this.sealed = undefined;
    const c = this.counts;
    for (const [k, n] of derived) c[k] += n;
    const toolCalls = sealed.buffer.toolCalls.rows;
    c.toolCallRows += toolCalls;
    c.usageRows += b.usageEvents;
    c.mcpEventRows += b.mcpEvents.length;
    c.rowsWritten += toolCalls + b.usageEvents + b.mcpEvents.length;
    c.deadLetters += b.deadLetters.length;
    for (const d of b.deadLetters) c.deadLettersByReason[d.reason] = (c.deadLettersByReason[d.reason] ?? 0) + 1;
    for (const [f, n] of sealed.buffer.flags) c.flaggedRows[f] = (c.flaggedRows[f] ?? 0) + n;
    c.secretsRedacted += sealed.buffer.redactions;
    for (const d of b.deadLetters) c.secretsRedacted += d.redactions;
    for (const e of b.mcpEvents) c.secretsRedacted += e.redactions;
  }

  /** Writes everything buffered; resolves when the sink acknowledged all of it. */
  async flush(): Promise<void> {
    await this.writeSealed(); // a batch left by a failed flush goes first, in order
    this.seal();
    await this.writeSealed();
  }

  /**
   * Seals the buffer and starts writing it, so the caller can decode the next batch meanwhile.
   * Await the returned promise before the next startFlush or flush (one batch in flight).
   */
  startFlush(): Promise<void> {
    if (this.sealed) return Promise.reject(new Error('A batch is already being written: await it first'));
    this.seal();
    return this.writeSealed();
  }
}

/** What an added line became (a row, a usage, an MCP event, a dead letter…), and whether its batch is due. */
export interface Added {
  readonly kind: DecodeOutcome['kind'];
  readonly due: boolean;
}

/**
 * How a file-fed source (replay, import) flushes a BatchWriter: a due batch starts writing
 * while the next is decoded (the engine inserts on its own threads), one batch in flight at
 * most; finish() resolves when the sink acknowledged everything. The Kafka worker flushes its
 * own way (flush then commit, under its partition lock and per group generation).
 */
export class FlushPipeline {
  private inFlight: Promise<void> = Promise.resolve();
  /** A batch is being written (its promise not settled yet). */
  writing = false;

  constructor(readonly writer: BatchWriter) {}

  /** Starts writing the buffered batch, once the one in flight is acknowledged. */
  async next(): Promise<void> {
    await this.inFlight;
    this.writing = true;
    this.inFlight = this.writer.startFlush().finally(() => {
      this.writing = false;
    });
    this.inFlight.catch(() => {}); // observed by the next await; avoids an unhandled rejection meanwhile
  }

  /** Resolves when everything added is acknowledged (and rejects with the first failure). */
  async finish(): Promise<void> {
    await this.inFlight;
    await this.writer.flush();
  }
}

/**
 * A target of a file-fed source (replay, import), positions `file:line`: it also takes the raw
 * records an importer could not read. writerTarget is the database; `import --to-kafka` gives
 * the same reading a target that publishes (src/kafka/import-publish.ts).
 */
export type FileTarget<Line = Uint8Array | TypedEvent> = RecordTarget<Line, string> & Required<Pick<RecordTarget<Line, string>, 'addMalformed'>>;

/**
 * The database as a target: each record decoded into `writer`'s batch, a due batch written
 * while the source reads on (FlushPipeline), flush() when everything is stored. Records that name
 * no machine get `limits.machine`.
 */
export function writerTarget(writer: BatchWriter, ingestedAt: string, limits: DecodeLimits): FileTarget {
  const columns = writer.blockColumns();
  if (columns !== undefined && decodeThreadAvailable()) return threadedWriterTarget(writer, ingestedAt, limits, columns);
  const pipeline = new FlushPipeline(writer);
  const machine = limits.machine ?? UNKNOWN_MACHINE;
  // While a batch is written, the source pauses every YIELD_EVERY_RECORDS events for the event
  // loop: the write is a chain of queries whose each next step waits for the loop, and a source
  // whose reads resolve from buffered data would hold it for a whole chunk (~2,000 events) each
  // time (a replay of 100 k events: 12-18 % faster with the pauses).
  let sinceYield = 0;
  const wait = (due: boolean): boolean => {
    if (due) return true;
    if (!pipeline.writing || ++sinceYield < YIELD_EVERY_RECORDS) return false;
    sinceYield = 0;
    return true;
  };
  return {
    addEvent: (line, source) => wait((line instanceof Uint8Array ? writer.add({ bytes: line, source }, ingestedAt, limits) : writer.addTyped(line, source, ingestedAt, limits)).due),
    addMalformed: (raw, detail, source) => wait(writer.addDeadLetter(deadLetter(raw, 'import_malformed', detail, source, ingestedAt, limits.redact !== false, machine)).due),
    due: () => (writer.isBatchDue ? pipeline.next() : yieldToLoop()),
    flush: () => pipeline.finish(),
  };
}

/**
 * Records a file-fed source hands on between two pauses for the event loop while a batch is
 * written (writerTarget; the stream worker's intake pauses every 128): the write's engine calls
 * complete on this loop.
 */
export const YIELD_EVERY_RECORDS = 64;

/** Lets the event loop run what is ready (I/O callbacks included) before going on. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Lines sent to the decode thread and not yet back, at most, before the source waits. */
const THREAD_MAX_OUTSTANDING = 8192;

/**
 * writerTarget with the decoding in a worker thread (src/thread/decode.ts): each line is sent
 * as it is read; what comes back is added to the writer's batch in order. A batch is due after
 * as many events (or bytes) as the writer's limits, counted as they are sent: before it is
 * sealed, every line sent is back, so a batch holds exactly the events read before it.
 */
function threadedWriterTarget(writer: BatchWriter, ingestedAt: string, limits: DecodeLimits, columns: readonly NativeColumn[]): FileTarget {
  const pipeline = new FlushPipeline(writer);
  const machine = limits.machine ?? UNKNOWN_MACHINE;
  const thread = new DecodeThread({ ingestedAt, limits, columns }, (output) => writer.addDecoded(output));
  const { batchMaxRows, batchMaxBytes } = writer.limits;
  // Events and bytes of the batch being read (sent to the thread or added as dead letters).
  let events = 0;
  let bytes = 0;
  const batchDue = (): boolean => events >= batchMaxRows || bytes >= batchMaxBytes;
  const added = (n: number): boolean => {
    events++;
    bytes += n;
    return batchDue() || thread.outstanding >= THREAD_MAX_OUTSTANDING;
  };
  return {
    addEvent: (line, source) => {
      // The thread decodes lines: a typed event goes as its line.
      const b = line instanceof Uint8Array ? line : Buffer.from(line.text, 'utf8');
      thread.post(b, source);
      return added(b.byteLength);
    },
    addMalformed: (raw, detail, source) => {
      const dead = deadLetter(raw, 'import_malformed', detail, source, ingestedAt, limits.redact !== false, machine);
      writer.addDeadLetter(dead);
      return added(dead.raw_bytes);
    },
    due: async () => {
      if (!batchDue()) return thread.settled(THREAD_MAX_OUTSTANDING >>> 1);
      await thread.settled(0);
      events = 0;
      bytes = 0;
      await pipeline.next();
    },
    flush: async () => {
      try {
        await thread.settled(0);
        await pipeline.finish();
      } finally {
        await thread.close();
      }
    },
  };
}

export interface ReplayOptions {
  readonly limits?: DecodeLimits;
  readonly batch?: BatchLimits;
  readonly accounting?: AccountingConfig;
  /** Called with (bytes read so far, total bytes) as input is consumed. */
  readonly onProgress?: (bytesRead: number, totalBytes: number) => void;
}

/** Replays JSONL files (or stdin) into the sink. */
export async function replayPaths(paths: readonly string[], sink: Sink, options: ReplayOptions = {}): Promise<PipelineCounts> {
  const files = listInputFiles(paths);
  return replayFiles(files, sink, options);
}

export async function replayFiles(files: readonly InputFile[], sink: Sink, options: ReplayOptions = {}): Promise<PipelineCounts> {
  const counts = emptyCounts();
  const writer = new BatchWriter(sink, counts, options.batch, options.accounting);
  const limits = options.limits ?? DEFAULT_LIMITS;
  const totalBytes = files.reduce((n, f) => n + f.bytes, 0);
  const ingestedAt = nowClickHouseTime();
  const onBytes = (n: number): void => {
    counts.bytesRead += n;
    options.onProgress?.(counts.bytesRead, totalBytes);
  };
  await drive(fileLines(files, onBytes, () => counts.blankLines++), writerTarget(writer, ingestedAt, limits));
  return counts;
}
