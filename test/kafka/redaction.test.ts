// Secret redaction on the Kafka paths (issue 10): consume stores redacted rows and dead letters
// and publishes redacted records to the dead-letter topic; produce sends an oversized line
// to the dead-letter topic redacted; --no-redact keeps them verbatim.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { makeTempDir } from '../helpers/db.ts';
import { eventLine } from '../helpers/events.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import { readTopic, releaseKafkaTest, runCli, sendAll, startInProcessWorker, testClient, uniqueName, waitForAllCommitted } from '../helpers/worker.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/kafka/redaction.test.ts');

const SECRET = `ghp_${'Kq7'.repeat(12)}`;
const PASSWORD = 'Pa55-w0rd-kafka';
const text = (v: Buffer | string | null | undefined): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : v.toString('latin1'));

describe.skipIf(brokers === null)('consume redacts rows, dead letters and the dead-letter topic', () => {
  const topic = uniqueName('tc-redact');
  const tmp = makeTempDir('redact-kafka');
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let sink: ClickHouseSink;
  const good = [
    eventLine({ session_id: 'rk', call_id: 'rk-1', tool: 'Bash', input: { command: `GH_TOKEN=${SECRET} gh pr list` } }),
    eventLine({ session_id: 'rk', call_id: 'rk-2', tool: 'Bash', input: { command: `psql postgres://app:${PASSWORD}@db/prod` } }),
    eventLine({ session_id: 'rk', call_id: 'rk-3', tool: 'Bash', input: { command: 'ls -la' } }),
    // Issue 30: a token hidden by a JSON escape (\u0067 is g) is the same token.
    eventLine({ session_id: 'rk', call_id: 'rk-4', tool: 'Bash', input: { command: `echo ${SECRET}` } }).replace(SECRET, `\\u0067${SECRET.slice(1)}`),
  ];
  const poison = [Buffer.from(`{"broken": "export GITHUB_TOKEN=${SECRET}`), Buffer.from(`{"broken": "echo \\u0067${SECRET.slice(1)}`), Buffer.concat([Buffer.from(`{"bad utf8 \xff": "${SECRET}`, 'latin1'), Buffer.from([0xc3, 0x28])])];

  beforeAll(async () => {
    client = testClient(brokers ?? [], 'redaction-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: 1 });
    await sendAll(client, topic, [...good.map((l) => ({ key: 'rk', value: Buffer.from(l) })), ...poison.map((value) => ({ key: 'rk', value }))]);
    sink = await ClickHouseSink.open({ db: join(tmp.dir, 'db') });
    const group = uniqueName('g-redact');
    const { worker } = await startInProcessWorker(brokers ?? [], topic, group, sink);
    await waitForAllCommitted(admin, group, topic);
    await worker.stop('test done');
  }, 180_000);
  afterAll(() => releaseKafkaTest({ sink, admin, topic, tmp }));

  it('stores the calls redacted, flagged and counted', async () => {
    const rows = await sink.queryRows<{ call_id: string; command: string; redactions: number }>('SELECT call_id, command, redactions FROM tool_calls FINAL ORDER BY call_id');
    expect(rows.map((r) => r.redactions)).toEqual([1, 1, 0, 1]);
    expect(rows[3]?.command).toMatch(/^echo \[REDACTED:github_token:[0-9a-f]{4}\]$/);
    expect(rows[0]?.command).toMatch(/^GH_TOKEN=\[REDACTED:github_token:[0-9a-f]{4}\] gh pr list$/);
    expect(rows[1]?.command).toMatch(/^psql postgres:\/\/app:\[REDACTED:url_password:[0-9a-f]{4}\]@db\/prod$/);
    expect(rows[2]?.command).toBe('ls -la');
  });

  it('stores the poison records redacted, their other bytes as they were', async () => {
    const dead = await sink.queryRows<{ raw_hex: string; redactions: number }>('SELECT hex(raw) AS raw_hex, redactions FROM dead_letters FINAL ORDER BY source');
    expect(dead).toHaveLength(3);
    for (const d of dead) {
      const raw = Buffer.from(d.raw_hex, 'hex');
      expect(text(raw)).not.toContain(SECRET.slice(1));
      expect(d.redactions).toBeGreaterThan(0);
    }
    const utf8 = dead.map((d) => Buffer.from(d.raw_hex, 'hex')).find((b) => b.includes(0xff));
    expect(utf8?.subarray(-2).equals(Buffer.from([0xc3, 0x28]))).toBe(true);
  });

  it('publishes the poison records to the dead-letter topic redacted', async () => {
    const dlq = await readTopic(client, `${topic}.dlq`, 3);
    expect(dlq).toHaveLength(3);
    for (const r of dlq) {
      expect(text(r.value)).not.toContain(SECRET.slice(1));
      expect(text(r.value)).toContain('[REDACTED:github_token:');
    }
  });
});

describe.skipIf(brokers === null)('produce sends an oversized line to the dead-letter topic redacted (verbatim with --no-redact)', () => {
  const tmp = makeTempDir('redact-produce');
  const topics: string[] = [];
  let client: KafkaClient;
  let admin: KafkaAdmin;
  beforeAll(async () => {
    client = testClient(brokers ?? [], 'redaction-produce-test');
    admin = await client.admin();
  });
  afterAll(async () => {
    await admin?.deleteTopics(topics).catch(() => undefined);
    await admin?.disconnect();
    tmp.cleanup();
  });

  async function produceBig(extra: readonly string[]): Promise<string> {
    const topic = uniqueName('tc-redact-produce');
    topics.push(topic, `${topic}.dlq`);
    const dir = join(tmp.dir, topic);
    mkdirSync(dir);
    // The secret is at the start of the line, so it is in what the dead-letter topic keeps.
    const line = eventLine({ session_id: 'rp', call_id: 'rp-big', input: { command: `curl -H "Authorization: Bearer ${SECRET}"` }, output: 'x'.repeat(60_000) });
    writeFileSync(join(dir, 'a.jsonl'), `${eventLine({ session_id: 'rp', call_id: 'rp-small' })}\n${line}\n`);
    const run = await runCli(['produce', dir, '--brokers', (brokers ?? []).join(','), '--topic', topic, '--partitions', '1', '--topic-max-message-bytes', '20000', ...extra]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('1 sent to the DLQ topic');
    const [r] = await readTopic(client, `${topic}.dlq`, 1);
    return text(r?.value);
  }

  it('redacts by default', async () => {
    const value = await produceBig([]);
    expect(value).not.toContain(SECRET);
    expect(value).toContain('Authorization: Bearer [REDACTED:github_token:');
  }, 120_000);

  it('keeps the secret with --no-redact', async () => {
    expect(await produceBig(['--no-redact'])).toContain(SECRET);
  }, 120_000);
});
