// The stream worker: consumes toolcanon events from a Kafka topic in a consumer group and runs
// them through the same batch writer as `replay` (decode/validate -> project -> account ->
// ClickHouse), with at-least-once delivery:
//
// - Offsets are committed only after ClickHouse acknowledged the rows and dead letters of every
//   record up to them, and the dead-letter topic acknowledged the poison records among them.
//   A crash anywhere therefore loses nothing; what was written but not committed is consumed
//   again, and the tables deduplicate it (event_id, dead_letter_id).
// - While ClickHouse fails the worker retries the same batch with exponential backoff and
//   jitter, pauses fetching (so memory stays at two batches plus one fetch) and commits nothing.
// - A full batch is written in the background while the next one is decoded (one in flight).
// - A rebalance starts a new "generation": the buffered, uncommitted events of the previous one
//   are dropped (the new owner of each partition reads them again from the last commit) and the
//   batch writer, whose accounting state follows sessions, starts fresh.
//
// The parts it composes: the offset ledger (what each generation took and may commit,
// offset-ledger.ts), the dead-letter queue and publisher (poison records to the dead-letter topic,
// dead-letter-publisher.ts), the progress reporter (lag and the progress line, progress.ts); the
// Kafka client behind src/kafka/client.ts. What stays here: connection, generations, intake,
// pipelining, retry and flow control.
import { redactText } from '../redact/redact.ts';
import { asLogger, mapLogger, type Logger, type LogTarget } from '../util/log.ts';
import { hostname } from 'node:os';
import { nowClickHouseTime } from '../decode/event.ts';
import { createKafkaClient, isRebalanceError, type BatchContext, type ConsumedRecord, type KafkaAdmin, type KafkaClient, type StreamConsumer, type StreamProducer } from '../kafka/client.ts';
import { BatchWriter, emptyCounts, yieldToLoop, type PipelineCounts } from '../pipeline/batch-writer.ts';
import type { ClickHouseSink } from '../sink/clickhouse.ts';
import { SinkError } from '../sink/errors.ts';
import { backoffDelayMs, sleep } from './backoff.ts';
import type { WorkerConfig } from './config.ts';
import { DeadLetterPublisher, DeadLetterQueue } from './dead-letter-publisher.ts';
import { recordSource } from '../kafka/dlq.ts';
import { batchRecords, type TopicPosition } from '../kafka/batch-source.ts';
import { pump, type RecordTarget } from '../source/record.ts';
import { Mutex } from './mutex.ts';
import { OffsetLedger } from './offset-ledger.ts';
import { ProgressReporter } from './progress.ts';
import { createWorkerTelemetry, type WorkerTelemetry } from './telemetry.ts';

const EMPTY = Buffer.alloc(0);
/** How long a rebalance may wait for the buffered events to be flushed and committed. */
const REBALANCE_SETTLE_MS = 10_000;
/** Attempts at committing offsets before leaving them for the next flush. */
const COMMIT_ATTEMPTS = 3;
const TIMER_TICK_MS = 100;
/**
 * While a batch is being written, decoding yields to the event loop this often (a file-fed
 * source: every 64, pipeline/batch-writer.ts; test/kafka/sink-outage.test.ts holds the intake
 * still once the worker has paused, with this pace).
 */
const YIELD_EVERY_RECORDS = 128;

export interface WorkerStats {
  /** Records taken into a batch (re-deliveries after a rebalance or restart count again). */
  eventsConsumed: number;
  bytesConsumed: number;
  flushes: number;
  flushFailures: number;
  dlqPublished: number;
  /** Consumed records whose offsets were committed after their rows were acknowledged. */
  eventsCommitted: number;
  commits: number;
  commitFailures: number;
  rebalances: number;
  /** Buffered events dropped at a rebalance without a commit; they are consumed again. */
  bufferedEventsDropped: number;
}

export interface WorkerStatus {
  readonly generation: number;
  readonly assignedPartitions: readonly number[];
  readonly bufferedEvents: number;
  readonly paused: boolean;
  /** Set while ClickHouse (or the dead-letter topic) is failing. */
  readonly failing: { readonly step: string; readonly attempts: number; readonly sinceMs: number; readonly message: string } | undefined;
  readonly committedOffsets: ReadonlyMap<number, bigint>;
  readonly counts: Readonly<PipelineCounts>;
  readonly stats: Readonly<WorkerStats>;
}

export interface WorkerSummary {
  /** True when everything consumed was written and committed before the worker left the group. */
  readonly clean: boolean;
  /** Set when the worker stopped on its own because of an error it cannot recover from. */
  readonly fatal?: Error;
  readonly counts: Readonly<PipelineCounts>;
  readonly stats: Readonly<WorkerStats>;
  /** From the first consumed record to the last commit (the time spent working, idle tail excluded). */
  readonly elapsedMs: number;
  readonly peakRssBytes: number;
}

/** Everything that belongs to one membership of the group (one assignment). */
interface Generation {
  readonly id: number;
  readonly writer: BatchWriter;
  /** Offsets of the writer's open and sealed batches, and what may be committed. */
  readonly offsets: OffsetLedger;
  /** Poison records of the writer's batches, and those waiting for the dead-letter topic. */
  readonly deadLetters: DeadLetterQueue;
  /**
   * The sealed batch's write, dead-letter publish and commit, running while the next batch is
   * decoded (cleared when done); resolves false when it gave up. Every settle awaits it first.
   */
  inFlight: Promise<boolean> | undefined;
  firstPendingAtMs: number | undefined;
  /** The latest batch context: heartbeats and commits go through it. */
  context: BatchContext | undefined;
}

export interface WorkerOptions {
  readonly config: WorkerConfig;
  readonly sink: ClickHouseSink;
  /** Progress, warnings and errors (src/util/log.ts levels; stderr in the CLI). */
  readonly log: LogTarget;
  /** The Kafka client; created from the config when omitted. */
  readonly client?: KafkaClient;
}

export class StreamWorker {
  readonly counts: PipelineCounts = emptyCounts();
  private readonly stats: WorkerStats = {
    eventsConsumed: 0,
    bytesConsumed: 0,
    flushes: 0,
    flushFailures: 0,
    dlqPublished: 0,
    eventsCommitted: 0,
    commits: 0,
    commitFailures: 0,
    rebalances: 0,
    bufferedEventsDropped: 0,
  };
  private readonly config: WorkerConfig;
  private readonly sink: ClickHouseSink;
  private readonly log: Logger;
  private readonly client: KafkaClient;
  private readonly telemetry: WorkerTelemetry;
  private readonly progress = new ProgressReporter();
  private readonly dlq: DeadLetterPublisher;
  private readonly lock = new Mutex();
  private consumer: StreamConsumer | undefined;
  private producer: StreamProducer | undefined;
  private admin: KafkaAdmin | undefined;
  private generationSeq = 0;
  private gen: Generation;
  private paused = false;
  private failing: { step: string; attempts: number; sinceMs: number; message: string } | undefined;
  private stopping = false;
  /** Set once the shutdown disconnects the clients: a client connected after that closes itself. */
  private clientsClosing = false;
  private stopDeadlineMs: number | undefined;
  private readonly stopAbort = new AbortController();
  private stopPromise: Promise<WorkerSummary> | undefined;
  private fatal: Error | undefined;
  private starting: Promise<void> | undefined;
  private firstConsumedAtMs: number | undefined;
  private lastCommitAtMs: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private progressTimer: NodeJS.Timeout | undefined;
  private resolveFinished: (summary: WorkerSummary) => void = () => {};
  /** Resolves when the worker has stopped, by stop() or by a fatal error. */
  readonly finished: Promise<WorkerSummary>;

  constructor(options: WorkerOptions) {
    this.config = options.config;
    this.sink = options.sink;
    // Log lines quote error messages, which may quote data: redacted as rows are.
    const logger = asLogger(options.log);
    this.log = this.config.limits.redact === false ? logger : mapLogger(logger, (line) => redactText(line).text);
    this.client =
      options.client ??
      createKafkaClient({ brokers: this.config.brokers, clientId: this.config.clientId, log: this.log, ...(this.config.security ? { security: this.config.security } : {}) });
    this.telemetry = createWorkerTelemetry(this.config.topic, this.config.groupId, {
      lagByPartition: () => this.progress.lagByPartition,
      bufferedEvents: () => this.gen.writer.pending,
      isPaused: () => this.paused,
    });
    this.dlq = new DeadLetterPublisher({ dlqTopic: this.config.dlqTopic, log: this.log, telemetry: this.telemetry });
    this.gen = this.newGeneration();
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
  }

  /** Connects, makes sure the dead-letter topic exists, joins the group and starts consuming. */
  start(): Promise<void> {
    this.starting ??= this.connectAndRun();
    return this.starting;
  }

  private async connectAndRun(): Promise<void> {
    const c = this.config;
    if (this.stopping) return;
    this.admin = await this.client.admin();
    if (this.stopping) return this.closeLateClients();
    const partitions = await this.admin.partitionCount(c.topic);
    const maxMessageBytes = partitions === undefined ? undefined : await this.admin.maxMessageBytes(c.topic);
    // The dead-letter topic takes every record the topic can hold, keyed the same way.
    const created = await this.admin.ensureTopic(c.dlqTopic, {
      partitions: partitions ?? 1,
      configs: maxMessageBytes === undefined ? {} : { 'max.message.bytes': String(maxMessageBytes) },
    });
    if (created) this.log.info(`Created dead-letter topic ${c.dlqTopic} (${partitions ?? 1} partition(s)).`);
    if (this.stopping) return this.closeLateClients();
    this.producer = await this.client.producer();
    if (this.stopping) return this.closeLateClients();
    this.consumer = await this.client.consumer({
      groupId: c.groupId,
      topic: c.topic,
      fromBeginning: c.fromBeginning,
      sessionTimeoutMs: c.sessionTimeoutMs,
      heartbeatIntervalMs: c.heartbeatIntervalMs,
      rebalanceTimeoutMs: c.rebalanceTimeoutMs,
      maxWaitTimeMs: c.fetchMaxWaitMs,
      fetchMaxBytes: c.fetchMaxBytes,
      fetchMaxBytesPerPartition: c.fetchMaxBytesPerPartition,
    });
    this.consumer.onAssigned((p) => this.onAssigned(p));
    this.consumer.onCrash(({ error, restarting }) => {
      this.log[restarting ? 'warn' : 'error'](`Kafka consumer crashed: ${error.message}${restarting ? '; the client restarts it and rejoins the group.' : '; it will not restart.'}`);
      if (!restarting && !this.stopping) {
        this.fatal = error;
        this.stop('consumer crash').catch((e: unknown) => this.log.error(`Stopping after the crash failed: ${(e as Error).message}`));
      }
    });
    if (this.stopping) return this.closeLateClients();
    this.timer = setInterval(() => this.onTick(), TIMER_TICK_MS);
    if (c.progressIntervalMs > 0) this.progressTimer = setInterval(() => void this.reportProgress(), c.progressIntervalMs);
    this.log.info(`Consuming ${c.topic} as group ${c.groupId} into ${this.sink.description}; poison records go to ${c.dlqTopic}.`);
    await this.consumer.run((ctx) => this.onBatch(ctx));
  }

  /**
   * A stop that gave up waiting for a slow start (a broker slow to answer, a long group join)
   * has disconnected only the clients that existed then; one that connected afterwards would
   * keep the process alive. It is closed here.
   */
  private async closeLateClients(): Promise<void> {
    if (!this.clientsClosing) return;
    await Promise.allSettled([this.consumer?.disconnect(), this.producer?.disconnect(), this.admin?.disconnect()]);
  }

  status(): WorkerStatus {
    return {
      generation: this.gen.id,
      assignedPartitions: this.progress.partitions,
      bufferedEvents: this.gen.writer.pending,
      paused: this.paused,
      failing: this.failing,
      committedOffsets: this.progress.committed,
      counts: this.counts,
      stats: this.stats,
    };
  }

  /**
   * Stops fetching, flushes and commits what is buffered, leaves the group and disconnects.
   * Bounded by shutdownTimeoutMs; when ClickHouse cannot take the last batch in that time the
   * worker leaves without committing it (it is consumed again later) and the summary is not clean.
   */
  stop(reason = 'stop requested'): Promise<WorkerSummary> {
    this.stopPromise ??= this.shutdown(reason);
    return this.stopPromise;
  }

  private async shutdown(reason: string): Promise<WorkerSummary> {
    this.stopping = true;
    const deadline = Date.now() + this.config.shutdownTimeoutMs;
    this.stopDeadlineMs = deadline;
    this.log.info(`Stopping (${reason}): ${this.gen.writer.pending} buffered event(s) to flush and commit.`);
    // A stop during start waits for the connections to exist, so that they can be closed.
    await raceDeadline(this.starting ?? Promise.resolve(), deadline, undefined);
    if (this.timer) clearInterval(this.timer);
    if (this.progressTimer) clearInterval(this.progressTimer);
    try {
      this.consumer?.pause();
    } catch (error) {
      // kafkajs throws when the consumer is not running (it crashed, or never started): there
      // is nothing to pause then, and the shutdown must still flush, disconnect and report.
      this.log.warn(`Pausing the consumer failed (${(error as Error).message}); continuing the shutdown.`);
    }
    let settled = false;
    if (this.fatal === undefined) {
      const gen = this.gen;
      const attempt = this.lock.run(() => this.settle(gen, 'shutdown', deadline));
      settled = await raceDeadline(attempt, deadline, false);
      settled = settled && gen === this.gen && gen.writer.pending === 0 && !gen.offsets.hasUncommitted && gen.deadLetters.pending.length === 0;
    } else {
      // After a crash nothing more is committed, but a batch being written is let finish (or
      // time out), so that nothing runs against the sink once the worker reported it stopped.
      await raceDeadline(this.gen.inFlight ?? Promise.resolve(false), deadline, false);
    }
    // Wake anything still sleeping in a retry: it gives up instead of attempting again.
    this.stopAbort.abort();
    const left = this.gen.writer.pending;
    if (!settled && left > 0) this.log.warn(`Leaving ${left} event(s) uncommitted: ClickHouse did not take them within ${this.config.shutdownTimeoutMs} ms. They are consumed again at the next start.`);
    this.clientsClosing = true;
    const disconnectBy = Date.now() + 15_000;
    await raceDeadline(this.consumer?.disconnect().catch((e: unknown) => this.log.warn(`Disconnecting the consumer failed: ${(e as Error).message}`)) ?? Promise.resolve(), disconnectBy, undefined);
    await raceDeadline(this.producer?.disconnect().catch(() => undefined) ?? Promise.resolve(), disconnectBy, undefined);
    await raceDeadline(this.admin?.disconnect().catch(() => undefined) ?? Promise.resolve(), disconnectBy, undefined);
    this.log.info(this.progressLine('Stopped'));
    const summary: WorkerSummary = {
      clean: settled && this.fatal === undefined,
      ...(this.fatal === undefined ? {} : { fatal: this.fatal }),
      counts: this.counts,
      stats: this.stats,
      elapsedMs: this.firstConsumedAtMs === undefined ? 0 : (this.lastCommitAtMs ?? Date.now()) - this.firstConsumedAtMs,
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
    };
    this.resolveFinished(summary);
    return summary;
  }

  private newGeneration(): Generation {
    const id = this.generationSeq++;
    const deadLetters = new DeadLetterQueue();
    return {
      id,
      writer: new BatchWriter(this.sink, this.counts, { batchMaxRows: this.config.batchMaxRows, batchMaxBytes: this.config.batchMaxBytes }, this.config.accounting, {
        onDeadLettersWritten: deadLetters.onDeadLettersWritten,
      }),
      offsets: new OffsetLedger(id),
      deadLetters,
      inFlight: undefined,
      firstPendingAtMs: undefined,
      context: undefined,
    };
  }

  /** A (re)join of the group: the previous generation's uncommitted work is abandoned. */
  private onAssigned(partitions: readonly number[]): void {
    const old = this.gen;
    const dropped = old.writer.pending;
    this.gen = this.newGeneration();
    this.progress.assign(partitions);
    this.stats.rebalances++;
    this.stats.bufferedEventsDropped += dropped;
    this.telemetry.rebalanced(dropped);
    // A paused worker would never fetch again to find out whether ClickHouse is back.
    if (this.paused && !this.stopping) this.setPaused(false);
    const list = partitions.length ? partitions.join(',') : 'none';
    this.log.info(`Joined group ${this.config.groupId} (generation ${this.gen.id}): partitions ${list} of ${this.config.topic}${dropped ? `; dropped ${dropped} uncommitted buffered event(s), they are consumed again` : ''}.`);
  }

  private async onBatch(ctx: BatchContext): Promise<void> {
    const gen = this.gen;
    await this.lock.run(async () => {
      if (gen !== this.gen) return;
      gen.context = ctx;
      const { batch } = ctx;
      this.firstConsumedAtMs ??= Date.now();
      const intake = this.intake(gen, ctx);
      await pump(
        batchRecords(batch, () => this.stopping || gen !== this.gen || gen.offsets.isRebalancing || !ctx.isRunning()),
        intake,
      );
      intake.account();
      this.progress.noteHighWatermark(batch.partition, BigInt(batch.highWatermark));
      if (gen === this.gen && gen.firstPendingAtMs !== undefined && Date.now() - gen.firstPendingAtMs >= this.config.batchMaxWaitMs) await intake.flush();
    });
    if (gen !== this.gen || this.stopping) return;
    // Find out about a rebalance here, while the buffered events can still be committed:
    // Kafka accepts commits of the current generation until every member has rejoined.
    if (!gen.offsets.isRebalancing) {
      try {
        await ctx.heartbeat();
      } catch (error) {
        if (!isRebalanceError(error)) throw error;
        gen.offsets.noteRebalance(error);
      }
    }
    if (gen.offsets.isRebalancing) {
      const error = gen.offsets.rebalance;
      await this.lock.run(() => this.settle(gen, 'rebalance', Date.now() + REBALANCE_SETTLE_MS));
      throw error; // the client rejoins the group; onAssigned starts the next generation
    }
  }

  /**
   * The generation as the target of a consumed batch (the drive loop, src/source/record.ts):
   * each record decoded into the generation's writer, its offset into the ledger and, when it
   * is poison, kept for the dead-letter topic at its position. A due batch is pipelined
   * (written, its poison records published and its offsets committed while the next records
   * are decoded). While a batch is in flight the intake also has the source wait every
   * YIELD_EVERY_RECORDS records, so that the write, whose engine calls complete on this
   * thread's loop, moves on. flush() is a settle: written, published and committed, unless the
   * generation gave up (rebalance, stop), which leaves the records to be consumed again.
   * Used under the lock; account() adds what was taken to the consumed counts.
   */
  private intake(gen: Generation, ctx: BatchContext): RecordTarget<ConsumedRecord, TopicPosition> & { account(): void } {
    const limits = this.config.limits;
    const ingestedAt = nowClickHouseTime();
    let added = 0;
    let bytes = 0;
    let batchDue = false;
    const account = (): void => {
      if (added === 0) return;
      this.stats.eventsConsumed += added;
      this.stats.bytesConsumed += bytes;
      this.telemetry.eventsConsumed(added, bytes);
      added = 0;
      bytes = 0;
    };
    return {
      addEvent: (record, at) => {
        const value = record.value ?? EMPTY;
        const source = recordSource(at.topic, at.partition, at.offset);
        const { kind, due } = gen.writer.add({ bytes: value, source }, ingestedAt, limits);
        // Only poison records are kept, with their position, for the dead-letter topic.
        if (kind === 'dead') gen.deadLetters.keep(source, { ...at, key: record.key, value: record.value });
        gen.offsets.add(at.partition, at.offset);
        gen.firstPendingAtMs ??= Date.now();
        ctx.markFetched(at.offset);
        added++;
        bytes += value.byteLength;
        batchDue = due;
        return due || (gen.inFlight !== undefined && added % YIELD_EVERY_RECORDS === 0);
      },
      due: async () => {
        if (!batchDue) return yieldToLoop();
        account();
        await this.pipelineFlush(gen);
      },
      flush: async () => {
        account();
        await this.settle(gen, 'time');
      },
      account,
    };
  }

  private onTick(): void {
    if (this.stopping || this.lock.busy) return;
    const gen = this.gen;
    // A batch in flight commits by itself; flushing the part-filled buffer behind it now would
    // only make the next batches small.
    if (gen.inFlight !== undefined) return;
    const overdue = gen.firstPendingAtMs !== undefined && Date.now() - gen.firstPendingAtMs >= this.config.batchMaxWaitMs;
    const retryCommit = gen.offsets.hasUncommitted && Date.now() >= gen.offsets.nextCommitRetryAtMs;
    if (!overdue && gen.deadLetters.pending.length === 0 && !retryCommit) return;
    this.lock.run(() => this.settle(gen, 'time')).catch((e: unknown) => this.log.warn(`Flush failed: ${(e as Error).message}`));
  }

  /**
   * Brings the generation to "everything consumed is committed": flush the writer, publish the
   * poison records to the dead-letter topic, commit. Each step retries with backoff; returns
   * false when it had to give up (generation over, rebalance, deadline) with work left.
   * Callers hold the lock.
   */
  private async settle(gen: Generation, trigger: string, deadlineMs?: number): Promise<boolean> {
    // A batch in flight that gave up (a failed commit, a deadline) leaves its work here: still
    // sealed, or acknowledged and not yet committed. The steps below retry it.
    await gen.inFlight;
    if (gen !== this.gen) return false;
    while (gen.offsets.hasSealed || gen.writer.buffered > 0) {
      this.sealBatch(gen);
      const flushed = await this.retrying(gen, 'ClickHouse insert', deadlineMs, () => this.writeSealedOnce(gen, trigger));
      if (!flushed) return false;
    }
    return this.publishAndCommit(gen, deadlineMs);
  }

  private async publishAndCommit(gen: Generation, deadlineMs?: number): Promise<boolean> {
    if (gen.deadLetters.pending.length > 0) {
      const published = await this.retrying(gen, 'dead-letter topic', deadlineMs, () => this.publishDeadLetters(gen));
      if (!published) return false;
    }
    if (gen.offsets.hasUncommitted) return this.commit(gen);
    return true;
  }

  /**
   * A full batch: wait for the previous one's write and commit, then seal this one and start
   * writing it, so that the next batch is decoded while the engine inserts this one. At most
   * one batch is written while another fills, which bounds memory at two batches.
   */
  private async pipelineFlush(gen: Generation): Promise<void> {
    await gen.inFlight;
    if (gen !== this.gen || this.stopping) return;
    this.sealBatch(gen);
    const inFlight = (async (): Promise<boolean> => {
      const flushed = await this.retrying(gen, 'ClickHouse insert', undefined, () => this.writeSealedOnce(gen, 'size'));
      if (!flushed) return false;
      return this.publishAndCommit(gen);
    })()
      .catch((error: unknown) => {
        this.log.warn(`Flush failed: ${(error as Error).message}`);
        return false;
      })
      .finally(() => {
        // Done: the timer may flush and commit again, and nothing waits for it any more.
        if (gen.inFlight === inFlight) gen.inFlight = undefined;
      });
    gen.inFlight = inFlight;
  }

  /** Seals the writer's buffer as the batch to write next, unless a batch is sealed already. */
  private sealBatch(gen: Generation): void {
    if (gen.offsets.hasSealed || gen.writer.buffered === 0) return;
    gen.writer.seal();
    gen.offsets.seal();
    gen.deadLetters.seal();
    gen.firstPendingAtMs = undefined;
  }

  private async retrying(gen: Generation, step: string, deadlineMs: number | undefined, attempt: () => Promise<void>): Promise<boolean> {
    for (let failures = 0; ; ) {
      if (gen !== this.gen) return false;
      try {
        await attempt();
        // Only the current generation resumes fetching: an old one's batch finishing late must not
        // resume a consumer that the new generation paused.
        if (this.failing !== undefined && gen === this.gen) this.recovered();
        return true;
      } catch (error) {
        if (gen !== this.gen) return false;
        failures++;
        if (needsFix(error)) {
          this.failFatally(step, error);
          return false;
        }
        this.noteFailure(step, error, failures);
        const delayMs = backoffDelayMs(this.config.retry, failures);
        const deadline = Math.min(deadlineMs ?? Infinity, this.stopDeadlineMs ?? Infinity);
        if (Date.now() + delayMs > deadline) return false;
        await this.sleepAlive(gen, delayMs);
        // A shutdown that gave up on this batch woke the sleep: no attempt after its deadline.
        if (this.stopAbort.signal.aborted || Date.now() > deadline) return false;
        if (gen.offsets.isRebalancing && gen.context !== undefined && !this.stopping) {
          // Another member waits for this one to rejoin; the batch is consumed again after it.
          return false;
        }
      }
    }
  }

  /** One attempt at writing the sealed batch; on success its offsets become committable. */
  private async writeSealedOnce(gen: Generation, trigger: string): Promise<void> {
    if (!gen.offsets.hasSealed) return;
    const rowsBefore = this.counts.rowsWritten;
    const deadBefore = this.counts.deadLetters;
    const started = performance.now();
    await this.telemetry.inSpan('toolcanon.worker.flush', { 'toolcanon.batch.events': gen.offsets.sealedEvents, 'toolcanon.flush.trigger': trigger }, () => this.whileAlive(gen, gen.writer.writeSealed()));
    const durationMs = performance.now() - started;
    this.stats.flushes++;
    this.telemetry.rowsWritten(this.counts.rowsWritten - rowsBefore, this.counts.deadLetters - deadBefore, durationMs);
    // Everything in the batch is acknowledged: its offsets may be committed once the poison
    // records among it are in the dead-letter topic.
    for (const dead of gen.deadLetters.acknowledgeSealed()) this.telemetry.deadLettered(dead.reason);
    gen.offsets.acknowledgeSealed();
  }

  private async publishDeadLetters(gen: Generation): Promise<void> {
    const producer = this.producer;
    if (producer === undefined) throw new Error('no producer for the dead-letter topic');
    this.stats.dlqPublished += await this.dlq.publish(producer, gen.deadLetters, (work) => this.whileAlive(gen, work));
  }

  private async commit(gen: Generation): Promise<boolean> {
    const offsets = gen.offsets.offsetsToCommit();
    for (let attempt = 1; attempt <= COMMIT_ATTEMPTS; attempt++) {
      if (gen !== this.gen || gen.context === undefined) return false;
      try {
        const context = gen.context;
        await this.telemetry.inSpan('toolcanon.worker.commit', { 'toolcanon.commit.partitions': offsets.length }, () => context.commit(offsets));
        for (const { partition, offset } of offsets) this.progress.noteCommitted(partition, BigInt(offset));
        this.stats.eventsCommitted += gen.offsets.committed(offsets);
        this.lastCommitAtMs = Date.now();
        this.stats.commits++;
        this.telemetry.committed(offsets.length);
        return true;
      } catch (error) {
        this.stats.commitFailures++;
        if (isRebalanceError(error)) {
          gen.offsets.noteRebalance(error);
          this.log.warn(`Commit refused, the group is rebalancing: the written events after the last commit are consumed again (and deduplicated).`);
          return false;
        }
        this.log.warn(`Commit failed (attempt ${attempt} of ${COMMIT_ATTEMPTS}): ${(error as Error).message}`);
        if (attempt < COMMIT_ATTEMPTS) await sleep(backoffDelayMs(this.config.retry, attempt), this.stopAbort.signal);
      }
    }
    // The rows are written; the offsets are committed with the next batch (or retried by the timer).
    gen.offsets.nextCommitRetryAtMs = Date.now() + this.config.retry.maxMs;
    return false;
  }

  /** Awaits `work` while heartbeating, so a slow insert does not get this member evicted. */
  private async whileAlive<T>(gen: Generation, work: Promise<T>): Promise<T> {
    const beat = setInterval(() => this.heartbeat(gen), this.config.heartbeatIntervalMs);
    try {
      return await work;
    } finally {
      clearInterval(beat);
    }
  }

  private async sleepAlive(gen: Generation, ms: number): Promise<void> {
    await this.whileAlive(gen, sleep(ms, this.stopAbort.signal));
  }

  private heartbeat(gen: Generation): void {
    gen.context?.heartbeat().catch((error: unknown) => {
      if (isRebalanceError(error)) gen.offsets.noteRebalance(error);
    });
  }

  private noteFailure(step: string, error: unknown, attempts: number): void {
    const message = (error as Error).message ?? String(error);
    if (step === 'ClickHouse insert') {
      this.stats.flushFailures++;
      this.telemetry.flushFailed(error);
    }
    this.failing = { step, attempts, sinceMs: this.failing?.sinceMs ?? Date.now(), message };
    if (!this.paused) this.setPaused(true);
    this.log.warn(`Retrying ${step} (attempt ${attempts} failed, fetching paused, nothing committed): ${message}`);
  }

  /**
   * A failure that waiting cannot fix (the data directory removed, its disk full, the engine
   * closed; a server refusing the credentials): the worker stops without committing anything
   * more, so the events after the last commit are consumed again at the next start. Retrying
   * would hold the partitions and commit nothing, forever.
   */
  private failFatally(step: string, error: SinkError): void {
    if (step === 'ClickHouse insert') {
      this.stats.flushFailures++;
      this.telemetry.flushFailed(error);
    }
    if (this.fatal !== undefined) return;
    this.fatal = error;
    this.log.error(`Stopping: ${step} failed and retrying cannot help (${error.message}); nothing after the last commit is committed: those events are consumed again at the next start.`);
    this.stop('ClickHouse failure').catch((e: unknown) => this.log.error(`Stopping after the failure failed: ${(e as Error).message}`));
  }

  private recovered(): void {
    const f = this.failing;
    this.failing = undefined;
    if (f) this.log.info(`${f.step} recovered after ${f.attempts} failed attempt(s) in ${Date.now() - f.sinceMs} ms; fetching resumes.`);
    if (this.paused && !this.stopping) this.setPaused(false);
  }

  private setPaused(paused: boolean): void {
    this.paused = paused;
    if (paused) this.consumer?.pause();
    else this.consumer?.resume();
  }

  private async reportProgress(): Promise<void> {
    try {
      if (this.admin) await this.progress.refresh(this.admin, this.config.topic, this.config.groupId);
    } catch {
      // Lag is informative only; the next report tries again.
    }
    if (!this.stopping) this.log.info(this.progressLine('Progress'));
  }

  /** One line: counters, state and lag per partition (high watermark minus committed offset). */
  progressLine(label: string): string {
    const c = this.counts;
    const s = this.stats;
    return this.progress.line(label, {
      consumed: s.eventsConsumed,
      written: c.rowsWritten,
      deadLettered: c.deadLetters,
      dlqPublished: s.dlqPublished,
      committed: s.eventsCommitted,
      buffered: this.gen.writer.pending,
      flushes: s.flushes,
      failedFlushes: s.flushFailures,
      paused: this.paused,
    });
  }
}

/** A sink failure that needs a fix first (SinkError.transient false): retrying will not help. */
function needsFix(error: unknown): error is SinkError {
  return error instanceof SinkError && !error.transient;
}

async function raceDeadline<T>(work: Promise<T>, deadlineMs: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), Math.max(0, deadlineMs - Date.now()));
  });
  try {
    return await Promise.race([work.catch(() => fallback), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function defaultClientId(): string {
  return `toolcanon-${hostname()}-${process.pid}`;
}
