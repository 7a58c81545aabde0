// What leaving out stored rows costs a tool_calls insert (issue 29 item 1): the same Native
// blocks of N distinct tool calls inserted into a fresh embedded database (a) as before, with
// `INSERT … FROM INFILE` (the baseline), (b) through `INSERT … SELECT … FROM file()` with the
// anti-join on what is stored (the sink's path now), into an empty table, and (c) the same blocks
// again, every row already stored (a second replay). Alternating rounds, medians; ratios to (a).
// Usage: npx tsx bench/insert-unless-stored.ts [N=100000] [rounds=5]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeEvent, DEFAULT_LIMITS, nowClickHouseTime } from '../src/decode/event.ts';
import { ClickHouseSink, TOOL_CALL_COLUMNS } from '../src/sink/clickhouse.ts';
import { multipliedEvents } from './fixtures.ts';

const N = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const BATCH = 20_000;

const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-bench-unless-'));
try {
  const sink = await ClickHouseSink.open({ db: join(tmp, 'db') });
  const ingestedAt = nowClickHouseTime();
  const lines = multipliedEvents(N);
  type Parts = { rows: number; parts(): Buffer[] };
  const batches: Parts[] = [];
  let batch = sink.toolCallBatch(16 << 20);
  for (let i = 0; i < lines.length; i++) {
    const o = decodeEvent(Buffer.from(lines[i] as string), `bench:${i + 1}`, ingestedAt, DEFAULT_LIMITS);
    if (o.kind !== 'row') continue;
    batch.add(o.row);
    if (batch.rows >= BATCH) {
      batches.push(batch as unknown as Parts);
      batch = sink.toolCallBatch(16 << 20);
    }
  }
  if (batch.rows > 0) batches.push(batch as unknown as Parts);
  const rows = batches.reduce((n, b) => n + b.rows, 0);
  const names = TOOL_CALL_COLUMNS.map((c) => `\`${c}\``).join(', ');

  const baseline = async (): Promise<number> => {
    await sink.client.command({ query: 'TRUNCATE TABLE tool_calls' });
    const t = performance.now();
    for (const [i, b] of batches.entries()) {
      const file = join(tmp, `b${i}.native`);
      writeFileSync(file, Buffer.concat(b.parts()));
      await sink.client.command({ query: `INSERT INTO tool_calls (${names}) FROM INFILE '${file}' SETTINGS optimize_on_insert = 0, max_partitions_per_insert_block = 0 FORMAT Native` });
      rmSync(file);
    }
    return (performance.now() - t) / 1000;
  };
  const unless = async (truncate: boolean): Promise<number> => {
    if (truncate) await sink.client.command({ query: 'TRUNCATE TABLE tool_calls' });
    const t = performance.now();
    for (const b of batches) await sink.writeToolCalls(b as never);
    return (performance.now() - t) / 1000;
  };

  // Variants of (b), to see where its time goes: without the engine's dedup on insert, without the join.
  const variant = async (select: (file: string) => string, optimize: 0 | 1): Promise<number> => {
    await sink.client.command({ query: 'TRUNCATE TABLE tool_calls' });
    const t = performance.now();
    for (const [i, b] of batches.entries()) {
      const file = join(tmp, `v${i}.native`);
      writeFileSync(file, Buffer.concat(b.parts()));
      await sink.client.command({ query: `INSERT INTO tool_calls (${names}) ${select(file)} SETTINGS optimize_on_insert = ${optimize}, max_partitions_per_insert_block = 0, join_use_nulls = 0` });
      rmSync(file);
    }
    return (performance.now() - t) / 1000;
  };
  const plainSelect = (file: string): string => `SELECT ${names} FROM file('${file}', Native)`;
  const d: number[] = [];
  const e: number[] = [];
  const a: number[] = [];
  const b: number[] = [];
  const c: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    a.push(await baseline());
    b.push(await unless(true));
    c.push(await unless(false));
    d.push(await variant(plainSelect, 0));
    e.push(await variant(plainSelect, 1));
  }
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
  const count = Number((await sink.queryRows<{ n: string }>('SELECT count() AS n FROM tool_calls'))[0]?.n);
  console.log(`tool_calls rows: ${rows} in ${batches.length} insert(s); stored after the last round (plain count): ${count}`);
  console.log(`(a) INSERT FROM INFILE (baseline)         median ${median(a).toFixed(3)} s  1.00`);
  console.log(`(b) INSERT SELECT unless stored, empty    median ${median(b).toFixed(3)} s  ${(median(b) / median(a)).toFixed(2)}x`);
  console.log(`(c) the same rows again (all stored)      median ${median(c).toFixed(3)} s  ${(median(c) / median(a)).toFixed(2)}x`);
  console.log(`(d) INSERT SELECT FROM file(), no join     median ${median(d).toFixed(3)} s  ${(median(d) / median(a)).toFixed(2)}x`);
  console.log(`(e) (d) with optimize_on_insert = 1       median ${median(e).toFixed(3)} s  ${(median(e) / median(a)).toFixed(2)}x`);
  await sink.close();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
