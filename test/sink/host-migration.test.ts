// host and device_id (issue 16, one warehouse for many machines): a database of the previous
// schema version (8) is migrated and keeps its rows; the same event id from two machines stays one
// row (host is not part of any sorting key); a content id and a dead letter's id, with and without
// the machine fields.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYTICS_TABLE_NAMES, type ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { decodeEvent } from '../../src/decode/event.ts';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import { eventLine } from '../helpers/events.ts';
import { makeTempDir, openTempSink } from '../helpers/db.ts';

const count = async (sink: ClickHouseSink, sql: string): Promise<number> => Number((await sink.queryRows<{ n: string }>(sql))[0]?.n ?? -1);

describe('host and device_id in the tables', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  const tmp = makeTempDir('host-events');
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('host-migration'));
  }, 60_000);
  afterAll(async () => {
    await cleanup();
    tmp.cleanup();
  });

  it('migrates a database of schema version 8: every row kept, host and device_id empty, import state per device', async () => {
    // The previous version's layout: no host / device_id anywhere, import_files keyed (importer, path).
    for (const table of ANALYTICS_TABLE_NAMES) {
      await sink.client.command({ query: `ALTER TABLE ${table} DROP COLUMN host, DROP COLUMN device_id` });
    }
    await sink.client.command({ query: 'DROP TABLE import_files' });
    await sink.client.command({
      query: `CREATE TABLE import_files (importer LowCardinality(String), path String, size_bytes UInt64, mtime_ms Float64, complete_bytes UInt64, imported_at DateTime64(3, 'UTC'))
        ENGINE = ReplacingMergeTree(imported_at) ORDER BY (importer, path)`,
    });
    await sink.client.command({ query: 'DELETE FROM schema_migrations WHERE version = 9' });
    const hostColumns = async (): Promise<number> => count(sink, `SELECT count() AS n FROM system.columns WHERE database = currentDatabase() AND name IN ('host', 'device_id') AND table IN (${ANALYTICS_TABLE_NAMES.map((t) => `'${t}'`).join(', ')})`);
    expect(await hostColumns()).toBe(0);
    // Rows written by version 8.
    await sink.client.command({
      query: `INSERT INTO tool_calls (event_id, ts, harness, namespace, session_id, tool_name, kind, status, ingested_at)
        SELECT concat('v8-', toString(number)), '2026-12-02 10:00:00.000', 'codex', 'codex', concat('s', toString(number % 7)), 'shell', 'execute', 'ok', '2026-12-02 11:00:00.000' FROM numbers(500)`,
    });
    await sink.client.command({
      query: `INSERT INTO token_usage (event_id, ts, harness, session_id, source, context_tokens, context_source, session_seq, ingested_at, input_tokens, output_tokens)
        SELECT concat('u8-', toString(number)), '2026-12-02 10:00:00.000', 'codex', 's1', 'observed', 10, 'observed', number + 1, '2026-12-02 11:00:00.000', 10, 1 FROM numbers(300)`,
    });
    await sink.client.command({
      query: `INSERT INTO dead_letters (dead_letter_id, raw_base64, raw_bytes, reason, detail, source, ingested_at)
        SELECT concat('d8-', toString(number)), base64Encode('not json'), 8, 'invalid_json', 'x', concat('f:', toString(number)), '2026-12-02 11:00:00.000' FROM numbers(10)`,
    });
    await sink.client.command({
      query: `INSERT INTO import_files VALUES ('claude-code', '/logs/a.jsonl', 100, 1, 100, '2026-12-02 11:00:00.000'), ('claude-code', '/logs/b.jsonl', 200, 2, 150, '2026-12-02 11:00:00.000')`,
    });

    await sink.migrate();

    expect(await hostColumns()).toBe(2 * ANALYTICS_TABLE_NAMES.length);
    expect(await count(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE event_id LIKE 'v8-%' AND host = '' AND device_id = ''")).toBe(500);
    expect(await count(sink, "SELECT count() AS n FROM token_usage FINAL WHERE event_id LIKE 'u8-%' AND host = ''")).toBe(300);
    expect(await count(sink, "SELECT count() AS n FROM dead_letters FINAL WHERE dead_letter_id LIKE 'd8-%' AND raw = 'not json' AND host = ''")).toBe(10);
    expect(await count(sink, "SELECT count() AS n FROM schema_migrations FINAL WHERE version = 9")).toBe(1);
    const [key] = await sink.queryRows<{ k: string }>("SELECT sorting_key AS k FROM system.tables WHERE database = currentDatabase() AND name = 'import_files'");
    expect(key?.k).toBe('importer, device_id, path');
    // A machine that never wrote its own record reads the records of before; its own win after.
    const before = await sink.loadImportState('claude-code', 'dev-x');
    expect([...before].sort()).toEqual([
      ['/logs/a.jsonl', { sizeBytes: 100, mtimeMs: 1, completeBytes: 100 }],
      ['/logs/b.jsonl', { sizeBytes: 200, mtimeMs: 2, completeBytes: 150 }],
    ]);
    await sink.writeImportState('claude-code', new Map([['/logs/b.jsonl', { sizeBytes: 300, mtimeMs: 3, completeBytes: 300 }]]), '2026-12-03 00:00:00.000', 'dev-x');
    expect((await sink.loadImportState('claude-code', 'dev-x')).get('/logs/b.jsonl')).toEqual({ sizeBytes: 300, mtimeMs: 3, completeBytes: 300 });
    expect((await sink.loadImportState('claude-code', 'dev-x')).get('/logs/a.jsonl')).toEqual({ sizeBytes: 100, mtimeMs: 1, completeBytes: 100 });
    // Another machine does not take dev-x's offsets.
    expect((await sink.loadImportState('claude-code', 'dev-y')).get('/logs/b.jsonl')).toEqual({ sizeBytes: 200, mtimeMs: 2, completeBytes: 150 });
    // Migrating again changes nothing.
    await sink.migrate();
    expect(await count(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE event_id LIKE 'v8-%'")).toBe(500);
  });

  it('keeps one row for the same event id reported by two hosts: the copy stored first says which host', async () => {
    const call = { event_id: 'same-event', session_id: 's-two-hosts', call_id: 'c-2h', output: 'x'.repeat(400) };
    const usage = { type: 'usage', event_id: 'same-usage', session_id: 's-two-hosts', request_id: 'r-1', input_tokens: 1000, output_tokens: 10 };
    const usageLine = (host: string): string => {
      const { tool: _t, input: _i, call_id: _c, status: _s, ...rest } = JSON.parse(eventLine(usage)) as Record<string, unknown>;
      return JSON.stringify({ ...rest, host, device_id: `dev-${host}` });
    };
    const a = join(tmp.dir, 'alpha.jsonl');
    const b = join(tmp.dir, 'beta.jsonl');
    writeFileSync(a, `${eventLine({ ...call, host: 'alpha', device_id: 'dev-alpha' })}\n${usageLine('alpha')}\n`);
    writeFileSync(b, `${eventLine({ ...call, host: 'beta', device_id: 'dev-beta' })}\n${usageLine('beta')}\n`);
    const first = await replayPaths([a], sink);
    expect(first.rowsWritten).toBe(2);
    await new Promise((r) => setTimeout(r, 5)); // a later ingestion time for the second copy
    const second = await replayPaths([b], sink);
    expect(second.rowsWritten).toBe(2);
    // The second copy says the same as the stored one (only its machine differs): it is not
    // written again (issue 29 item 1), so plain SQL counts one row, and the first machine stays,
    // as it does in token_usage.
    expect(await count(sink, "SELECT count() AS n FROM tool_calls WHERE event_id = 'same-event'")).toBe(1);
    expect(await sink.queryRows("SELECT host, device_id FROM tool_calls FINAL WHERE event_id = 'same-event'")).toEqual([{ host: 'alpha', device_id: 'dev-alpha' }]);
    // The accounting applies an event once: the second copy of each was a duplicate, so the
    // token_usage rows (the observed request and the output's estimate) keep the first machine.
    expect(second.duplicatesSkipped).toBe(2);
    expect(await sink.queryRows("SELECT source, host FROM token_usage FINAL WHERE session_id = 's-two-hosts' ORDER BY source")).toEqual([
      { source: 'estimated', host: 'alpha' },
      { source: 'observed', host: 'alpha' },
    ]);
    expect(await count(sink, "SELECT sum(input_tokens) AS n FROM token_usage FINAL WHERE session_id = 's-two-hosts'")).toBe(1000);
  });

  it('gives an event the same content id with and without host fields; a dead letter of a known machine its own id', () => {
    const at = '2026-12-02 00:00:00.000';
    const id = (line: string): string => {
      const o = decodeEvent(Buffer.from(line), 'f:1', at);
      if (o.kind !== 'row') throw new Error(o.kind);
      return o.row.event_id;
    };
    const plain = eventLine({ call_id: '' });
    const withHost = eventLine({ call_id: '', host: 'h1', device_id: 'd1' });
    expect(id(withHost)).toBe(id(plain));
    const row = decodeEvent(Buffer.from(withHost), 'f:1', at);
    expect(row.kind === 'row' && [row.row.host, row.row.device_id]).toEqual(['h1', 'd1']);
    // Only host given: device_id is '' (never the importing machine's beside another host).
    const onlyHost = decodeEvent(Buffer.from(eventLine({ host: 'h1' })), 'f:1', at, { maxEventBytes: 1 << 20, maxDepth: 64, machine: { host: 'me', device_id: 'my-dev' } });
    expect(onlyHost.kind === 'row' && [onlyHost.row.host, onlyHost.row.device_id]).toEqual(['h1', '']);
    const fallback = decodeEvent(Buffer.from(eventLine()), 'f:1', at, { maxEventBytes: 1 << 20, maxDepth: 64, machine: { host: 'me', device_id: 'my-dev' } });
    expect(fallback.kind === 'row' && [fallback.row.host, fallback.row.device_id]).toEqual(['me', 'my-dev']);
    // A schema-invalid event names its machine: the dead letter says where it came from.
    const bad = decodeEvent(Buffer.from(eventLine({ status: 'bogus', host: 'h2', device_id: 'd2' })), 'f:1', at);
    expect(bad.kind === 'dead' && [bad.dead.reason, bad.dead.host, bad.dead.device_id]).toEqual(['schema', 'h2', 'd2']);
    // Unreadable bytes: the caller's machine, and an id of their own (same bytes and path on two machines).
    const limits = (host: string) => ({ maxEventBytes: 1 << 20, maxDepth: 64, machine: { host, device_id: `dev-${host}` } });
    const junkA = decodeEvent(Buffer.from('not json'), 'f:1', at, limits('a'));
    const junkB = decodeEvent(Buffer.from('not json'), 'f:1', at, limits('b'));
    const junk = decodeEvent(Buffer.from('not json'), 'f:1', at);
    if (junkA.kind !== 'dead' || junkB.kind !== 'dead' || junk.kind !== 'dead') throw new Error('not dead letters');
    expect(junkA.dead.host).toBe('a');
    expect(new Set([junkA.dead.dead_letter_id, junkB.dead.dead_letter_id, junk.dead.dead_letter_id]).size).toBe(3);
    // A machine field of the wrong type is refused by the schema (a dead letter, not a crash).
    const wrong = decodeEvent(Buffer.from(eventLine({ host: 42 })), 'f:1', at);
    expect(wrong.kind === 'dead' && wrong.dead.reason).toBe('schema');
  });
});
