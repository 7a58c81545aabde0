// End-to-end check of the real broker (scripts/kafka.sh) through the project's Kafka client seam
// (src/kafka/client.ts, the only module that imports kafkajs): a 3-partition topic, 1000 keyed
// messages, one consumer group reading with eachBatch. Every value must arrive exactly once and
// each key's messages in the order they were produced.
import { afterAll, describe, expect, it } from 'vitest';
import { createKafkaClient, type KafkaAdmin, type StreamConsumer, type StreamProducer } from '../../src/kafka/client.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/kafka/broker.test.ts');

const MESSAGES = 1000;
const KEYS = 20;
const PARTITIONS = 3;

interface Received {
  key: string;
  seq: number;
  partition: number;
  offset: bigint;
}

describe.skipIf(brokers === null)('kafka broker (kafkajs 2.2.4 through the client seam)', () => {
  const suffix = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const topic = `toolcanon-broker-test-${suffix}`;
  const clientLogs: string[] = [];
  // Client warnings are part of what this test checks for: kept visible, and collected.
  const client = createKafkaClient({
    brokers: brokers ?? [],
    clientId: 'toolcanon-broker-test',
    log: (line) => {
      clientLogs.push(line);
      console.warn(line);
    },
  });
  let admin: KafkaAdmin | undefined;
  let producer: StreamProducer | undefined;
  let consumer: StreamConsumer | undefined;

  afterAll(async () => {
    await consumer?.disconnect();
    await producer?.disconnect();
    if (admin !== undefined) {
      await admin.deleteTopics([topic]).catch(() => undefined);
      await admin.disconnect();
    }
    if (clientLogs.length > 0) console.warn(`kafkajs logged ${clientLogs.length} warning(s)/error(s)`);
  });

  it(
    'delivers 1000 keyed messages over 3 partitions exactly once, in per-key order',
    async () => {
      admin = await client.admin();
      const created = await admin.ensureTopic(topic, { partitions: PARTITIONS });
      expect(created).toBe(true);
      expect(await admin.partitionCount(topic)).toBe(PARTITIONS);

      producer = await client.producer();
      const nextSeq = new Map<string, number>();
      for (let start = 0; start < MESSAGES; start += 100) {
        const messages = [];
        for (let i = start; i < Math.min(start + 100, MESSAGES); i++) {
          const key = `key-${i % KEYS}`;
          const seq = nextSeq.get(key) ?? 0;
          nextSeq.set(key, seq + 1);
          messages.push({ key, value: JSON.stringify({ id: i, key, seq }) });
        }
        // Awaiting each send keeps one request in flight, so per-partition order is the send order.
        await producer.send(topic, messages);
      }

      const highs = await admin.highWatermarks(topic);
      expect(highs.size).toBe(PARTITIONS);
      const perPartition = [...highs.values()].map((h) => Number(h));
      expect(perPartition.reduce((a, b) => a + b, 0)).toBe(MESSAGES);
      // 20 keys hashed over 3 partitions: every partition gets some of them.
      for (const n of perPartition) expect(n).toBeGreaterThan(0);

      const received: Received[] = [];
      const ids: number[] = [];
      const keyMismatches: number[] = [];
      let resolveAll: () => void = () => undefined;
      const allArrived = new Promise<void>((resolve) => {
        resolveAll = resolve;
      });
      const group = `toolcanon-broker-test-${suffix}`;
      consumer = await client.consumer({
        groupId: group,
        topic,
        fromBeginning: true,
        sessionTimeoutMs: 30_000,
        heartbeatIntervalMs: 3_000,
        rebalanceTimeoutMs: 60_000,
        maxWaitTimeMs: 200,
        fetchMaxBytes: 1024 * 1024,
        fetchMaxBytesPerPartition: 256 * 1024,
      });
      // The handler is awaited batch by batch; run() itself resolves once the consumer is running.
      void consumer.run(async ({ batch, markFetched, heartbeat, commit }) => {
        for (const message of batch.records) {
          const value = JSON.parse(message.value?.toString('utf8') ?? 'null') as {
            id: number;
            key: string;
            seq: number;
          };
          // No expect() in here: a throw would make kafkajs retry the batch (a redelivery).
          if (message.key?.toString('utf8') !== value.key) keyMismatches.push(value.id);
          ids.push(value.id);
          received.push({
            key: value.key,
            seq: value.seq,
            partition: batch.partition,
            offset: BigInt(message.offset),
          });
          markFetched(message.offset);
        }
        const last = batch.records[batch.records.length - 1];
        if (last !== undefined) await commit([{ partition: batch.partition, offset: (BigInt(last.offset) + 1n).toString() }]);
        await heartbeat();
        if (ids.length >= MESSAGES) resolveAll();
      });

      await allArrived;
      // Give a duplicate (e.g. a redelivery after a rebalance) a moment to show up.
      await new Promise((r) => setTimeout(r, 1_000));

      expect(keyMismatches).toEqual([]);
      expect(ids).toHaveLength(MESSAGES);
      expect(new Set(ids).size).toBe(MESSAGES);
      expect(Math.min(...ids)).toBe(0);
      expect(Math.max(...ids)).toBe(MESSAGES - 1);

      const byKey = new Map<string, Received[]>();
      for (const r of received) {
        const list = byKey.get(r.key) ?? [];
        list.push(r);
        byKey.set(r.key, list);
      }
      expect(byKey.size).toBe(KEYS);
      for (const [key, list] of byKey) {
        // One key, one partition; sequence numbers in production order with no gaps.
        expect(new Set(list.map((r) => r.partition)).size, key).toBe(1);
        expect(
          list.map((r) => r.seq),
          key,
        ).toEqual(list.map((_, i) => i));
        for (let i = 1; i < list.length; i++) {
          const prev = list[i - 1];
          const cur = list[i];
          expect(prev !== undefined && cur !== undefined && cur.offset > prev.offset, key).toBe(true);
        }
      }
      expect(new Set(received.map((r) => r.partition)).size).toBe(PARTITIONS);
      // Every partition's consumed position is committed for the group.
      const committed = await admin.committedOffsets(group, topic);
      expect([...committed.entries()].sort(([a], [b]) => a - b)).toEqual([...highs.entries()].sort(([a], [b]) => a - b));
    },
    120_000,
  );
});
