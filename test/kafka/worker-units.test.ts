// The stream worker's pure parts, no broker needed: backoff, dead-letter records, record
// sources, flag parsing, the produce command's keying.
import { describe, expect, it, vi } from 'vitest';
import { parseConsumeArgs } from '../../src/cli/kafka-commands.ts';
import { UsageError } from '../../src/cli/io.ts';
import { sessionKeyOf } from '../../src/kafka/publish.ts';
import { backoffDelayMs, sleep } from '../../src/worker/backoff.ts';
import { heartbeatIntervalFor, WORKER_DEFAULTS } from '../../src/worker/config.ts';
import { defaultDlqTopic, DLQ_HEADERS, recordSource, toDlqRecord } from '../../src/kafka/dlq.ts';
import { Mutex } from '../../src/worker/mutex.ts';
import { eventLine } from '../helpers/events.ts';

describe('backoffDelayMs', () => {
  const policy = { initialMs: 100, maxMs: 1_000 };

  it('doubles the ceiling per attempt up to the maximum, with jitter in the upper half', () => {
    expect(backoffDelayMs(policy, 1, () => 0)).toBe(50);
    expect(backoffDelayMs(policy, 1, () => 1)).toBe(100);
    expect(backoffDelayMs(policy, 2, () => 1)).toBe(200);
    expect(backoffDelayMs(policy, 4, () => 1)).toBe(800);
    expect(backoffDelayMs(policy, 5, () => 1)).toBe(1_000);
    expect(backoffDelayMs(policy, 500, () => 0)).toBe(500);
  });

  it('spreads retries apart (jitter)', () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelayMs(policy, 3)));
    expect(delays.size).toBeGreaterThan(10);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(200);
    for (const d of delays) expect(d).toBeLessThanOrEqual(400);
  });

  it('sleep ends early when aborted, and only then (fake timers: no wall-clock bound)', async () => {
    vi.useFakeTimers();
    try {
      const settled = async (p: Promise<void>): Promise<boolean> => {
        let done = false;
        void p.then(() => (done = true));
        for (let i = 0; i < 5; i++) await Promise.resolve();
        return done;
      };
      const abort = new AbortController();
      const aborted = sleep(10_000, abort.signal);
      expect(await settled(aborted)).toBe(false);
      abort.abort();
      expect(await settled(aborted)).toBe(true); // no timer advanced: the abort ended it
      const plain = sleep(10_000);
      vi.advanceTimersByTime(9_999);
      expect(await settled(plain)).toBe(false);
      vi.advanceTimersByTime(1);
      expect(await settled(plain)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('Mutex', () => {
  it('runs holders one at a time, in arrival order', async () => {
    const m = new Mutex();
    const order: string[] = [];
    const slow = m.run(async () => {
      order.push('a start');
      await sleep(30);
      order.push('a end');
    });
    const fast = m.run(async () => {
      order.push('b');
    });
    expect(m.busy).toBe(true);
    await Promise.all([slow, fast]);
    expect(order).toEqual(['a start', 'a end', 'b']);
    expect(m.busy).toBe(false);
  });

  it('releases the lock when a holder throws', async () => {
    const m = new Mutex();
    await expect(m.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(m.run(async () => 'next')).resolves.toBe('next');
  });
});

describe('dead-letter records', () => {
  it('names the default dead-letter topic after the topic', () => {
    expect(defaultDlqTopic('tool-events')).toBe('tool-events.dlq');
  });

  it('writes record sources topic/partition/offset', () => {
    expect(recordSource('tool.events-1', 4, '1234567890123')).toBe('tool.events-1/4/1234567890123');
  });

  it('keeps the original key and bytes and carries reason and origin in headers', () => {
    const value = Buffer.from([0xff, 0x00, 0x7b]);
    const record = toDlqRecord({ key: Buffer.from('s-1'), value }, { reason: 'invalid_utf8', detail: 'invalid UTF-8 at byte 0', dead_letter_id: 'abc' }, { topic: 't', partition: 2, offset: '17' });
    expect(record.key).toEqual(Buffer.from('s-1'));
    expect(record.value).toBe(value);
    expect(record.headers).toEqual({
      [DLQ_HEADERS.reason]: 'invalid_utf8',
      [DLQ_HEADERS.detail]: 'invalid UTF-8 at byte 0',
      [DLQ_HEADERS.originTopic]: 't',
      [DLQ_HEADERS.originPartition]: '2',
      [DLQ_HEADERS.originOffset]: '17',
      [DLQ_HEADERS.deadLetterId]: 'abc',
    });
  });

  it('publishes an empty value for a null record value', () => {
    const record = toDlqRecord({ key: null, value: null }, { reason: 'invalid_json', detail: '', dead_letter_id: 'x' }, { topic: 't', partition: 0, offset: '0' });
    expect(record.value).toEqual(Buffer.alloc(0));
  });
});

describe('toolcanon consume flags', () => {
  const required = ['--brokers', '127.0.0.1:19092', '--topic', 'tool-events'];

  it('has defaults for everything but brokers and topic', () => {
    const { config, db, clickhouse, format } = parseConsumeArgs(required);
    expect(config.brokers).toEqual(['127.0.0.1:19092']);
    expect(config.topic).toBe('tool-events');
    expect(config.groupId).toBe(WORKER_DEFAULTS.groupId);
    expect(config.dlqTopic).toBe('tool-events.dlq');
    expect(config.batchMaxRows).toBe(WORKER_DEFAULTS.batchMaxRows);
    expect(config.batchMaxBytes).toBe(WORKER_DEFAULTS.batchMaxBytes);
    expect(config.batchMaxWaitMs).toBe(WORKER_DEFAULTS.batchMaxWaitMs);
    expect(config.fromBeginning).toBe(true);
    expect(config.heartbeatIntervalMs).toBe(3_000);
    expect(config.accounting.thresholdPct).toBe(85);
    expect([db, clickhouse, format]).toEqual([undefined, undefined, 'table']);
  });

  it('reads every flag', () => {
    const { config, db } = parseConsumeArgs([
      ...required,
      '--group', 'g', '--dlq-topic', 'poison', '--db', '/tmp/x',
      '--batch-max-rows', '10', '--batch-max-bytes', '2048', '--batch-max-wait-ms', '50',
      '--max-event-bytes', '999', '--max-depth', '7', '--threshold-pct', '90', '--headroom-tokens', '1000',
      '--retry-initial-ms', '10', '--retry-max-ms', '20', '--shutdown-timeout-ms', '5000',
      '--progress-interval-ms', '0', '--start-from', 'latest', '--session-timeout-ms', '6000',
      '--fetch-max-bytes', '1000000', '--fetch-max-bytes-per-partition', '100000', '--fetch-max-wait-ms', '100',
      '--client-id', 'me',
    ]);
    expect(db).toBe('/tmp/x');
    expect(config).toMatchObject({
      groupId: 'g', dlqTopic: 'poison', batchMaxRows: 10, batchMaxBytes: 2048, batchMaxWaitMs: 50,
      limits: { maxEventBytes: 999, maxDepth: 7 }, retry: { initialMs: 10, maxMs: 20 }, shutdownTimeoutMs: 5000,
      progressIntervalMs: 0, fromBeginning: false, sessionTimeoutMs: 6000, heartbeatIntervalMs: 2000,
      fetchMaxBytes: 1000000, fetchMaxBytesPerPartition: 100000, fetchMaxWaitMs: 100, clientId: 'me',
    });
    expect(config.accounting.thresholdPct).toBe(90);
    expect(config.accounting.headroomTokens).toBe(1000n);
  });

  it.each([
    [['--topic', 't'], /--brokers/],
    [['--brokers', 'localhost', '--topic', 't'], /host:port/],
    [['--brokers', 'h:1'], /--topic/],
    [['--brokers', 'h:1', '--topic', 'bad topic'], /not a valid Kafka topic/],
    [[...required, '--batch-max-rows', '0'], /--batch-max-rows/],
    [[...required, '--batch-max-wait-ms', '1.5'], /--batch-max-wait-ms/],
    [[...required, '--start-from', 'middle'], /--start-from/],
    [[...required, '--retry-initial-ms', '500', '--retry-max-ms', '100'], /--retry-max-ms/],
    [[...required, '--threshold-pct', '101'], /--threshold-pct/],
    [[...required, 'extra'], /positional/],
    [[...required, '--no-such-flag'], /no-such-flag/],
  ])('rejects %j', (args, message) => {
    expect(() => parseConsumeArgs(args)).toThrow(UsageError);
    expect(() => parseConsumeArgs(args)).toThrow(message);
  });

  it('beats three times per session timeout, at most every 3 s', () => {
    expect(heartbeatIntervalFor(30_000)).toBe(3_000);
    expect(heartbeatIntervalFor(6_000)).toBe(2_000);
  });
});

describe('toolcanon produce keying', () => {
  it('keys an event by its session_id', () => {
    expect(sessionKeyOf(Buffer.from(eventLine({ session_id: 'abc' })))).toBe('abc');
  });

  it('leaves lines without a session unkeyed', () => {
    expect(sessionKeyOf(Buffer.from('not json'))).toBeNull();
    expect(sessionKeyOf(Buffer.from('[1,2]'))).toBeNull();
    expect(sessionKeyOf(Buffer.from('{"session_id":42}'))).toBeNull();
    expect(sessionKeyOf(Buffer.from('{"session_id":""}'))).toBeNull();
  });
});
