// Benchmark (issue 34 item 4): the fleet's warehouse side. One topic of N events (the project's
// fixtures with fresh ids, as bench/kafka-e2e.ts makes them, whose parts this reuses), consumed in
// the same run by:
//   baseline     a consume-only group (kafkajs eachBatch, JSON.parse, commit per batch);
//   embedded     1 `toolcanon consume` → the embedded engine (its own data directory);
//   server       1 `toolcanon consume` → a ClickHouse server (a fresh database);
//   server x2    2 `toolcanon consume` in one group → the same server (one fresh database);
//   embedded x2  2 workers, each its own data directory (the scaling of the worker alone).
// Each run is a new consumer group reading the whole topic; times run from the first group join
// to every offset committed. Prints events/s and the ratios: server / embedded, 2 workers / 1
// (per sink), and each against the baseline. Ratios only (the machine is shared); never fails on
// time.
//
//   npx tsx bench/fleet.ts [--events N] [--partitions N] [--clickhouse URL]
//
// The server is $TOOLCANON_TEST_CLICKHOUSE_URL / --clickhouse, else the one scripts/clickhouse.sh
// serves (started if need be), as the tests find it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createKafkaClient } from '../src/kafka/client.ts';
import { createTestDatabase, dropTestDatabase, ensureClickHouseServer } from '../test/helpers/clickhouse-server.ts';
import { ensureKafka } from '../test/helpers/kafka.ts';
import { baseline, loadTemplates, produce, sumHighs, workers, type WorkerRun } from './kafka-e2e.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '200000' },
    partitions: { type: 'string', default: '6' },
    clickhouse: { type: 'string' },
    /** Extra `toolcanon consume` flags for every worker run. */
    'worker-args': { type: 'string', default: '' },
  },
});
const N = Number(values.events);
const PARTITIONS = Number(values.partitions);

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

interface Measured {
  readonly name: string;
  readonly eventsPerS: number;
  readonly seconds: number;
  readonly note: string;
}

function measured(name: string, run: WorkerRun, total: number, workerCount: number): Measured {
  const sum = (metric: string): number => run.summaries.reduce((n, s) => n + Number(s[metric] ?? 0), 0);
  const accounted = sum('rows_written') + sum('dead_letters');
  const clean = run.summaries.filter((s) => s['clean_exit'] === true).length;
  // A rebalance can hand a partition over mid-batch: its records are consumed twice, stored once.
  const note = `consumed ${fmt(sum('events_consumed'))}, rows + dead letters ${fmt(accounted)} + skipped as stored ${fmt(sum('events_already_stored'))}, clean exits ${clean}/${workerCount}, peak RSS ${fmt(run.peakRssBytes / 2 ** 20)} MiB`;
  if (workerCount === 1 && accounted !== total) log(`  WARNING ${name}: rows + dead letters ${accounted} != ${total}`);
  return { name, eventsPerS: (total * 1000) / run.wallMs, seconds: run.wallMs / 1000, note };
}

async function main(): Promise<void> {
  const kafka = await ensureKafka();
  if (!('brokers' in kafka)) throw new Error(`no Kafka broker: ${kafka.skip}`);
  const brokers = kafka.brokers;
  if (values.clickhouse !== undefined) process.env['TOOLCANON_TEST_CLICKHOUSE_URL'] = values.clickhouse;
  const server = await ensureClickHouseServer();
  if (!('url' in server)) throw new Error(`no ClickHouse server: ${server.skip}`);
  const client = createKafkaClient({ brokers, clientId: 'toolcanon-bench-fleet', log });
  const admin = await client.admin();
  const topic = `bench-fleet-${Date.now()}`;
  const dbRoot = mkdtempSync(join(tmpdir(), 'toolcanon-bench-fleet-'));
  const databases: string[] = [];
  const extra = values['worker-args'] === '' ? [] : values['worker-args'].split(' ');
  try {
    const templates = loadTemplates();
    log(`Producing ${fmt(N)} events to ${topic} (${PARTITIONS} partitions)...`);
    await admin.ensureTopic(topic, { partitions: PARTITIONS });
    const produced = await produce(client, topic, templates, undefined, N);
    const total = sumHighs(await admin.highWatermarks(topic));
    log(`  ${fmt(total)} events, ${fmt(produced.bytes / 1e6, 1)} MB`);

    log('Baseline: consume-only (eachBatch + JSON.parse, commit per batch)...');
    const base = await baseline(client, topic, total);
    const results: Measured[] = [{ name: 'baseline consume-only', eventsPerS: (base.events * 1000) / base.ms, seconds: base.ms / 1000, note: `${fmt(base.events)} records` }];

    const serverDb = async (label: string): Promise<string> => {
      const url = await createTestDatabase(`bench_fleet_${label}`);
      databases.push(url);
      return url;
    };
    log('1 worker -> embedded...');
    results.push(measured('1 worker -> embedded', await workers(brokers, admin, topic, join(dbRoot, 'e1'), 1, undefined, extra), total, 1));
    const s1 = await serverDb('one');
    log(`1 worker -> server (${s1})...`);
    results.push(measured('1 worker -> server', await workers(brokers, admin, topic, dbRoot, 1, () => ['--clickhouse', s1], extra), total, 1));
    const s2 = await serverDb('two');
    log(`2 workers -> server (${s2})...`);
    results.push(measured('2 workers -> server', await workers(brokers, admin, topic, dbRoot, 2, () => ['--clickhouse', s2], extra), total, 2));
    log('2 workers -> embedded (a data directory each)...');
    results.push(measured('2 workers -> embedded', await workers(brokers, admin, topic, join(dbRoot, 'e2'), 2, undefined, extra), total, 2));

    const rate = (name: string): number => results.find((r) => r.name === name)?.eventsPerS ?? NaN;
    const b = rate('baseline consume-only');
    const lines = [
      '',
      `fleet: ${fmt(total)} events, ${fmt(produced.bytes / 1e6, 1)} MB, ${PARTITIONS} partitions; ClickHouse server ${server.url}`,
      ...results.map((r) => `  ${r.name.padEnd(24)} ${fmt(r.eventsPerS).padStart(9)} events/s  (${fmt(r.seconds, 2)} s)  ${r.name === 'baseline consume-only' ? '' : `x${fmt(r.eventsPerS / b, 3)} of baseline; `}${r.note}`),
      `  ratio server / embedded (1 worker)      ${fmt(rate('1 worker -> server') / rate('1 worker -> embedded'), 3)}`,
      `  scaling 2 workers / 1 (server)          ${fmt(rate('2 workers -> server') / rate('1 worker -> server'), 3)}`,
      `  scaling 2 workers / 1 (embedded)        ${fmt(rate('2 workers -> embedded') / rate('1 worker -> embedded'), 3)}`,
      `  cores: ${(await import('node:os')).availableParallelism()}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await admin.deleteTopics([topic, `${topic}.dlq`]).catch(() => undefined);
    await admin.disconnect();
    for (const url of databases) await dropTestDatabase(url);
    rmSync(dbRoot, { recursive: true, force: true });
  }
}

await main();
