// The offsets of one generation of the worker (one membership of the consumer group, one
// assignment): what it has taken from each partition into the open batch, what the sealed batch
// being written holds, and what it may commit because ClickHouse acknowledged it. A rebalance ends
// the generation: its ledger is dropped with everything uncommitted in it (the new owner of each
// partition reads that again from the last commit), and the next generation starts a new one.
// No Kafka client here: the rules are tested on their own (test/worker/offset-ledger.test.ts).
import type { PartitionOffset } from '../kafka/client.ts';

/** What a batch took from each partition. */
interface BatchOffsets {
  /** Partition -> offset of its last record in the batch. */
  readonly lastAdded: Map<number, string>;
  events: number;
}

function emptyBatch(): BatchOffsets {
  return { lastAdded: new Map(), events: 0 };
}

export class OffsetLedger {
  private open: BatchOffsets = emptyBatch();
  private sealedBatch: BatchOffsets | undefined;
  /** Partition -> next offset to commit: everything before it is acknowledged by ClickHouse. */
  private readonly toCommit = new Map<number, string>();
  /** Events acknowledged whose offsets are not committed yet. */
  private acknowledgedEvents = 0;
  private rebalanceError: unknown;
  private rebalanceSeen = false;
  /** No commit-only retry (by the worker's timer) before this time, after a failed commit. */
  nextCommitRetryAtMs = 0;

  /** `generation`: the number of the group membership this ledger belongs to. */
  constructor(readonly generation: number) {}

  /** A record taken into the open batch (records of a partition come in offset order). */
  add(partition: number, offset: string): void {
    this.open.lastAdded.set(partition, offset);
    this.open.events++;
  }

  /** Events in the open batch. */
  get openEvents(): number {
    return this.open.events;
  }

  get hasSealed(): boolean {
    return this.sealedBatch !== undefined;
  }

  /** Events of the sealed batch (0 when none is sealed). */
  get sealedEvents(): number {
    return this.sealedBatch?.events ?? 0;
  }

  /**
   * The open batch becomes the sealed one (the batch to write next) and a new open batch
   * starts. False (and nothing changes) when a batch is sealed already or the open one is empty.
   */
  seal(): boolean {
    if (this.sealedBatch !== undefined || this.open.events === 0) return false;
    this.sealedBatch = this.open;
    this.open = emptyBatch();
    return true;
  }

  /**
   * ClickHouse acknowledged every event of the sealed batch: for each of its partitions, one
   * past its last record may be committed. Returns the batch's events (0 when none was sealed).
   */
  acknowledgeSealed(): number {
    const sealed = this.sealedBatch;
    if (sealed === undefined) return 0;
    for (const [partition, offset] of sealed.lastAdded) this.toCommit.set(partition, (BigInt(offset) + 1n).toString());
    this.acknowledgedEvents += sealed.events;
    this.sealedBatch = undefined;
    return sealed.events;
  }

  /** True when acknowledged offsets wait for a commit. */
  get hasUncommitted(): boolean {
    return this.toCommit.size > 0;
  }

  /** Acknowledged events whose offsets are not committed yet. */
  get uncommittedEvents(): number {
    return this.acknowledgedEvents;
  }

  /** The offsets to commit now, one per partition (the next offset to read). */
  offsetsToCommit(): PartitionOffset[] {
    return [...this.toCommit].map(([partition, offset]) => ({ partition, offset }));
  }

  /**
   * Kafka accepted the commit of `offsets` (taken from offsetsToCommit()). A partition whose
   * offset moved on since (a later batch acknowledged meanwhile) keeps its newer offset to commit.
   * Returns how many acknowledged events the commit covered.
   */
  committed(offsets: readonly PartitionOffset[]): number {
    for (const { partition, offset } of offsets) {
      if (this.toCommit.get(partition) === offset) this.toCommit.delete(partition);
    }
    const events = this.acknowledgedEvents;
    this.acknowledgedEvents = 0;
    return events;
  }

  /**
   * A heartbeat or commit found the group rebalancing: this generation ends at the next batch
   * boundary (after a last flush and commit, which Kafka accepts until the members rejoined).
   * The first error seen is kept; it is what the batch handler rethrows to make the client rejoin.
   */
  noteRebalance(error: unknown): void {
    if (this.rebalanceSeen) return;
    this.rebalanceSeen = true;
    this.rebalanceError = error;
  }

  get isRebalancing(): boolean {
    return this.rebalanceSeen;
  }

  /** The error that announced the rebalance (undefined before one). */
  get rebalance(): unknown {
    return this.rebalanceError;
  }
}
