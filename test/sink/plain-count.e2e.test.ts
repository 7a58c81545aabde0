// Issue 29 item 1: plain SQL without FINAL counts each event once. A second replay, an import read
// again, a copy of a call that is no more complete than the stored one: nothing is written twice,
// so `SELECT count() FROM tool_calls` (a user's own SQL, a dashboard on a server) is the number of
// distinct events. A more complete copy (finished after pending) still replaces the stored one.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodeImporter } from '../../src/importers/claude-code/index.ts';
import { runImport } from '../../src/pipeline/import.ts';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import { ANALYTICS_TABLE_NAMES, ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { createTestDatabase, dropTestDatabase, ensureClickHouseServer, requireClickHouseServerOrSkip, serverQuery } from '../helpers/clickhouse-server.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const FIXTURES = join(ROOT, 'fixtures');
/** Small batches: copies of one event meet across batches as well as within one. */
const BATCH = { batchMaxRows: 40, batchMaxBytes: 1 << 20 };
const CLAUDE_LOGS = join(ROOT, 'test/importers/fixtures-claude-code');

/** Per table: rows as stored (plain SQL) and rows as FINAL reads them. */
async function plainAndFinal(sink: ClickHouseSink): Promise<Record<string, { plain: number; final: number }>> {
  const out: Record<string, { plain: number; final: number }> = {};
  for (const t of ANALYTICS_TABLE_NAMES) {
    out[t] = { plain: await countOf(sink, `SELECT count() AS n FROM ${t}`), final: await countOf(sink, `SELECT count() AS n FROM ${t} FINAL`) };
  }
  return out;
}

function call(id: string, status: 'pending' | 'ok', output: string): string {
  return JSON.stringify({
    schema: 'toolcanon.event/v1',
    type: 'tool_call',
    ts: '2026-11-20T10:00:00.000Z',
    harness: 'claude_code',
    session_id: 'sess-plain-count',
    event_id: id,
    call_id: `call-${id}`,
    tool: 'Bash',
    input: { command: 'ls -la' },
    status,
    ...(status === 'ok' ? { output } : {}),
  });
}

describe('plain SQL counts each event once (no FINAL needed)', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  const tmp = makeTempDir('plain-count-files');

  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('plain-count'));
  });
  afterAll(async () => {
    await cleanup();
    tmp.cleanup();
  });

  it('replaying fixtures/ twice stores every table once: plain count() = FINAL count() = the first run', async () => {
    await replayPaths([FIXTURES], sink, { batch: BATCH });
    const once = await plainAndFinal(sink);
    expect(once['tool_calls']).toEqual({ plain: 373, final: 373 });
    await replayPaths([FIXTURES], sink, { batch: BATCH });
    const twice = await plainAndFinal(sink);
    for (const t of ANALYTICS_TABLE_NAMES) {
      expect({ table: t, plain: twice[t]?.plain }).toEqual({ table: t, plain: once[t]?.final });
      expect({ table: t, final: twice[t]?.final }).toEqual({ table: t, final: once[t]?.final });
    }
  });

  it('an import read again (its state lost, or another machine with the same logs) stores nothing twice', async () => {
    await runImport(claudeCodeImporter, [CLAUDE_LOGS], sink, { batch: BATCH });
    const once = await plainAndFinal(sink);
    await sink.client.command({ query: 'TRUNCATE TABLE import_files' });
    const again = await runImport(claudeCodeImporter, [CLAUDE_LOGS], sink, { batch: BATCH });
    expect(again.counts.eventsRead).toBeGreaterThan(0);
    const twice = await plainAndFinal(sink);
    for (const t of ANALYTICS_TABLE_NAMES) expect({ table: t, plain: twice[t]?.plain }).toEqual({ table: t, plain: once[t]?.final });
  });

  it('one file given twice in one run (copies of its MCP events in one batch): every table stored once', async () => {
    // The MCP fixture under sessions of its own (new events, so the copies meet in one batch).
    const lifecycle = join(tmp.dir, 'lifecycle-twice.jsonl');
    writeFileSync(lifecycle, readFileSync(join(FIXTURES, 'mcp/lifecycle.jsonl'), 'utf8').replace(/"session_id":"([^"]*)"/g, '"session_id":"$1-twice"'));
    const before = await plainAndFinal(sink);
    await replayPaths([lifecycle, lifecycle], sink);
    const after = await plainAndFinal(sink);
    expect(after['mcp_events']?.final).toBeGreaterThan(before['mcp_events']?.final ?? Infinity);
    for (const t of ANALYTICS_TABLE_NAMES) expect({ table: t, plain: after[t]?.plain }).toEqual({ table: t, plain: after[t]?.final });
  });

  it('copies of one call in one batch are stored once', async () => {
    const file = join(tmp.dir, 'same-batch.jsonl');
    writeFileSync(file, `${call('dup-1', 'ok', 'a')}\n${call('dup-1', 'ok', 'a')}\n${call('dup-1', 'ok', 'a')}\n`);
    await replayPaths([file], sink);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls WHERE event_id = 'dup-1'")).toBe(1);
  });

  it('a finished copy replaces a stored pending one; the pending copy read again is not written', async () => {
    const dir = join(tmp.dir, 'ranks');
    mkdirSync(dir);
    const pending = join(dir, 'pending.jsonl');
    const done = join(dir, 'done.jsonl');
    writeFileSync(pending, `${call('rank-1', 'pending', '')}\n`);
    writeFileSync(done, `${call('rank-1', 'ok', 'file-a\nfile-b\n')}\n`);
    await replayPaths([pending], sink);
    expect(await sink.queryRows("SELECT status FROM tool_calls WHERE event_id = 'rank-1'")).toEqual([{ status: 'pending' }]);
    await replayPaths([done], sink);
    // The finished copy is written (the stored pending one ranks lower); FINAL keeps it.
    expect(await sink.queryRows("SELECT status FROM tool_calls FINAL WHERE event_id = 'rank-1'")).toEqual([{ status: 'ok' }]);
    // Background merges may collapse the two stored copies at any time: what is checked is that
    // no later run writes a copy (every stored copy's ingestion time is from the first two runs).
    const stored = async (): Promise<string[]> =>
      (await sink.queryRows<{ t: string }>("SELECT DISTINCT toString(ingested_at) AS t FROM tool_calls WHERE event_id = 'rank-1' ORDER BY t")).map((r) => r.t);
    const before = await stored();
    await replayPaths([pending], sink);
    await replayPaths([done], sink);
    // Neither copy is written again: the stored finished copy ranks as high as either.
    const after = await stored();
    expect(after.every((t) => before.includes(t))).toBe(true);
    expect(after.length).toBeGreaterThan(0);
    expect(await sink.queryRows("SELECT status FROM tool_calls FINAL WHERE event_id = 'rank-1'")).toEqual([{ status: 'ok' }]);
  });

  it('after OPTIMIZE … FINAL every table holds exactly its FINAL rows (nothing hidden that merges would drop)', async () => {
    const before = await plainAndFinal(sink);
    for (const t of ANALYTICS_TABLE_NAMES) await sink.client.command({ query: `OPTIMIZE TABLE ${t} FINAL` });
    const after = await plainAndFinal(sink);
    for (const t of ANALYTICS_TABLE_NAMES) expect({ table: t, plain: after[t]?.plain }).toEqual({ table: t, plain: before[t]?.final });
  });
});

// The same on a ClickHouse server (scripts/clickhouse.sh): its inserts read the batch through
// input(), the embedded engine's through file(); both leave out what is stored.
const server = requireClickHouseServerOrSkip(await ensureClickHouseServer(), 'test/sink/plain-count.e2e.test.ts (server)');
describe.skipIf(server === null)('plain SQL counts each event once on a ClickHouse server', () => {
  const urls: string[] = [];
  afterAll(async () => {
    for (const u of urls) await dropTestDatabase(u);
  });

  it('two replays of fixtures/: plain count() = FINAL count() in every table', async () => {
    const url = await createTestDatabase('plain_count');
    urls.push(url);
    const sink = await ClickHouseSink.open({ clickhouseUrl: url });
    try {
      await replayPaths([FIXTURES], sink, { batch: BATCH });
      const once = await plainAndFinal(sink);
      expect(once['tool_calls']).toEqual({ plain: 373, final: 373 });
      await replayPaths([FIXTURES], sink, { batch: BATCH });
      const twice = await plainAndFinal(sink);
      for (const t of ANALYTICS_TABLE_NAMES) expect({ table: t, plain: twice[t]?.plain }).toEqual({ table: t, plain: once[t]?.final });
    } finally {
      await sink.close();
    }
  });

  it('a database named in the URL that does not exist is created and said so (issue 29 item 12)', async () => {
    const base = await createTestDatabase('plain_count_created');
    urls.push(base);
    const url = `${base}_new`;
    urls.push(url);
    await dropTestDatabase(url);
    const sink = await ClickHouseSink.open({ clickhouseUrl: url });
    try {
      const name = new URL(url).pathname.slice(1);
      expect(sink.notices).toEqual([`created the database ${name} on the ClickHouse server ${new URL(url).origin} (it did not exist)`]);
      expect((await serverQuery(url, `SELECT count() FROM system.databases WHERE name = '${name}'`)).trim()).toBe('1');
    } finally {
      await sink.close();
    }
    // Opened again: it exists, nothing to say. A command that only reads never creates one.
    const again = await ClickHouseSink.open({ clickhouseUrl: url });
    expect(again.notices).toEqual([]);
    await again.close();
    await expect(ClickHouseSink.open({ clickhouseUrl: `${url}_absent` }, { createDatabase: false })).rejects.toThrow(/^no database .*_absent on the ClickHouse server .*: run replay or import/);
  });
});
