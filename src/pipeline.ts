// The pipeline's one fixed shape: source -> decode/validate -> project -> sink, with counts that
// prove nothing was lost (events read = rows written + dead letters).
import { decodeToolCall, DEFAULT_LIMITS, nowClickHouseTime, type DecodeLimits } from './decode/event.ts';
import type { DeadLetterReason, DeadLetterRow, RowFlag, ToolCallRow } from './model/records.ts';
import type { ClickHouseSink } from './sink/clickhouse.ts';
import { listInputFiles, openInput, readLines, type InputFile, type SourceLine } from './source/file.ts';

export interface PipelineCounts {
  eventsRead: number;
  rowsWritten: number;
  deadLetters: number;
  deadLettersByReason: Partial<Record<DeadLetterReason, number>>;
  flaggedRows: Partial<Record<RowFlag, number>>;
  blankLines: number;
  bytesRead: number;
}

export function emptyCounts(): PipelineCounts {
  return { eventsRead: 0, rowsWritten: 0, deadLetters: 0, deadLettersByReason: {}, flaggedRows: {}, blankLines: 0, bytesRead: 0 };
}

export interface BatchLimits {
  /** Flush when this many rows (tool calls + dead letters) are buffered. */
  readonly maxBatchRows: number;
  /** Flush when the buffered rows hold about this many bytes of raw input. */
  readonly maxBatchBytes: number;
}

export const DEFAULT_BATCH: BatchLimits = { maxBatchRows: 20_000, maxBatchBytes: 32 * 1024 * 1024 };

/** Buffers decoded events and writes them in batches; counts only what the sink acknowledged. */
export class BatchWriter {
  private rows: ToolCallRow[] = [];
  private dead: DeadLetterRow[] = [];
  private bufferedBytes = 0;

  constructor(
    private readonly sink: ClickHouseSink,
    readonly counts: PipelineCounts,
    private readonly batch: BatchLimits = DEFAULT_BATCH,
  ) {}

  /** Decodes one line into the batch; returns true when the batch is due for a flush. */
  add(line: SourceLine, ingestedAt: string, limits: DecodeLimits): boolean {
    this.counts.eventsRead++;
    const outcome = decodeToolCall(line.bytes, line.source, ingestedAt, limits);
    if (outcome.kind === 'row') this.rows.push(outcome.row);
    else this.dead.push(outcome.dead);
    this.bufferedBytes += line.bytes.byteLength;
    return this.rows.length + this.dead.length >= this.batch.maxBatchRows || this.bufferedBytes >= this.batch.maxBatchBytes;
  }

  get pending(): number {
    return this.rows.length + this.dead.length;
  }

  /**
   * Writes the buffered batch. The buffer is cleared only after the sink acknowledged both
   * inserts, so a failed flush can be retried as is (the tables deduplicate a partial write).
   */
  async flush(): Promise<void> {
    const rows = this.rows;
    const dead = this.dead;
    await this.sink.writeDeadLetters(dead);
    await this.sink.writeToolCalls(rows);
    this.rows = [];
    this.dead = [];
    this.bufferedBytes = 0;
    this.counts.rowsWritten += rows.length;
    this.counts.deadLetters += dead.length;
    for (const d of dead) this.counts.deadLettersByReason[d.reason] = (this.counts.deadLettersByReason[d.reason] ?? 0) + 1;
    for (const r of rows) for (const f of r.flags) this.counts.flaggedRows[f] = (this.counts.flaggedRows[f] ?? 0) + 1;
  }
}

export interface ReplayOptions {
  readonly limits?: DecodeLimits;
  readonly batch?: BatchLimits;
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
  const writer = new BatchWriter(sink, counts, options.batch);
  const limits = options.limits ?? DEFAULT_LIMITS;
  const totalBytes = files.reduce((n, f) => n + f.bytes, 0);
  const ingestedAt = nowClickHouseTime();
  const onBytes = (n: number): void => {
    counts.bytesRead += n;
    options.onProgress?.(counts.bytesRead, totalBytes);
  };
  for (const file of files) {
    const lines = readLines(openInput(file), file.path, onBytes, () => counts.blankLines++);
    for await (const line of lines) {
      if (writer.add(line, ingestedAt, limits)) await writer.flush();
    }
  }
  await writer.flush();
  return counts;
}
