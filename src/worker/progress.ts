// Lag and progress of the worker: the committed offset and the latest known high watermark of
// each partition it owns, the lag between them (what the partition_lag gauge and the progress
// line show), and the progress line itself. It never decides anything; a wrong figure here
// would mislead an operator, not lose an event.
import type { KafkaAdmin } from '../kafka/client.ts';

/** The counters a progress line shows, read from the worker when the line is written. */
export interface ProgressFigures {
  readonly consumed: number;
  readonly written: number;
  readonly deadLettered: number;
  readonly dlqPublished: number;
  readonly committed: number;
  readonly buffered: number;
  readonly flushes: number;
  readonly failedFlushes: number;
  readonly paused: boolean;
}

export class ProgressReporter {
  private assigned: readonly number[] = [];
  /** Partition -> committed offset (the next offset to read), as this worker committed it. */
  private readonly committedOffsets = new Map<number, bigint>();
  /** Latest known high watermark per assigned partition (from fetches and refresh()). */
  private readonly highWatermarks = new Map<number, bigint>();
  private lag = new Map<number, bigint>();

  /** The partitions of the latest group join. */
  get partitions(): readonly number[] {
    return this.assigned;
  }

  /** Committed offset per assigned partition (those this worker committed since it owns them). */
  get committed(): ReadonlyMap<number, bigint> {
    return this.committedOffsets;
  }

  /** High watermark minus committed offset, per assigned partition whose both figures are known. */
  get lagByPartition(): ReadonlyMap<number, bigint> {
    return this.lag;
  }

  /** A group join: figures of the partitions this worker no longer owns are forgotten. */
  assign(partitions: readonly number[]): void {
    this.assigned = partitions;
    for (const figures of [this.committedOffsets, this.highWatermarks, this.lag]) {
      for (const p of [...figures.keys()]) if (!partitions.includes(p)) figures.delete(p);
    }
  }

  /** A fetch said where the partition ends (the offset of its next record). */
  noteHighWatermark(partition: number, high: bigint): void {
    this.highWatermarks.set(partition, high);
    this.updateLag(partition);
  }

  /** Kafka accepted a commit of `offset` (the next offset to read) for the partition. */
  noteCommitted(partition: number, offset: bigint): void {
    this.committedOffsets.set(partition, offset);
    this.updateLag(partition);
  }

  /**
   * Lag of every assigned partition from the topic's high watermarks; a partition this worker
   * has not committed yet is measured from the group's committed offset (`fromGroup`), else from 0.
   */
  applyOffsets(highs: ReadonlyMap<number, bigint>, fromGroup: ReadonlyMap<number, bigint>): void {
    const lag = new Map<number, bigint>();
    for (const p of this.assigned) {
      const high = highs.get(p) ?? 0n;
      this.highWatermarks.set(p, high);
      const committed = this.committedOffsets.get(p) ?? fromGroup.get(p) ?? 0n;
      lag.set(p, high > committed ? high - committed : 0n);
    }
    this.lag = lag;
  }

  /** Asks the brokers for the high watermarks (and the group's offsets where this worker has none). */
  async refresh(admin: Pick<KafkaAdmin, 'highWatermarks' | 'committedOffsets'>, topic: string, groupId: string): Promise<void> {
    if (this.assigned.length === 0) return;
    const highs = await admin.highWatermarks(topic);
    const missing = this.assigned.filter((p) => !this.committedOffsets.has(p));
    const fromGroup = missing.length ? await admin.committedOffsets(groupId, topic) : new Map<number, bigint>();
    this.applyOffsets(highs, fromGroup);
  }

  /** One line: counters, state and lag per partition (high watermark minus committed offset). */
  line(label: string, f: ProgressFigures, memory: string = memoryFields()): string {
    const lag = [...this.lag].sort(([a], [b]) => a - b).map(([p, n]) => `${p}:${n}`).join(',');
    return (
      `${label}: consumed=${f.consumed} written=${f.written} dead_lettered=${f.deadLettered} ` +
      `dlq_published=${f.dlqPublished} committed=${f.committed} buffered=${f.buffered} ` +
      `flushes=${f.flushes} failed_flushes=${f.failedFlushes} paused=${f.paused} ` +
      `partitions=${this.assigned.join(',') || '-'} lag=${lag || '-'} ${memory}`
    );
  }

  private updateLag(partition: number): void {
    const high = this.highWatermarks.get(partition);
    const committed = this.committedOffsets.get(partition);
    if (high !== undefined && committed !== undefined) this.lag.set(partition, high > committed ? high - committed : 0n);
  }
}

/** Resident memory and the JavaScript heap's share of it, in MiB. */
export function memoryFields(m: Pick<NodeJS.MemoryUsage, 'rss' | 'heapUsed' | 'external'> = process.memoryUsage()): string {
  const mib = (n: number): string => (n / 2 ** 20).toFixed(0);
  return `rss_mib=${mib(m.rss)} heap_mib=${mib(m.heapUsed)} external_mib=${mib(m.external)}`;
}
