// `toolcanon produce` with lines the topic cannot take (issue 13, item 4; issue 14, "produce does
// the same for records the topic cannot take"): each goes to the dead-letter topic as an
// `oversized` dead letter in the worker's DLQ format, with its file:line, its key and its bytes
// (cut to what the dead-letter topic takes, and marked so, when they must be); the run says so
// and exits 0, and every line read is on the topic or in the dead-letter topic.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadLetter } from '../../src/decode/event.ts';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { publishPaths } from '../../src/kafka/publish.ts';
import { makeTempDir } from '../helpers/db.ts';
import { eventLine } from '../helpers/events.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import { DLQ_TOPIC_HEADERS as H, type ReadRecord, readTopic, runCli, testClient, uniqueName } from '../helpers/worker.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/kafka/produce-oversized.test.ts');

/** A small limit keeps the test fast: the same rule holds at Kafka's default 1 MiB. */
const TOPIC_MAX = 100_000;
const DLQ_MAX = 300_000;

const text = (v: Buffer | string | undefined | null): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : v.toString('utf8'));
const metricsOf = (stdout: string): Record<string, number> =>
  Object.fromEntries(stdout.trim().split('\n').map((l) => JSON.parse(l) as { metric: string; value: number }).map((r) => [r.metric, r.value]));

describe.skipIf(brokers === null)('toolcanon produce sends what the topic cannot take to the dead-letter topic', () => {
  const tmp = makeTempDir('produce-oversized');
  const topics: string[] = [];
  let client: KafkaClient;
  let admin: KafkaAdmin;

  beforeAll(async () => {
    client = testClient(brokers ?? [], 'produce-oversized-test');
    admin = await client.admin();
  });
  afterAll(async () => {
    await admin?.deleteTopics(topics).catch(() => undefined);
    await admin?.disconnect();
    tmp.cleanup();
  });

  /** A folder of two files: small events around one line of `bigBytes` (about) per file. */
  function folder(name: string, bigBytes: readonly number[]): { dir: string; good: string[]; big: Array<{ line: string; source: string; session: string }> } {
    const dir = join(tmp.dir, name);
    mkdirSync(dir, { recursive: true });
    const good: string[] = [];
    const big: Array<{ line: string; source: string; session: string }> = [];
    bigBytes.forEach((size, f) => {
      const lines: string[] = [];
      for (let i = 0; i < 5; i++) lines.push(eventLine({ session_id: `s-${f}-${i % 2}`, call_id: `${name}-${f}-${i}` }));
      const session = `s-big-${f}`;
      // Multi-byte text, so that a cut value shows whether it keeps whole characters.
      const line = eventLine({ session_id: session, call_id: `${name}-${f}-big`, output: 'é'.repeat(Math.ceil(size / 2)) });
      lines.splice(2, 0, line);
      const file = join(dir, `f${f}.jsonl`);
      writeFileSync(file, `${lines.join('\n')}\n\n`);
      big.push({ line, source: `${file}:3`, session });
      good.push(...lines.filter((l) => l !== line));
    });
    return { dir, good, big };
  }

  it('exit 0, says so in the summary; the good lines on the topic, the oversized ones whole in a DLQ topic that takes them, with reason and file:line', async () => {
    const topic = uniqueName('tc-produce-big');
    const dlqTopic = `${topic}.dlq`;
    topics.push(topic, dlqTopic);
    // A dead-letter topic made by hand with more room than the topic.
    await admin.ensureTopic(dlqTopic, { partitions: 1, configs: { 'max.message.bytes': String(DLQ_MAX) } });
    const input = folder('whole', [150_000, 250_000]);

    const run = await runCli(['produce', input.dir, '--brokers', (brokers ?? []).join(','), '--topic', topic, '--partitions', '3', '--topic-max-message-bytes', String(TOPIC_MAX), '--format', 'json']);
    expect(run.code, run.stderr).toBe(0);
    const m = metricsOf(run.stdout);
    expect(m).toMatchObject({ records_read: 12, records_published: 10, dead_lettered_oversized: 2, blank_lines_skipped: 2 });
    // Counts in = produced + dead-lettered.
    expect(m['records_read']).toBe((m['records_published'] ?? 0) + (m['dead_lettered_oversized'] ?? 0));
    expect(run.stderr).toContain(`10 records produced to ${topic}, 2 sent to the DLQ topic ${dlqTopic} as oversized.`);
    for (const b of input.big) expect(run.stderr).toContain(`${b.source}: ${Buffer.byteLength(b.line)} bytes: more than ${topic} takes in one record (max.message.bytes ${TOPIC_MAX}`);
    expect(run.stderr).not.toContain('with its first');

    const onTopic = await readTopic(client, topic, input.good.length);
    expect(onTopic.map((r) => text(r.value)).sort()).toEqual([...input.good].sort());
    const dlq = await readTopic(client, dlqTopic, input.big.length);
    expect(dlq).toHaveLength(2);
    for (const b of input.big) {
      const r = dlq.find((x) => text(x.headers[H.originSource]) === b.source) as ReadRecord;
      expect(r, b.source).toBeDefined();
      expect(text(r.key)).toBe(b.session);
      expect(r.value?.equals(Buffer.from(b.line))).toBe(true);
      expect(text(r.headers[H.reason])).toBe('oversized');
      expect(text(r.headers[H.originTopic])).toBe(topic);
      expect(text(r.headers[H.detail])).toMatch(new RegExp(`^${Buffer.byteLength(b.line)} bytes: more than ${topic} takes in one record`));
      // The id replay gives this line's dead letter.
      expect(text(r.headers[H.deadLetterId])).toBe(deadLetter(Buffer.from(b.line), 'oversized', '', b.source, '').dead_letter_id);
      expect(r.headers[H.valueOriginalBytes]).toBeUndefined();
    }
  });

  it('creates the dead-letter topic as the worker would and cuts a value it cannot hold, saying so', async () => {
    const topic = uniqueName('tc-produce-cut');
    const dlqTopic = `${topic}.dlq`;
    topics.push(topic, dlqTopic);
    const input = folder('cut', [400_000]);

    const run = await runCli(['produce', input.dir, '--brokers', (brokers ?? []).join(','), '--topic', topic, '--partitions', '2', '--topic-max-message-bytes', String(TOPIC_MAX), '--format', 'json']);
    expect(run.code, run.stderr).toBe(0);
    expect(metricsOf(run.stdout)).toMatchObject({ records_read: 6, records_published: 5, dead_lettered_oversized: 1 });
    expect(run.stderr).toContain(`Created dead-letter topic ${dlqTopic} (2 partition(s)).`);
    expect(run.stderr).toContain(`5 records produced to ${topic}, 1 sent to the DLQ topic ${dlqTopic} as oversized.`);
    expect(run.stderr).toMatch(/with its first [0-9]+ bytes/);
    expect(await admin.partitionCount(dlqTopic)).toBe(2);
    expect(await admin.maxMessageBytes(dlqTopic)).toBe(TOPIC_MAX);

    const [big] = input.big;
    const original = Buffer.from(big?.line ?? '');
    const [r] = await readTopic(client, dlqTopic, 1);
    expect(text(r?.headers[H.reason])).toBe('oversized');
    expect(text(r?.headers[H.originSource])).toBe(big?.source);
    expect(text(r?.headers[H.valueOriginalBytes])).toBe(String(original.byteLength));
    const value = r?.value ?? Buffer.alloc(0);
    // As much as fits (the headers and framing take well under 1 KiB), cut between characters.
    expect(value.byteLength).toBeLessThan(TOPIC_MAX);
    expect(value.byteLength).toBeGreaterThan(TOPIC_MAX - 2048);
    expect(original.subarray(0, value.byteLength).equals(value)).toBe(true);
    expect(value.toString('utf8')).not.toContain('\ufffd');
    expect((await readTopic(client, topic, 5)).map((x) => text(x.value)).sort()).toEqual([...input.good].sort());
  });

  it('when the topic takes less than it was said to, routes the records the broker refuses (and cuts to what the DLQ topic really takes)', async () => {
    const topic = uniqueName('tc-produce-wrong-limit');
    const dlqTopic = `${topic}.dlq`;
    topics.push(topic, dlqTopic);
    await admin.ensureTopic(topic, { partitions: 1, configs: { 'max.message.bytes': String(TOPIC_MAX) } });
    await admin.ensureTopic(dlqTopic, { partitions: 1, configs: { 'max.message.bytes': String(TOPIC_MAX) } });
    const input = folder('wrong', [150_000]);
    const producer = await client.producer();
    const logs: string[] = [];
    try {
      // The limit the caller believes (as when describeConfigs is not allowed): 1 MiB. No admin,
      // so the dead-letter topic's limit is believed to be the same.
      const result = await publishPaths(producer, [input.dir], { topic, maxMessageBytes: 1_048_588, log: (l) => logs.push(l) });
      expect(result.recordsRead).toBe(6);
      expect(result.published).toBe(5);
      expect(result.deadLettered).toHaveLength(1);
      expect(result.deadLettered[0]).toMatchObject({ source: input.big[0]?.source, dlqTopic });
      expect(result.deadLettered[0]?.keptBytes).toBeLessThan(TOPIC_MAX);
      expect(result.deadLettered[0]?.detail).toContain('the broker refused it as too large');
    } finally {
      await producer.disconnect();
    }
    expect(logs.join('\n')).toContain('sending them one at a time');
    expect((await readTopic(client, topic, 5)).map((x) => text(x.value)).sort()).toEqual([...input.good].sort());
    const [r] = await readTopic(client, dlqTopic, 1);
    expect(text(r?.headers[H.originSource])).toBe(input.big[0]?.source);
    expect(Number(text(r?.headers[H.valueOriginalBytes]))).toBe(Buffer.byteLength(input.big[0]?.line ?? ''));
  });
});
