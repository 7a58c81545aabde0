// The store in memory (src/sink/memory.ts) against the embedded engine: the shipped fixtures
// replayed into each (one batch, then in batches of 7 rows, so the derivations read back what
// earlier batches stored), every analytics table read as FINAL reads it, equal row for row, the
// times of ingestion and computation left out. So the pipeline's and the derivations' unit tests
// may run on the memory store and mean what they would on the engine.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import type { ToolCallRow } from '../../src/model/records.ts';
import type { ToolCallBatch } from '../../src/model/sink.ts';
import { MemorySink } from '../../src/sink/memory.ts';
import { TABLES, type AnalyticsTable } from '../../src/tables/index.ts';
import { openTempSink } from '../helpers/db.ts';

const FIXTURES = join(import.meta.dirname, '../../fixtures');
/** Columns that say when a row was ingested or computed (they differ between two runs by design). */
const WHEN = ['ingested_at', 'computed_at'];

/** A value as ClickHouse's JSON output writes it (64-bit integers quoted). */
function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return v.map(plain);
  return v;
}
function normalise(row: Record<string, unknown>): string {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(row).sort()) if (!WHEN.includes(k)) out[k] = plain(row[k]);
  return JSON.stringify(out);
}

async function engineTable(sink: ClickHouseSink, table: AnalyticsTable): Promise<string[]> {
  const t = TABLES.find((x) => x.name === table);
  const computed = Object.keys(t?.computed ?? {});
  // The engine gives a row's raw bytes as text; both sides compare them as base64.
  const select = table === 'dead_letters' ? `* EXCEPT (raw), base64Encode(raw) AS raw` : computed.length ? `* EXCEPT (${computed.join(', ')})` : '*';
  const rows = await sink.queryRows<Record<string, unknown>>(`SELECT ${select} FROM ${table} FINAL SETTINGS output_format_json_quote_64bit_integers = 1`);
  return rows.map(normalise).sort();
}

describe.each([
  ['one batch', undefined],
  ['batches of 7 rows', { batchMaxRows: 7, batchMaxBytes: 1 << 30 }],
] as const)('the memory store = the embedded engine, %s', (_label, batch) => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  const memory = new MemorySink();
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('memory-parity'));
    const a = await replayPaths([FIXTURES], sink, batch ? { batch } : {});
    const b = await replayPaths([FIXTURES], memory, batch ? { batch } : {});
    expect(b.eventsRead).toBe(a.eventsRead);
    expect(a.eventsRead).toBeGreaterThan(300);
  }, 180_000);
  afterAll(async () => cleanup());

  it.each(TABLES.map((t) => t.name))('%s', async (table) => {
    const want = await engineTable(sink, table);
    const got = memory.final(table).map(normalise).sort();
    if (table !== 'mcp_server_state') expect(want.length).toBeGreaterThan(0);
    expect(got).toEqual(want);
  });
});

describe('the memory store reads back as FINAL does', () => {
  it('keeps the finished copy of a tool call over a pending copy written after it, and the later of two finished copies', async () => {
    const memory = new MemorySink();
    await replayPaths([FIXTURES], memory);
    const finished = memory.final('tool_calls').find((r) => r['status'] === 'ok') as ToolCallRow | undefined;
    expect(finished).toBeDefined();
    if (finished === undefined) return;
    const key = (r: Record<string, unknown>): string => `${String(r['harness'])}/${String(r['session_id'])}/${String(r['event_id'])}`;
    const copy = (over: Partial<ToolCallRow>): ToolCallBatch => {
      const batch = memory.toolCallBatch(0);
      batch.add({ ...finished, ...over });
      return batch;
    };
    await memory.writeToolCalls(copy({ status: 'pending', ingested_at: '2099-01-01 00:00:00.000' }));
    expect(memory.final('tool_calls').find((r) => key(r) === key(finished))?.['status']).toBe('ok');
    await memory.writeToolCalls(copy({ error: 'second', ingested_at: '2099-01-02 00:00:00.000' }));
    expect(memory.final('tool_calls').find((r) => key(r) === key(finished))?.['error']).toBe('second');
    const ids = memory.final('tool_calls').map(key);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
