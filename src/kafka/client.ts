// The Kafka client seam: the only module that imports kafkajs. Everything else (the worker, the
// produce command, tests, the benchmark) uses the small interfaces below, so the client can be
// swapped for the KafkaJS-compatible @confluentinc/kafka-javascript by rewriting this file alone.
import kafkajs from 'kafkajs';
import type { Admin, Consumer, EachBatchPayload, IHeaders, KafkaConfig, LogEntry, Producer } from 'kafkajs';
import { scrubSecrets } from '../config/secrets.ts';
import type { KafkaSecurity } from './security.ts';
import { asLogger, type Logger, type LogTarget } from '../util/log.ts';

const { Kafka, logLevel: KafkaLogLevel, Partitioners } = kafkajs;

/** How loud the client library may be on stderr; it is never louder than warnings. */
export type ClientLogLevel = 'warn' | 'error' | 'nothing';

export interface KafkaClientConfig {
  /** Bootstrap brokers, `host:port` each. */
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Default 'warn'. */
  readonly logLevel?: ClientLogLevel;
  /** Where client log lines go (kafkajs's mapped onto our levels, see logCreatorFor); default stderr. */
  readonly log?: LogTarget;
  /** Socket connection timeout; kafkajs's default of 1 s is short on a busy 2-core machine. */
  readonly connectionTimeoutMs?: number;
  /** SASL and TLS (kafkaSecurityFromEnv); plaintext without. */
  readonly security?: KafkaSecurity;
}

/** One record as consumed: the bytes exactly as they are stored in the topic. */
export interface ConsumedRecord {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly timestamp: string;
  readonly headers: Readonly<Record<string, Buffer | string | undefined>>;
}

export interface ConsumedBatch {
  readonly topic: string;
  readonly partition: number;
  /** The partition's high watermark when the batch was fetched (offset of the next record). */
  readonly highWatermark: string;
  readonly records: readonly ConsumedRecord[];
}

/** What a batch handler may do besides reading the records. */
export interface BatchContext {
  readonly batch: ConsumedBatch;
  /** Moves the fetch position past this record (it is not a commit). */
  markFetched(offset: string): void;
  /** Tells the group coordinator this member is alive; rejects with a rebalance error when the group is rebalancing. */
  heartbeat(): Promise<void>;
  /** Commits exactly these offsets (the offset of the next record to read, per partition), once, without retries. */
  commit(offsets: readonly PartitionOffset[]): Promise<void>;
  /** False once the consumer is stopping. */
  isRunning(): boolean;
}

export interface PartitionOffset {
  readonly partition: number;
  /** The next offset to read, as Kafka commits it. */
  readonly offset: string;
}

export interface StreamConsumerConfig {
  readonly groupId: string;
  readonly topic: string;
  /** Where a group without committed offsets starts: the earliest record (true) or new records only. */
  readonly fromBeginning: boolean;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly rebalanceTimeoutMs: number;
  /** Longest the broker holds a fetch open when there is nothing new. */
  readonly maxWaitTimeMs: number;
  /** Upper bound of one fetch response, all partitions together (a single larger record still comes through). */
  readonly fetchMaxBytes: number;
  readonly fetchMaxBytesPerPartition: number;
  /** Batches of different partitions handed to the handler at the same time (default 1). */
  readonly partitionsConsumedConcurrently?: number;
}

export interface ConsumerCrash {
  readonly error: Error;
  /** True when the client restarts the consumer by itself (it rejoins the group). */
  readonly restarting: boolean;
}

export interface StreamConsumer {
  /**
   * Joins the group and calls `onBatch` for each fetched batch until stopped: one batch of a
   * partition at a time, batches of different partitions concurrently up to the configured number.
   */
  run(onBatch: (context: BatchContext) => Promise<void>): Promise<void>;
  /** Called after every join of the group, with this member's partitions of the topic. */
  onAssigned(listener: (partitions: readonly number[]) => void): void;
  onCrash(listener: (crash: ConsumerCrash) => void): void;
  /** Stops fetching from these partitions (all of the topic when omitted) until resumed. */
  pause(partitions?: readonly number[]): void;
  resume(partitions?: readonly number[]): void;
  /** Commits offsets outside a batch handler (with the client's retries). */
  commit(offsets: readonly PartitionOffset[]): Promise<void>;
  /** Stops fetching, leaves the group and closes connections. Commits nothing by itself. */
  disconnect(): Promise<void>;
}

export interface OutgoingRecord {
  readonly key: Buffer | string | null;
  readonly value: Buffer | string | null;
  readonly headers?: Readonly<Record<string, Buffer | string>>;
}

export interface StreamProducer {
  /** Sends records and waits until every in-sync replica has them (acks = all). */
  send(topic: string, records: readonly OutgoingRecord[]): Promise<void>;
  disconnect(): Promise<void>;
}

export interface TopicSpec {
  readonly partitions: number;
  readonly configs?: Readonly<Record<string, string>>;
}

export interface KafkaAdmin {
  /** Creates the topic when missing; returns true when it created it. */
  ensureTopic(topic: string, spec: TopicSpec): Promise<boolean>;
  /** Partition count, or undefined when the topic does not exist. */
  partitionCount(topic: string): Promise<number | undefined>;
  /** The topic's max.message.bytes (or the broker default it inherits), undefined when unknown. */
  maxMessageBytes(topic: string): Promise<number | undefined>;
  /** High watermark (next offset to be written) per partition. */
  highWatermarks(topic: string): Promise<Map<number, bigint>>;
  /** The group's committed offset per partition; partitions without a commit are absent. */
  committedOffsets(groupId: string, topic: string): Promise<Map<number, bigint>>;
  deleteTopics(topics: readonly string[]): Promise<void>;
  disconnect(): Promise<void>;
}

export interface KafkaClient {
  consumer(config: StreamConsumerConfig): Promise<StreamConsumer>;
  producer(): Promise<StreamProducer>;
  admin(): Promise<KafkaAdmin>;
}

function toKafkaLogLevel(level: ClientLogLevel, logger: Logger): number {
  if (level === 'nothing') return KafkaLogLevel.NOTHING;
  if (level === 'error') return KafkaLogLevel.ERROR;
  // kafkajs's INFO lines (joined, starting, stopped…) only at our debug level.
  return logger.enabled('debug') ? KafkaLogLevel.INFO : KafkaLogLevel.WARN;
}

/**
 * kafkajs's lines on our levels (src/util/log.ts). Its ERROR and WARN lines are warnings here:
 * kafkajs logs a connection lost or an error response of the broker ("Response Heartbeat …: The
 * group is rebalancing") at ERROR, and the caller receives the same error and handles it
 * (reconnect, rejoin, retry): nothing is lost by it. What loses data is said by the caller.
 * Its INFO and DEBUG lines are debug.
 */
function logCreatorFor(logger: Logger) {
  return () =>
    (entry: LogEntry): void => {
      const { message, timestamp: _timestamp, logger: _logger, stack: _stack, ...extra } = entry.log;
      const fields = Object.keys(extra).length > 0 ? ` ${JSON.stringify(extra)}` : '';
      // A SASL failure may quote what was sent: scrubbed of every registered secret.
      const line = scrubSecrets(`kafkajs [${entry.namespace}]: ${String(message)}${fields}`);
      if (entry.level === KafkaLogLevel.ERROR || entry.level === KafkaLogLevel.WARN) logger.warn(line);
      else logger.debug(line);
    };
}

function headersOf(headers: IHeaders | undefined): Record<string, Buffer | string | undefined> {
  const out: Record<string, Buffer | string | undefined> = {};
  if (!headers) return out;
  for (const [name, value] of Object.entries(headers)) out[name] = Array.isArray(value) ? value[value.length - 1] : value;
  return out;
}

function topicPartitions(topic: string, partitions: readonly number[] | undefined): Array<{ topic: string; partitions?: number[] }> {
  return partitions === undefined ? [{ topic }] : [{ topic, partitions: [...partitions] }];
}

class KafkajsStreamConsumer implements StreamConsumer {
  private readonly assignedListeners: Array<(partitions: readonly number[]) => void> = [];
  private readonly crashListeners: Array<(crash: ConsumerCrash) => void> = [];

  constructor(
    private readonly consumer: Consumer,
    private readonly config: StreamConsumerConfig,
  ) {
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      const partitions = [...(event.payload.memberAssignment[config.topic] ?? [])].sort((a, b) => a - b);
      for (const l of this.assignedListeners) l(partitions);
    });
    consumer.on(consumer.events.CRASH, (event) => {
      for (const l of this.crashListeners) l({ error: event.payload.error, restarting: event.payload.restart });
    });
  }

  async run(onBatch: (context: BatchContext) => Promise<void>): Promise<void> {
    await this.consumer.subscribe({ topics: [this.config.topic], fromBeginning: this.config.fromBeginning });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.config.partitionsConsumedConcurrently ?? 1,
      eachBatch: async (payload: EachBatchPayload) => {
        const { batch } = payload;
        await onBatch({
          batch: {
            topic: batch.topic,
            partition: batch.partition,
            highWatermark: batch.highWatermark,
            records: batch.messages.map((m) => ({ offset: m.offset, key: m.key, value: m.value, timestamp: m.timestamp, headers: headersOf(m.headers) })),
          },
          markFetched: (offset) => payload.resolveOffset(offset),
          heartbeat: () => payload.heartbeat(),
          commit: (offsets) =>
            payload.commitOffsetsIfNecessary({
              topics: [{ topic: this.config.topic, partitions: offsets.map((o) => ({ partition: o.partition, offset: o.offset })) }],
            }),
          isRunning: () => payload.isRunning(),
        });
      },
    });
  }

  onAssigned(listener: (partitions: readonly number[]) => void): void {
    this.assignedListeners.push(listener);
  }

  onCrash(listener: (crash: ConsumerCrash) => void): void {
    this.crashListeners.push(listener);
  }

  pause(partitions?: readonly number[]): void {
    this.consumer.pause(topicPartitions(this.config.topic, partitions));
  }

  resume(partitions?: readonly number[]): void {
    this.consumer.resume(topicPartitions(this.config.topic, partitions));
  }

  async commit(offsets: readonly PartitionOffset[]): Promise<void> {
    await this.consumer.commitOffsets(offsets.map((o) => ({ topic: this.config.topic, partition: o.partition, offset: o.offset })));
  }

  async disconnect(): Promise<void> {
    await this.consumer.disconnect();
  }
}

class KafkajsStreamProducer implements StreamProducer {
  constructor(private readonly producer: Producer) {}

  async send(topic: string, records: readonly OutgoingRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.producer.send({
      topic,
      acks: -1,
      messages: records.map((r) => (r.headers === undefined ? { key: r.key, value: r.value } : { key: r.key, value: r.value, headers: { ...r.headers } })),
    });
  }

  async disconnect(): Promise<void> {
    await this.producer.disconnect();
  }
}

/** Kafka's broker-side default for message.max.bytes (1 MiB plus record batch overhead). */
export const KAFKA_DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

class KafkajsAdmin implements KafkaAdmin {
  constructor(private readonly admin: Admin) {}

  async ensureTopic(topic: string, spec: TopicSpec): Promise<boolean> {
    if ((await this.partitionCount(topic)) !== undefined) return false;
    try {
      return await this.admin.createTopics({
        waitForLeaders: true,
        topics: [
          {
            topic,
            numPartitions: spec.partitions,
            configEntries: Object.entries(spec.configs ?? {}).map(([name, value]) => ({ name, value })),
          },
        ],
      });
    } catch (error) {
      // Another worker created it between the check and the request.
      if (findErrorType(error, 'TOPIC_ALREADY_EXISTS')) return false;
      throw error;
    }
  }

  async partitionCount(topic: string): Promise<number | undefined> {
    const topics = await this.admin.listTopics();
    if (!topics.includes(topic)) return undefined;
    const { topics: meta } = await this.admin.fetchTopicMetadata({ topics: [topic] });
    return meta[0]?.partitions.length;
  }

  async maxMessageBytes(topic: string): Promise<number | undefined> {
    try {
      const result = await this.admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2 /* TOPIC */, name: topic, configNames: ['max.message.bytes'] }],
      });
      const value = result.resources[0]?.configEntries.find((e) => e.configName === 'max.message.bytes')?.configValue;
      return value === undefined ? undefined : Number(value);
    } catch {
      return undefined;
    }
  }

  async highWatermarks(topic: string): Promise<Map<number, bigint>> {
    const offsets = await this.admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
  }

  async committedOffsets(groupId: string, topic: string): Promise<Map<number, bigint>> {
    const result = await this.admin.fetchOffsets({ groupId, topics: [topic] });
    const out = new Map<number, bigint>();
    for (const p of result.find((t) => t.topic === topic)?.partitions ?? []) {
      const offset = BigInt(p.offset);
      if (offset >= 0n) out.set(p.partition, offset);
    }
    return out;
  }

  async deleteTopics(topics: readonly string[]): Promise<void> {
    await this.admin.deleteTopics({ topics: [...topics] });
  }

  async disconnect(): Promise<void> {
    await this.admin.disconnect();
  }
}

/** The kafkajs options for SASL and TLS (exported for tests: what the client is given). */
export function securityOptions(security: KafkaSecurity | undefined): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const out: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  if (security?.ssl) {
    const { ca, cert, key, passphrase } = security.ssl;
    const tls = { ...(ca ? { ca: [ca] } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}), ...(passphrase ? { passphrase } : {}) };
    out.ssl = Object.keys(tls).length > 0 ? tls : true;
  }
  if (security?.sasl) {
    const { mechanism, username, password } = security.sasl;
    out.sasl = mechanism === 'plain' ? { mechanism, username, password } : mechanism === 'scram-sha-256' ? { mechanism, username, password } : { mechanism, username, password };
  }
  return out;
}

export function createKafkaClient(config: KafkaClientConfig): KafkaClient {
  const logger = asLogger(config.log);
  const kafka = new Kafka({
    clientId: config.clientId,
    brokers: [...config.brokers],
    logLevel: toKafkaLogLevel(config.logLevel ?? 'warn', logger),
    logCreator: logCreatorFor(logger),
    connectionTimeout: config.connectionTimeoutMs ?? 10_000,
    ...securityOptions(config.security),
  });
  return {
    async consumer(c) {
      const consumer = kafka.consumer({
        groupId: c.groupId,
        sessionTimeout: c.sessionTimeoutMs,
        heartbeatInterval: c.heartbeatIntervalMs,
        rebalanceTimeout: c.rebalanceTimeoutMs,
        maxWaitTimeInMs: c.maxWaitTimeMs,
        maxBytes: c.fetchMaxBytes,
        maxBytesPerPartition: c.fetchMaxBytesPerPartition,
        allowAutoTopicCreation: true,
      });
      await consumer.connect();
      return new KafkajsStreamConsumer(consumer, c);
    },
    async producer() {
      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: true });
      await producer.connect();
      return new KafkajsStreamProducer(producer);
    },
    async admin() {
      const admin = kafka.admin();
      await admin.connect();
      return new KafkajsAdmin(admin);
    },
  };
}

/** True when the error (or one of its causes) carries this Kafka protocol error type. */
function findErrorType(error: unknown, type: string): boolean {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 10; depth++) {
    if ((e as { type?: unknown }).type === type) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The group is rebalancing (or this member's generation is over): rejoin before going on. */
export function isRebalanceError(error: unknown): boolean {
  return findErrorType(error, 'REBALANCE_IN_PROGRESS') || findErrorType(error, 'ILLEGAL_GENERATION') || findErrorType(error, 'NOT_COORDINATOR_FOR_GROUP') || findErrorType(error, 'UNKNOWN_MEMBER_ID');
}

/** The broker refused a record as larger than the topic accepts. */
export function isMessageTooLargeError(error: unknown): boolean {
  return findErrorType(error, 'MESSAGE_TOO_LARGE') || findErrorType(error, 'RECORD_LIST_TOO_LARGE');
}
