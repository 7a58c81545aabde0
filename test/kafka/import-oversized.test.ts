// import --to-kafka into a topic that cannot take every event (issue 16): the records too large
// for the topic's max.message.bytes go to <topic>.dlq as `oversized` with their file:line and the
// importing machine in headers, the rest are published; read = published + dead-lettered, and
// the import state still advances (a re-run publishes nothing).
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { makeTempDir } from '../helpers/db.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import { writeClaudeTranscript } from '../importers/generate-claude-code.ts';
import { BIN, DLQ_TOPIC_HEADERS, readTopic, releaseKafkaTest, ROOT, testClient, uniqueName } from '../helpers/worker.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/kafka/import-oversized.test.ts');

function importToKafka(args: readonly string[]): Promise<{ code: number; stderr: string; metrics: Record<string, number> }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, 'import', 'claude-code', ...args, '--format', 'json'], { cwd: ROOT, timeout: 120_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      const metrics: Record<string, number> = {};
      for (const l of stdout.trim().split('\n')) {
        if (!l.startsWith('{')) continue;
        const row = JSON.parse(l) as { metric: string; value: number };
        metrics[row.metric] = row.value;
      }
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stderr, metrics });
    });
  });
}

describe.skipIf(brokers === null)('import --to-kafka: events the topic cannot take', () => {
  const topic = uniqueName('tc-import-big');
  const tmp = makeTempDir('import-oversized');
  const logs = join(tmp.dir, 'projects', 'p');
  const file = join(logs, 'big.jsonl');
  let client: KafkaClient;
  let admin: KafkaAdmin;
  // Turns of the generated transcript: a response (usage event, small) and a tool call whose
  // output is 6,000 bytes (its event line is over the topic's 4,096-byte limit) each, but every
  // 50th call is unanswered (no output: a small line).
  let turns = 0;

  beforeAll(async () => {
    mkdirSync(logs, { recursive: true });
    turns = writeClaudeTranscript(file, 60_000, 6000).turns;
    client = testClient(brokers ?? [], 'import-oversized-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: 2, configs: { 'max.message.bytes': '4096' } });
  }, 120_000);

  afterAll(() => releaseKafkaTest({ sink: undefined, admin, topic, tmp }));

  const args = (): string[] => [join(tmp.dir, 'projects'), '--to-kafka', '--brokers', (brokers ?? []).join(','), '--topic', topic, '--host', 'big-box', '--device-id', 'dev-big', '--state-dir', join(tmp.dir, 'state')];

  it('publishes what fits, dead-letters what does not, loses nothing, and records the file as read', async () => {
    const answered = turns - Math.floor(turns / 50);
    expect(answered).toBeGreaterThan(3);
    const r = await importToKafka(args());
    expect(r.code, r.stderr).toBe(0);
    expect(r.metrics['events_emitted']).toBe(turns * 2);
    expect(r.metrics['dead_lettered.oversized']).toBe(answered);
    expect(r.metrics['records_published']).toBe(turns * 2 - answered);
    const highs = [...(await admin.highWatermarks(topic)).values()].reduce((n, v) => n + Number(v), 0);
    expect(highs).toBe(turns * 2 - answered);
    const dlq = await readTopic(client, `${topic}.dlq`, answered);
    expect(dlq).toHaveLength(answered);
    for (const d of dlq) {
      expect(String(d.headers[DLQ_TOPIC_HEADERS.reason])).toBe('oversized');
      expect(String(d.headers[DLQ_TOPIC_HEADERS.originSource])).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:[0-9]+$`));
      // The record kept is the event as published would have been: with the machine in it.
      expect(d.value?.toString('utf8')).toMatch(/^\{"host":"big-box","device_id":"dev-big",/);
    }
    // The file is recorded as read: a re-run publishes nothing and dead-letters nothing (one
    // ordered scenario, so no test depends on another having run first).
    const again = await importToKafka(args());
    expect(again.code, again.stderr).toBe(0);
    expect(again.metrics['files_unchanged']).toBe(1);
    expect(again.metrics['records_published']).toBe(0);
    expect(again.metrics['dead_lettered.oversized']).toBe(0);
  });
});
