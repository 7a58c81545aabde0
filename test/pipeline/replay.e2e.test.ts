// End to end: replay the shipped fixtures into a real ClickHouse, on both engines with the same
// assertions (test/helpers/engines.ts): the embedded engine (chdb) and a ClickHouse server.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayPaths, type PipelineCounts } from '../../src/pipeline/batch-writer.ts';
import { ANALYTICS_TABLE_NAMES, type ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { listInputFiles } from '../../src/source/file.ts';
import { countOf, makeTempDir } from '../helpers/db.ts';
import { forEachEngine } from '../helpers/engines.ts';
import { eventLine } from '../helpers/events.ts';

const FIXTURES = new URL('../../fixtures/', import.meta.url).pathname;

/** Non-blank lines of every fixture file: the events a replay must account for. */
function countFixtureEvents(): number {
  let n = 0;
  for (const f of listInputFiles([FIXTURES])) {
    const data = readFileSync(f.path);
    for (const line of data.toString('latin1').split('\n')) if (line.trim() !== '') n++;
  }
  return n;
}

await forEachEngine('test/pipeline/replay.e2e.test.ts', (engine) => describe('replay into ClickHouse', () => {
  let sink: ClickHouseSink;
  const tmp = makeTempDir('replay');
  const dir = tmp.dir;
  let first: PipelineCounts;
  /** One more event, replayed after the fixtures: raw_input kept byte for byte (a test below). */
  let lossless: PipelineCounts;
  const LOSSLESS_RAW = '{"z":1,"file_path":"caf\\u00e9.rs","offset":18446744073709551617,"limit":-0,"a":[1e400]}';

  // Everything the tests read is written here, so that none depends on another's writes (they
  // pass in any order: vitest --sequence.shuffle.tests); the tests that replay again check
  // that doing so changes nothing.
  beforeAll(async () => {
    sink = await engine.openSink('replay');
    first = await replayPaths([FIXTURES], sink);
    const file = join(dir, 'lossless.jsonl');
    writeFileSync(file, `${eventLine({ call_id: 'lossless-1' }, LOSSLESS_RAW)}\n`);
    lossless = await replayPaths([file], sink);
  });
  afterAll(() => tmp.cleanup());

  it('accounts for every event: events in = tool_calls rows + usage rows + mcp_events rows + dead letters', async () => {
    const expectedEvents = countFixtureEvents();
    expect(first.eventsRead).toBe(expectedEvents);
    expect(first.rowsWritten + first.deadLetters).toBe(expectedEvents);
    const toolCalls = await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL');
    const usage = await countOf(sink, "SELECT count() AS n FROM token_usage FINAL WHERE source = 'observed'");
    const dead = await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL');
    const mcp = await countOf(sink, 'SELECT count() AS n FROM mcp_events FINAL');
    expect(toolCalls).toBe(first.toolCallRows + lossless.toolCallRows);
    expect(usage).toBe(first.usageRows);
    expect(dead).toBe(first.deadLetters);
    expect(mcp).toBe(first.mcpEventRows);
    expect(toolCalls + usage + mcp + dead).toBe(expectedEvents + lossless.eventsRead);
    expect(mcp).toBeGreaterThan(50);
    expect(toolCalls).toBeGreaterThan(100);
    expect(usage).toBeGreaterThan(0);
  });

  it('stores each bad fixture as a dead letter with its reason and file:line source', async () => {
    const byReason = await sink.queryRows<{ reason: string; n: string }>('SELECT reason, count() AS n FROM dead_letters FINAL GROUP BY reason ORDER BY reason');
    expect(Object.fromEntries(byReason.map((r) => [r.reason, Number(r.n)]))).toEqual({
      invalid_json: 5, // fixtures/bad/secrets.jsonl holds one (a broken line with a key, stored redacted)
      invalid_utf8: 2,
      oversized: 1,
      schema: 17,
      too_deep: 1,
      unknown_harness: 2,
    });
    const [utf8] = await sink.queryRows<{ raw_hex: string; source: string }>(
      "SELECT hex(raw) AS raw_hex, source FROM dead_letters FINAL WHERE reason = 'invalid_utf8' ORDER BY source LIMIT 1",
    );
    const file = join(FIXTURES, 'bad/invalid-utf8.jsonl');
    const firstLine = readFileSync(file).subarray(0, readFileSync(file).indexOf(0x0a));
    expect(utf8?.raw_hex).toBe(firstLine.toString('hex').toUpperCase());
    expect(utf8?.source).toBe(`${file}:1`);
    const oversized = await countOf(sink, "SELECT length(raw) AS n FROM dead_letters FINAL WHERE reason = 'oversized'");
    expect(oversized).toBeGreaterThan(10 * 1024 * 1024);
  });

  it('keeps bad MCP names as flagged rows', async () => {
    const flagged = await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE has(flags, 'bad_mcp_name') AND namespace = 'mcp' AND mcp_server = ''");
    expect(flagged).toBe(first.flaggedRows.bad_mcp_name);
    expect(flagged).toBeGreaterThanOrEqual(5);
  });

  it('a second replay of the same files changes no count', async () => {
    const second = await replayPaths([FIXTURES], sink);
    expect(second.eventsRead).toBe(first.eventsRead);
    expect(await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(first.toolCallRows + lossless.toolCallRows);
    expect(await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL')).toBe(first.deadLetters);
    expect(await countOf(sink, 'SELECT uniqExact(event_id) AS n FROM tool_calls')).toBe(first.toolCallRows + lossless.toolCallRows);
    expect(await countOf(sink, 'SELECT count() AS n FROM token_usage FINAL')).toBe(first.usageRows + first.estimateRows + lossless.estimateRows);
    expect(await countOf(sink, 'SELECT count() AS n FROM threshold_breaches FINAL')).toBe(first.breaches + lossless.breaches);
    // Nothing was written twice: plain SQL (no FINAL) counts what FINAL counts, in every table.
    for (const t of ANALYTICS_TABLE_NAMES) {
      const plain = await countOf(sink, `SELECT count() AS n FROM ${t}`);
      expect({ table: t, plain }).toEqual({ table: t, plain: await countOf(sink, `SELECT count() AS n FROM ${t} FINAL`) });
    }
  });

  it('small batches written while the next is decoded give the same tables', async () => {
    const snapshot = async (): Promise<unknown[]> =>
      sink.queryRows('SELECT (SELECT count() FROM tool_calls FINAL), (SELECT count() FROM dead_letters FINAL), (SELECT count() FROM token_usage FINAL), (SELECT groupArraySorted(100)(breach_id) FROM threshold_breaches FINAL)');
    const before = await snapshot();
    const small = await replayPaths([FIXTURES], sink, { batch: { batchMaxRows: 7, batchMaxBytes: 1 << 30 } });
    expect(small.rowsWritten + small.deadLetters).toBe(small.eventsRead);
    // Every event was applied to the accounting by the first replay: none is applied again.
    expect(small.breaches).toBe(0);
    expect(small.estimateRows).toBe(0);
    expect(small.duplicatesSkipped).toBe(first.estimateRows + first.usageRows);
    expect(await snapshot()).toEqual(before);
  });

  it('stores raw_input byte for byte: big integers, -0, unicode escapes, key order', async () => {
    const raw = LOSSLESS_RAW;
    expect(lossless.rowsWritten).toBe(1);
    const [stored] = await sink.queryRows<{ raw_input: string; canonical_input: string; flags: string[] }>(
      "SELECT raw_input, canonical_input, flags FROM tool_calls FINAL WHERE call_id = 'lossless-1'",
    );
    expect(stored?.raw_input).toBe(raw);
    expect(stored?.canonical_input).toBe('{"path":"caf\\u00e9.rs","limit":-0}');
    expect(stored?.flags).toEqual(['canonical_out_of_range']);
  });

  it('stores the projection columns, the meta version and the catalogue attributes', async () => {
    const rows = await sink.queryRows<Record<string, unknown>>(
      "SELECT tool_name, kind, read_only, meta_version, path, `offset`, `limit` FROM tool_calls FINAL WHERE call_id = 'lossless-1'",
    );
    expect(rows).toEqual([{ tool_name: 'Read', kind: 'read', read_only: true, meta_version: 1, path: 'café.rs', offset: null, limit: '0' }]);
  });
}));
