// The progress reporter on its own: lag per partition from committed offsets and high
// watermarks, what a group join forgets, the progress line; and its refresh against a real broker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { memoryFields, ProgressReporter, type ProgressFigures } from '../../src/worker/progress.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import { sendAll, testClient, uniqueName, waitFor } from '../helpers/worker.ts';

const FIGURES: ProgressFigures = { consumed: 70, written: 60, deadLettered: 2, dlqPublished: 2, committed: 62, buffered: 8, flushes: 3, failedFlushes: 1, paused: false };

describe('ProgressReporter', () => {
  it('lag is the high watermark minus the committed offset, once both are known', () => {
    const p = new ProgressReporter();
    p.assign([0, 1]);
    p.noteHighWatermark(0, 100n);
    expect(p.lagByPartition.size).toBe(0); // nothing committed yet
    p.noteCommitted(0, 40n);
    expect(p.lagByPartition.get(0)).toBe(60n);
    p.noteCommitted(1, 10n);
    expect(p.lagByPartition.has(1)).toBe(false); // no high watermark for 1 yet
    p.noteHighWatermark(1, 5n); // a stale watermark below the commit is no negative lag
    expect(p.lagByPartition.get(1)).toBe(0n);
    expect(p.committed.get(0)).toBe(40n);
  });

  it('a group join forgets the partitions this worker no longer owns', () => {
    const p = new ProgressReporter();
    p.assign([0, 1, 2]);
    for (const part of [0, 1, 2]) {
      p.noteHighWatermark(part, 10n);
      p.noteCommitted(part, 3n);
    }
    p.assign([2, 5]);
    expect(p.partitions).toEqual([2, 5]);
    expect([...p.committed.keys()]).toEqual([2]);
    expect([...p.lagByPartition.keys()]).toEqual([2]);
  });

  it('applyOffsets measures uncommitted partitions from the group offsets, else from 0', () => {
    const p = new ProgressReporter();
    p.assign([0, 1, 2]);
    p.noteCommitted(0, 90n);
    p.applyOffsets(new Map([[0, 100n], [1, 50n], [2, 7n]]), new Map([[0, 1n], [1, 20n]]));
    expect(p.lagByPartition).toEqual(new Map([[0, 10n], [1, 30n], [2, 7n]]));
  });

  it('writes the progress line fields in the documented order', () => {
    const p = new ProgressReporter();
    expect(p.line('Progress', FIGURES, 'rss_mib=1 heap_mib=2 external_mib=3')).toBe(
      'Progress: consumed=70 written=60 dead_lettered=2 dlq_published=2 committed=62 buffered=8 flushes=3 failed_flushes=1 paused=false partitions=- lag=- rss_mib=1 heap_mib=2 external_mib=3',
    );
    p.assign([3, 1]);
    p.noteHighWatermark(3, 9n);
    p.noteCommitted(3, 4n);
    p.noteHighWatermark(1, 2n);
    p.noteCommitted(1, 2n);
    expect(p.line('Stopped', { ...FIGURES, paused: true }, 'm')).toBe(
      'Stopped: consumed=70 written=60 dead_lettered=2 dlq_published=2 committed=62 buffered=8 flushes=3 failed_flushes=1 paused=true partitions=3,1 lag=1:0,3:5 m',
    );
  });

  it('memoryFields in MiB', () => {
    expect(memoryFields({ rss: 3 * 2 ** 20, heapUsed: 2 ** 20, external: 0 })).toBe('rss_mib=3 heap_mib=1 external_mib=0');
    expect(memoryFields()).toMatch(/^rss_mib=\d+ heap_mib=\d+ external_mib=\d+$/);
  });
});

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/worker/progress.test.ts');

describe.skipIf(brokers === null)('ProgressReporter.refresh against a real broker', () => {
  const topic = uniqueName('tc-progress');
  const group = uniqueName('g-progress');
  let client: KafkaClient;
  let admin: KafkaAdmin;
  beforeAll(async () => {
    client = testClient(brokers ?? [], 'progress-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: 2 });
  });
  afterAll(async () => {
    await admin?.deleteTopics([topic]).catch(() => undefined);
    await admin?.disconnect();
  });

  it('reads the high watermarks and the group offsets of the partitions it has not committed', async () => {
    await sendAll(client, topic, Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `a${i}` })));
    // The group commits the first record of each partition that holds any.
    const highs = await waitFor('records on the topic', async () => {
      const h = await admin.highWatermarks(topic);
      return [...h.values()].reduce((a, b) => a + b, 0n) === 5n ? h : undefined;
    });
    const consumer = await client.consumer({ groupId: group, topic, fromBeginning: true, sessionTimeoutMs: 10_000, heartbeatIntervalMs: 1_000, rebalanceTimeoutMs: 20_000, maxWaitTimeMs: 200, fetchMaxBytes: 1 << 20, fetchMaxBytesPerPartition: 1 << 20 });
    const firstOffsets = new Map<number, string>();
    try {
      await consumer.run(async (ctx) => {
        const first = ctx.batch.records[0];
        if (first === undefined || firstOffsets.has(ctx.batch.partition)) return;
        firstOffsets.set(ctx.batch.partition, first.offset);
        await ctx.commit([{ partition: ctx.batch.partition, offset: String(BigInt(first.offset) + 1n) }]);
      });
      await waitFor('a commit', async () => ((await admin.committedOffsets(group, topic)).size > 0 ? true : undefined));
    } finally {
      await consumer.disconnect();
    }
    const fromGroup = await admin.committedOffsets(group, topic);
    const p = new ProgressReporter();
    p.assign([0, 1]);
    await p.refresh(admin, topic, group);
    for (const part of [0, 1]) {
      const high = highs.get(part) ?? 0n;
      const committed = fromGroup.get(part) ?? 0n;
      expect(p.lagByPartition.get(part), `partition ${part}`).toBe(high - committed);
    }
    // Its own commit takes precedence over the group's.
    p.noteCommitted(0, highs.get(0) ?? 0n);
    await p.refresh(admin, topic, group);
    expect(p.lagByPartition.get(0)).toBe(0n);
  });
});
