// The pipeline's one fixed shape: source -> decode/validate -> project -> sink, with counts that
// prove nothing was lost (events read = rows written + dead letters).
import {
  ContextAccountant,
  contextKey,
  DEFAULT_ACCOUNTING,
  freshSessionState,
  type AccountingConfig,
  type AccountingResult,
  type BreachRow,
  type TokenUsageRow,
  type ToolOutput,
} from './accounting/session.ts';
import type { ContentClass } from './accounting/content-class.ts';
import { decodeEvent, DEFAULT_LIMITS, nowClickHouseTime, type DecodeLimits, type DecodeOutcome } from './decode/event.ts';
import type { DeadLetterReason, DeadLetterRow, RowFlag } from './model/records.ts';
import { TOOL_CALL_COLUMNS, type ClickHouseSink, type ContextToRestore } from './sink/clickhouse.ts';
import { TsvWriter } from './sink/tsv.ts';
import { listInputFiles, openInput, readLines, type InputFile, type SourceLine } from './source/file.ts';

export interface PipelineCounts {
  eventsRead: number;
  /** Input events stored as rows: tool calls plus observed usage events. */
  rowsWritten: number;
  toolCallRows: number;
  usageRows: number;
  deadLetters: number;
  deadLettersByReason: Partial<Record<DeadLetterReason, number>>;
  flaggedRows: Partial<Record<RowFlag, number>>;
  /** Derived rows (not input events): estimates of tool outputs and threshold breaches. */
  estimateRows: number;
  breaches: number;
  blankLines: number;
  bytesRead: number;
}

export function emptyCounts(): PipelineCounts {
  return {
    eventsRead: 0,
    rowsWritten: 0,
    toolCallRows: 0,
    usageRows: 0,
    deadLetters: 0,
    deadLettersByReason: {},
    flaggedRows: {},
    estimateRows: 0,
    breaches: 0,
    blankLines: 0,
    bytesRead: 0,
  };
}

export interface BatchLimits {
  /** Flush when this many events are buffered. */
  readonly maxBatchRows: number;
  /** Flush when the buffered events hold about this many bytes. */
  readonly maxBatchBytes: number;
}

export const DEFAULT_BATCH: BatchLimits = { maxBatchRows: 20_000, maxBatchBytes: 32 * 1024 * 1024 };

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
  | { readonly kind: 'row'; readonly call: ToolOutput; readonly outputClass: ContentClass; readonly ingestedAt: string }
  | Exclude<DecodeOutcome, { kind: 'row' }>;

/** The events of one batch: tool-call rows already encoded, the rest as decoded. */
interface BatchBuffer {
  readonly outcomes: BufferedOutcome[];
  readonly toolCalls: TsvWriter;
  /** Flags of the encoded tool-call rows, counted once the sink acknowledged them. */
  readonly flags: Map<RowFlag, number>;
}

/**
 * A batch's tool-call rows take about half the bytes of its input lines (the tool outputs are
 * counted, not stored): sized for that, a full batch's buffer grows once at most.
 */
function emptyBuffer(maxBatchBytes: number): BatchBuffer {
  return { outcomes: [], toolCalls: new TsvWriter(Math.min(Math.max(maxBatchBytes >>> 1, 64 * 1024), 16 * 1024 * 1024)), flags: new Map() };
}

/** A batch with its derived rows computed, ready to be written (and rewritten on retry). */
interface PreparedBatch {
  readonly deadLetters: DeadLetterRow[];
  readonly tokenUsage: TokenUsageRow[];
  readonly breaches: BreachRow[];
  readonly usageEvents: number;
}

/**
 * Buffers decoded events in arrival order and writes them in batches: decode/validate ->
 * project -> account -> sink. Counts only what the sink acknowledged.
 */
export class BatchWriter {
  private buffer: BatchBuffer;
  private bufferedBytes = 0;
  /** A batch taken off the buffer and not yet acknowledged; retried first by the next flush. */
  private sealed: { buffer: BatchBuffer; prepared: PreparedBatch | undefined } | undefined;
  readonly accountant: ContextAccountant;
  /** What the last added line became. */
  lastKind: DecodeOutcome['kind'] = 'row';

  constructor(
    private readonly sink: ClickHouseSink,
    readonly counts: PipelineCounts,
    private readonly batch: BatchLimits = DEFAULT_BATCH,
    accounting: AccountingConfig = DEFAULT_ACCOUNTING,
    private readonly hooks: BatchWriterHooks = {},
  ) {
    this.accountant = new ContextAccountant(accounting);
    this.buffer = emptyBuffer(batch.maxBatchBytes);
  }

  /** Decodes one line into the batch; returns true when the batch is due for a flush. */
  add(line: SourceLine, ingestedAt: string, limits: DecodeLimits): boolean {
    this.counts.eventsRead++;
    const o = decodeEvent(line.bytes, line.source, ingestedAt, limits);
    this.lastKind = o.kind;
    const b = this.buffer;
    if (o.kind === 'row') {
      const r = o.row;
      b.toolCalls.row(r, TOOL_CALL_COLUMNS);
      for (const f of r.flags) b.flags.set(f, (b.flags.get(f) ?? 0) + 1);
      b.outcomes.push({
        kind: 'row',
        outputClass: o.outputClass,
        ingestedAt: r.ingested_at,
        call: { event_id: r.event_id, ts: r.ts, harness: r.harness, session_id: r.session_id, agent_id: r.agent_id, turn_id: r.turn_id, model: r.model, images: r.images, output_bytes: r.output_bytes, source: r.source },
      });
    } else b.outcomes.push(o);
    this.bufferedBytes += line.bytes.byteLength;
    return b.outcomes.length >= this.batch.maxBatchRows || this.bufferedBytes >= this.batch.maxBatchBytes;
  }

  /** Events added since the last seal (not including a sealed batch). */
  get buffered(): number {
    return this.buffer.outcomes.length;
  }

  /** Events buffered or being written, not yet acknowledged by the sink. */
  get pending(): number {
    return this.buffer.outcomes.length + (this.sealed?.buffer.outcomes.length ?? 0);
  }

  /**
   * Runs the accounting over a batch, in arrival order, once. Sessions this process has not
   * seen are first rebuilt from token_usage (their last row before their first event here), so
   * a restarted worker neither forgets a session nor breaches twice for one crossing.
   */
  private async prepare(outcomes: readonly BufferedOutcome[]): Promise<PreparedBatch> {
    const unseen = new Map<string, ContextToRestore>();
    for (const o of outcomes) {
      const e = o.kind === 'row' ? o.call : o.kind === 'usage' ? o.usage : undefined;
      if (!e) continue;
      const key = contextKey(e.session_id, e.agent_id);
      if (this.accountant.has(key)) continue;
      const seen = unseen.get(key);
      if (seen === undefined || e.ts < seen.firstTs) unseen.set(key, { sessionId: e.session_id, agentId: e.agent_id, firstTs: e.ts });
    }
    const restored = await this.sink.loadSessionStates(unseen);
    for (const key of unseen.keys()) this.accountant.restore(key, restored.get(key) ?? freshSessionState());

    const deadLetters: DeadLetterRow[] = [];
    const tokenUsage: TokenUsageRow[] = [];
    const breaches: BreachRow[] = [];
    let usageEvents = 0;
    for (const o of outcomes) {
      let result: AccountingResult = {};
      if (o.kind === 'dead') deadLetters.push(o.dead);
      else if (o.kind === 'row') {
        result = this.accountant.onToolOutput(o.call, o.outputClass, o.ingestedAt);
      } else {
        usageEvents++;
        result = this.accountant.onUsage(o.usage, o.usage.ingested_at);
      }
      if (result.usage) tokenUsage.push(result.usage);
      if (result.breach) breaches.push(result.breach);
    }
    return { deadLetters, tokenUsage, breaches, usageEvents };
  }

  /** Takes the buffered events off the buffer as the batch to write next (no-op when one is sealed). */
  seal(): void {
    if (this.sealed || this.buffer.outcomes.length === 0) return;
    this.sealed = { buffer: this.buffer, prepared: undefined };
    this.buffer = emptyBuffer(this.batch.maxBatchBytes);
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
    sealed.prepared ??= await this.prepare(sealed.buffer.outcomes);
    const b = sealed.prepared;
    await this.sink.writeDeadLetters(b.deadLetters);
    this.hooks.onDeadLettersWritten?.(b.deadLetters);
    await this.sink.writeToolCallsTsv(sealed.buffer.toolCalls.bytes());
    await this.sink.writeTokenUsage(b.tokenUsage);
    await this.sink.writeBreaches(b.breaches);
    this.sealed = undefined;
    const c = this.counts;
    const toolCalls = sealed.buffer.toolCalls.rows;
    c.toolCallRows += toolCalls;
    c.usageRows += b.usageEvents;
    c.rowsWritten += toolCalls + b.usageEvents;
    c.deadLetters += b.deadLetters.length;
    c.estimateRows += b.tokenUsage.length - b.usageEvents;
    c.breaches += b.breaches.length;
    for (const d of b.deadLetters) c.deadLettersByReason[d.reason] = (c.deadLettersByReason[d.reason] ?? 0) + 1;
    for (const [f, n] of sealed.buffer.flags) c.flaggedRows[f] = (c.flaggedRows[f] ?? 0) + n;
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

export interface ReplayOptions {
  readonly limits?: DecodeLimits;
  readonly batch?: BatchLimits;
  readonly accounting?: AccountingConfig;
  /** Called with (bytes read so far, total bytes) as input is consumed. */
  readonly onProgress?: (bytesRead: number, totalBytes: number) => void;
}

/** Replays JSONL files (or stdin) into the sink. */
export async function replayPaths(paths: readonly string[], sink: ClickHouseSink, options: ReplayOptions = {}): Promise<PipelineCounts> {
  const files = listInputFiles(paths);
  return replayFiles(files, sink, options);
}

export async function replayFiles(files: readonly InputFile[], sink: ClickHouseSink, options: ReplayOptions = {}): Promise<PipelineCounts> {
  const counts = emptyCounts();
  const writer = new BatchWriter(sink, counts, options.batch, options.accounting);
  const limits = options.limits ?? DEFAULT_LIMITS;
  const totalBytes = files.reduce((n, f) => n + f.bytes, 0);
  const ingestedAt = nowClickHouseTime();
  const onBytes = (n: number): void => {
    counts.bytesRead += n;
    options.onProgress?.(counts.bytesRead, totalBytes);
  };
  // One batch is written while the next is decoded (the engine inserts on its own threads).
  let inFlight: Promise<void> = Promise.resolve();
  for (const file of files) {
    const lines = readLines(openInput(file), file.path, onBytes, () => counts.blankLines++);
    for await (const line of lines) {
      if (writer.add(line, ingestedAt, limits)) {
        await inFlight;
        inFlight = writer.startFlush();
        inFlight.catch(() => {}); // observed by the next await; avoids an unhandled rejection meanwhile
      }
    }
  }
  await inFlight;
  await writer.flush();
  return counts;
}
