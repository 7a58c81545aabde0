// The sink's lookups of stored rows send their keys as array parameters. The engine refuses an
// array of over 1,000,000 elements (TOO_LARGE_ARRAY_SIZE): a derivation over a server with a
// million stored events once failed so (bench/derivation.ts). The embedded engine now gets them
// in parts of at most 100,000 values too. Here, on the embedded engine: the limit itself, and
// 100,001 dead letters (two parts) written, then written again: every one is found stored
// (nothing written twice, plain count() = FINAL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadLetter } from '../../src/decode/event.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { openTempSink } from '../helpers/db.ts';

const N = 100_001;

describe('lookups of more stored rows than one array parameter holds', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('params-in-parts'));
  });
  afterAll(async () => cleanup());

  it('the engine refuses an array parameter of 1,000,001 values (what the parts stay under)', async () => {
    await expect(sink.queryRows({ query: 'SELECT length({a:Array(String)}) AS n', query_params: { a: new Array<string>(1_000_001).fill('x') } })).rejects.toThrow(/too large|TOO_LARGE_ARRAY_SIZE/i);
    const [ok] = await sink.queryRows<{ n: string }>({ query: 'SELECT length({a:Array(String)}) AS n', query_params: { a: new Array<string>(100_000).fill('x') } });
    expect(Number(ok?.n)).toBe(100_000);
  }, 120_000);

  it(`${N} dead letters written twice are stored once, in parts`, async () => {
    const rows = Array.from({ length: N }, (_, i) => deadLetter(Buffer.from(`{"n":${i}`), 'invalid_json', 'cut short', `bench.jsonl:${i + 1}`, '2026-12-07 00:00:00.000'));
    await sink.writeDeadLetters(rows);
    await sink.writeDeadLetters(rows);
    const [c] = await sink.queryRows<{ plain: string; final: string }>('SELECT (SELECT count() FROM dead_letters SETTINGS final = 0) AS plain, (SELECT count() FROM dead_letters FINAL) AS final');
    expect(Number(c?.final)).toBe(N);
    expect(Number(c?.plain)).toBe(N);
  }, 300_000);
});
