// Issue 3, test 1: the fixtures published to a topic and consumed by the stream worker end in
// the analytics tables exactly as `replay` of the same files puts them there (every table, every
// row, every count), apart from the columns that record where and when a row was ingested. The
// worker writes to each engine in turn (test/helpers/engines.ts: embedded chdb, then a ClickHouse
// server), with the same assertions; the reference is one replay into an embedded data directory.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { listInputFiles } from '../../src/source/file.ts';
import type { WorkerSummary } from '../../src/worker/worker.ts';
import { countOf, makeTempDir } from '../helpers/db.ts';
import { forEachEngine } from '../helpers/engines.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import {
  DLQ_TOPIC_HEADERS,
  dumpHere,
  dumpInChild,
  offsetOf,
  readTopic,
  releaseKafkaTest,
  ROOT,
  runCli,
  startInProcessWorker,
  type TableDump,
  testClient,
  uniqueName,
  waitForAllCommitted,
} from '../helpers/worker.ts';

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/kafka/consume-replay.test.ts');
const FIXTURES = join(ROOT, 'fixtures');

/** Non-blank lines of every fixture file: the events both paths must account for. */
function fixtureEventCount(): number {
  let n = 0;
  for (const f of listInputFiles([FIXTURES])) for (const line of readFileSync(f.path).toString('latin1').split('\n')) if (line.trim() !== '') n++;
  return n;
}

/** The replay of the fixtures into an embedded data directory, dumped: what each engine's consumer must hold. */
let reference: Promise<TableDump> | undefined;
const referenceTmp = makeTempDir('consume-replay-reference');
afterAll(() => referenceTmp.cleanup());
function replayReference(): Promise<TableDump> {
  reference ??= (async () => {
    const replayDb = join(referenceTmp.dir, 'replay-db');
    const replay = await runCli(['replay', FIXTURES, '--db', replayDb, '--format', 'json']);
    if (replay.code !== 0) throw new Error(`replay failed (${replay.code}): ${replay.stderr}`);
    return dumpInChild(replayDb);
  })();
  return reference;
}

await forEachEngine('test/kafka/consume-replay.test.ts', (engine) => describe.skipIf(brokers === null)('toolcanon consume writes what replay writes', () => {
  const topic = uniqueName('tc-replay');
  const group = uniqueName('g-replay');
  const tmp = makeTempDir('consume-replay');
  let client: KafkaClient;
  let admin: KafkaAdmin;
  let sink: ClickHouseSink;
  let summary: WorkerSummary;
  let fromKafka: TableDump;
  let fromReplay: TableDump;
  let published: Record<string, number>;
  const events = fixtureEventCount();

  beforeAll(async () => {
    client = testClient(brokers ?? [], 'consume-replay-test');
    admin = await client.admin();
    // The fixtures include a 10 MiB event (dead-lettered as oversized): the topic must hold it.
    await admin.ensureTopic(topic, { partitions: 3, configs: { 'max.message.bytes': String(16 * 1024 * 1024) } });
    const produce = await runCli(['produce', FIXTURES, '--brokers', (brokers ?? []).join(','), '--topic', topic, '--format', 'json']);
    expect(produce.code, produce.stderr).toBe(0);
    published = Object.fromEntries(produce.stdout.trim().split('\n').map((l) => JSON.parse(l) as { metric: string; value: number }).map((r) => [r.metric, r.value]));

    fromReplay = await replayReference();

    sink = await engine.openSink('kafka');
    const { worker } = await startInProcessWorker(brokers ?? [], topic, group, sink, ['--batch-max-rows', '50']);
    await waitForAllCommitted(admin, group, topic);
    summary = await worker.stop('test done');
    fromKafka = await dumpHere(sink);
  }, 300_000);

  afterAll(() => releaseKafkaTest({ sink, admin, topic, tmp }));

  it('publishes one keyed record per fixture event', () => {
    expect(published['records_published']).toBe(events);
    expect(published['dead_lettered_oversized']).toBe(0);
    expect(published['records_read']).toBe(events);
  });

  it('consumes every record once and accounts for it: events in = rows + dead letters', () => {
    expect(summary.clean).toBe(true);
    expect(summary.stats.eventsConsumed).toBe(events);
    expect(summary.stats.eventsCommitted).toBe(events);
    expect(summary.counts.rowsWritten + summary.counts.deadLetters).toBe(events);
    expect(summary.counts.deadLetters).toBeGreaterThan(10);
    expect(summary.counts.toolCallRows).toBeGreaterThan(200);
  });

  it.each(['tool_calls', 'dead_letters', 'token_usage', 'threshold_breaches', 'mcp_events', 'mcp_server_state', 'mcp_tool_registrations', 'discovery_events'])('table %s holds the same rows as after replay', (table) => {
    const kafkaRows = fromKafka.get(table) ?? [];
    const replayRows = fromReplay.get(table) ?? [];
    expect(kafkaRows.length).toBe(replayRows.length);
    expect(kafkaRows).toEqual(replayRows);
    if (table !== 'threshold_breaches') expect(kafkaRows.length).toBeGreaterThan(0);
    // The lifecycle fixture's two stale disconnects (one arriving after later events) are
    // judged the same whatever batches of 50 the worker cut the partitions into.
    if (table === 'mcp_server_state') expect(kafkaRows.filter((r) => r.includes('"stale_disconnect"')).length).toBe(2);
  });

  it('records each row\'s Kafka origin as topic/partition/offset, one row per record', async () => {
    // Tool calls, MCP lifecycle events and dead letters carry it in `source`, observed usage rows in `origin`.
    const sources = await sink.queryRows<{ source: string }>(
      "SELECT source FROM tool_calls FINAL UNION ALL SELECT source FROM mcp_events FINAL UNION ALL SELECT source FROM dead_letters FINAL UNION ALL SELECT o AS source FROM (SELECT origin AS o FROM token_usage FINAL WHERE token_usage.source = 'observed')",
    );
    const highs = await admin.highWatermarks(topic);
    const expected = [...highs].flatMap(([p, high]) => Array.from({ length: Number(high) }, (_, o) => `${topic}/${p}/${o}`)).sort();
    expect(sources.map((s) => s.source).sort()).toEqual(expected);
    for (const s of sources.slice(0, 5)) expect(offsetOf(s.source).partition).toBeLessThan(3);
    expect(await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(summary.counts.toolCallRows);
  });

  it('publishes every dead letter to the dead-letter topic with its reason', async () => {
    const dlq = await readTopic(client, `${topic}.dlq`, summary.counts.deadLetters);
    expect(dlq).toHaveLength(summary.counts.deadLetters);
    const reasons: Record<string, number> = {};
    for (const r of dlq) {
      const reason = String(r.headers[DLQ_TOPIC_HEADERS.reason]);
      reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
    expect(reasons).toEqual(summary.counts.deadLettersByReason);
  });
}));
