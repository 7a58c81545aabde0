import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from '../../src/sink/ddl.ts';
import { ClickHouseSink, describeTarget, resolveSinkTarget } from '../../src/sink/clickhouse.ts';
import { appliedFigures, restoreStates } from '../../src/accounting/restore.ts';
import { countOf, makeTempDir } from '../helpers/db.ts';

describe('sink target', () => {
  it('prefers --clickhouse, then $TOOLCANON_CLICKHOUSE_URL, then --db, then $TOOLCANON_DB, then .toolcanon/db', () => {
    expect(resolveSinkTarget({ clickhouseUrl: 'http://h:8123' }, { TOOLCANON_DB: '/x' })).toEqual({ kind: 'server', url: 'http://h:8123' });
    expect(resolveSinkTarget({}, { TOOLCANON_CLICKHOUSE_URL: 'https://h:8443/db' })).toEqual({ kind: 'server', url: 'https://h:8443/db' });
    expect(resolveSinkTarget({ db: '/data/tc' }, { TOOLCANON_DB: '/x' })).toEqual({ kind: 'embedded', dir: '/data/tc' });
    expect(resolveSinkTarget({}, { TOOLCANON_DB: '/x' })).toEqual({ kind: 'embedded', dir: '/x' });
    expect(resolveSinkTarget({}, {})).toEqual({ kind: 'embedded', dir: join(process.cwd(), '.toolcanon/db') });
  });

  it('never prints a user or password from the URL', () => {
    const text = describeTarget({ kind: 'server', url: 'https://alice:s3cret@ch.example:8443/analytics' });
    expect(text).toBe('ClickHouse server https://ch.example:8443/analytics');
    expect(text).not.toContain('s3cret');
    expect(text).not.toContain('alice');
  });
});

describe('the embedded engine and its migrations', () => {
  const tmp = makeTempDir('migrations');
  let sink: ClickHouseSink;
  beforeAll(async () => {
    sink = await ClickHouseSink.open({ db: join(tmp.dir, 'db') });
  });
  afterAll(async () => {
    await sink.close();
    tmp.cleanup();
  });

  it('are versioned, applied once, and safe to apply again at every start', async () => {
    await sink.migrate();
    await sink.migrate();
    const versions = await sink.queryRows<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(versions.map((v) => Number(v.version))).toEqual(MIGRATIONS.map((m) => m.version));
    expect(LATEST_SCHEMA_VERSION).toBe(MIGRATIONS.length);
    const tables = await sink.queryRows<{ name: string }>("SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name");
    expect(tables.map((t) => t.name)).toEqual([
      'dead_letters', 'derivation_state', 'discovery_events', 'import_files', 'mcp_events', 'mcp_server_state', 'mcp_tool_registrations',
      'schema_migrations', 'threshold_breaches', 'token_usage', 'tool_calls',
    ]);
  });

  it('converts a database of the old layout to the new sort keys, keeping every row (migration 7), and resumes a rebuild cut short', async () => {
    // A tool_calls table as versions before 7 made it (ORDER BY event_id), with rows in it.
    await sink.client.command({ query: "CREATE TABLE tool_calls__legacy AS tool_calls ENGINE = ReplacingMergeTree(ingested_at) PARTITION BY toYYYYMM(ts) ORDER BY (event_id)" });
    await sink.client.command({
      query: `INSERT INTO tool_calls__legacy (event_id, ts, harness, namespace, session_id, tool_name, kind, status, ingested_at)
        SELECT concat('m7-', toString(number)), '2026-12-02 10:00:00.000', 'codex', 'codex', concat('s', toString(number % 7)), 'shell', 'execute',
               if(number % 10 = 0, 'pending', 'ok'), '2026-12-02 11:00:00.000' FROM numbers(1000)`,
    });
    await sink.client.command({ query: 'RENAME TABLE tool_calls TO tool_calls__gone, tool_calls__legacy TO tool_calls' });
    await sink.client.command({ query: 'DROP TABLE tool_calls__gone' });
    await sink.client.command({ query: 'DELETE FROM schema_migrations WHERE version = 7' });
    const key = async (): Promise<string | undefined> => (await sink.queryRows<{ k: string }>("SELECT sorting_key AS k FROM system.tables WHERE database = currentDatabase() AND name = 'tool_calls'"))[0]?.k;
    expect(await key()).toBe('(event_id)');
    await sink.migrate();
    expect(await key()).toBe('harness, session_id, event_id');
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE event_id LIKE 'm7-%'")).toBe(1000);
    // A pending copy of a finished call never replaces it, whichever was ingested later.
    await sink.client.command({
      query: `INSERT INTO tool_calls (event_id, ts, harness, namespace, session_id, tool_name, kind, status, ingested_at)
        VALUES ('m7-1', '2026-12-02 10:00:00.000', 'codex', 'codex', 's1', 'shell', 'execute', 'pending', '2026-12-03 00:00:00.000')`,
    });
    expect(await sink.queryRows("SELECT status FROM tool_calls FINAL WHERE event_id = 'm7-1'")).toEqual([{ status: 'ok' }]);
    // A crash between the swap's two renames: the table waits under tool_calls__old.
    await sink.client.command({ query: 'RENAME TABLE tool_calls TO tool_calls__old' });
    await sink.client.command({ query: 'DELETE FROM schema_migrations WHERE version = 7' });
    await sink.migrate();
    expect(await key()).toBe('harness, session_id, event_id');
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE event_id LIKE 'm7-%'")).toBe(1000);
    const leftovers = await sink.queryRows("SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE '%\\_\\_%'");
    expect(leftovers).toEqual([]);
  });

  it('keeps rows for --retention-days of event time, and drops the retention again with 0', async () => {
    await sink.applyRetention(30);
    const ttl = async (): Promise<string> => (await sink.queryRows<{ q: string }>("SELECT create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND name = 'token_usage'"))[0]?.q ?? '';
    expect(await ttl()).toMatch(/TTL toDateTime\(ts\) \+ toIntervalDay\(30\)/);
    await sink.applyRetention(0);
    expect(await ttl()).not.toContain('TTL');
  });

  it('starts the embedded engine with caches sized for one machine, not the server defaults', async () => {
    const rows = await sink.queryRows<{ name: string; value: string }>(
      "SELECT name, value FROM system.server_settings WHERE name IN ('mark_cache_size', 'index_mark_cache_size', 'primary_index_cache_size') ORDER BY name",
    );
    expect(Object.fromEntries(rows.map((r) => [r.name, r.value]))).toEqual({
      index_mark_cache_size: '67108864',
      mark_cache_size: '268435456',
      primary_index_cache_size: '268435456',
    });
  });

  it('merges the wide tables column by column (migration 5)', async () => {
    const rows = await sink.queryRows<{ name: string; engine_full: string }>(
      "SELECT name, engine_full FROM system.tables WHERE database = currentDatabase() AND name IN ('tool_calls', 'token_usage', 'dead_letters', 'threshold_breaches') ORDER BY name",
    );
    expect(rows).toHaveLength(4);
    for (const r of rows) {
      expect(r.engine_full, r.name).toContain('vertical_merge_algorithm_min_rows_to_activate = 1');
      expect(r.engine_full, r.name).toContain('merge_max_block_size = 2048');
    }
  });

  it('restores a context from its latest applied row (highest sequence), the latest ingested copy of each row winning', async () => {
    // Two copies of one row (a re-run wrote it again; the stale copy has the highest sequence
    // number of all, so without the copy reduction it would win) and two other rows.
    // Separate inserts with merges stopped: the copies sit in different parts, as after a re-run.
    await sink.client.command({ query: 'SYSTEM STOP MERGES token_usage' });
    const columns = '(event_id, ts, session_id, agent_id, source, context_tokens, context_source, session_seq, ingested_at, model, input_tokens, output_tokens)';
    await sink.client.command({
      query: `INSERT INTO token_usage ${columns} VALUES
        ('e1', '2026-12-02 10:00:00.000', 's-restore', '', 'observed', 100, 'observed', 1, '2026-12-02 11:00:00.000', 'm', 100, 7),
        ('e2', '2026-12-02 10:01:00.000', 's-restore', '', 'estimated', 200, 'observed+estimated', 9, '2026-12-02 11:00:00.000', 'm', NULL, NULL),
        ('e3', '2026-12-02 10:00:30.000', 's-restore', '', 'estimated', 999, 'observed+estimated', 3, '2026-12-02 11:00:00.000', 'm', NULL, NULL)`,
    });
    await sink.client.command({
      query: `INSERT INTO token_usage ${columns} VALUES ('e2', '2026-12-02 10:01:00.000', 's-restore', '', 'estimated', 250, 'observed+estimated', 2, '2026-12-02 12:00:00.000', 'm', NULL, NULL)`,
    });
    const [parts] = await sink.queryRows<{ n: string }>("SELECT count() AS n FROM system.parts WHERE table = 'token_usage' AND active AND database = currentDatabase()");
    expect(Number(parts?.n)).toBeGreaterThanOrEqual(2);
    const restored = await restoreStates(sink, new Map([['k', { sessionId: 's-restore', agentId: '' }]]));
    // e3 (seq 3) is the latest applied: not the stale copy of e2 (seq 9), not the latest by ts.
    expect(restored.get('k')?.contextTokens).toBe(999n);
    expect(restored.get('k')?.seq).toBe(3n);
    const otherAgent = await restoreStates(sink, new Map([['k', { sessionId: 's-restore', agentId: 'sub' }]]));
    expect(otherAgent.size).toBe(0);
    // Applied events are found with the figures a copy is compared against.
    const applied = await appliedFigures(sink, [
      { sessionId: 's-restore', agentId: '', eventId: 'e1' },
      { sessionId: 's-restore', agentId: '', eventId: 'e2' },
      { sessionId: 's-restore', agentId: '', eventId: 'e4' },
      { sessionId: 's-restore', agentId: 'sub', eventId: 'e1' },
    ]);
    expect([...applied.entries()].sort()).toEqual([['s-restore\u0001e1', '100/7///'], ['s-restore\u0001e2', '']]);
    await sink.client.command({ query: 'SYSTEM START MERGES token_usage' });
  });

  it('restores many contexts in one read: the highest row where it is its event\'s latest copy, the full way where it is not', async () => {
    // s-fast: every event once, the highest sequence wins (here not the latest by time, nor by
    // ingestion); a subagent of s-fast; s-stale: its highest row is an older copy of e2, so
    // the latest copy of each row is taken first (e3, seq 3), as in the test above.
    await sink.client.command({ query: 'SYSTEM STOP MERGES token_usage' });
    const columns = '(event_id, ts, session_id, agent_id, source, context_tokens, context_source, session_seq, ingested_at, model)';
    await sink.client.command({
      query: `INSERT INTO token_usage ${columns} VALUES
        ('f1', '2026-12-02 10:00:00.000', 's-fast', '', 'estimated', 10, 'estimated', 1, '2026-12-02 11:00:00.000', 'm'),
        ('f2', '2026-12-02 09:00:00.000', 's-fast', '', 'estimated', 20, 'estimated', 5, '2026-12-02 10:00:00.000', 'm'),
        ('f3', '2026-12-02 10:05:00.000', 's-fast', '', 'estimated', 30, 'estimated', 4, '2026-12-02 12:00:00.000', 'm'),
        ('g1', '2026-12-02 10:00:00.000', 's-fast', 'sub', 'estimated', 7, 'estimated', 2, '2026-12-02 11:00:00.000', 'm'),
        ('x1', '2026-12-02 10:00:00.000', 's-stale', '', 'estimated', 100, 'estimated', 1, '2026-12-02 11:00:00.000', 'm'),
        ('x2', '2026-12-02 10:01:00.000', 's-stale', '', 'estimated', 200, 'estimated', 9, '2026-12-02 11:00:00.000', 'm'),
        ('x3', '2026-12-02 10:00:30.000', 's-stale', '', 'estimated', 999, 'estimated', 3, '2026-12-02 11:00:00.000', 'm')`,
    });
    await sink.client.command({
      query: `INSERT INTO token_usage ${columns} VALUES ('x2', '2026-12-02 10:01:00.000', 's-stale', '', 'estimated', 250, 'estimated', 2, '2026-12-02 12:00:00.000', 'm')`,
    });
    const restored = await restoreStates(
      sink,
      new Map([
        ['fast', { sessionId: 's-fast', agentId: '' }],
        ['sub', { sessionId: 's-fast', agentId: 'sub' }],
        ['stale', { sessionId: 's-stale', agentId: '' }],
        ['none', { sessionId: 's-none', agentId: '' }],
      ]),
    );
    expect([...restored.keys()].sort()).toEqual(['fast', 'stale', 'sub']);
    expect([restored.get('fast')?.contextTokens, restored.get('fast')?.seq]).toEqual([20n, 5n]);
    expect([restored.get('sub')?.contextTokens, restored.get('sub')?.seq]).toEqual([7n, 2n]);
    expect([restored.get('stale')?.contextTokens, restored.get('stale')?.seq]).toEqual([999n, 3n]);
    await sink.client.command({ query: 'SYSTEM START MERGES token_usage' });
  });
});
