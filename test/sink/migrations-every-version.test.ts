// Migrations from every earlier schema version, on both engines (issue 34 item 2;
// test/helpers/engines.ts): a database at version v (the migrations 1..v run one by one, as a
// toolcanon of that version made it, with rows in it) is brought up to date by opening it: its
// tables equal the schema snapshot (what a new database gets), every migration is recorded once,
// the rows written at version v are kept, and a replay then stores as into a new database.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { LATEST_SCHEMA_VERSION, MIGRATIONS, SCHEMA_MIGRATIONS_DDL, type TableRebuild } from '../../src/sink/ddl.ts';
import { SCHEMA_SNAPSHOT } from '../../src/sink/schema-snapshot.ts';
import { countOf } from '../helpers/db.ts';
import { forEachEngine } from '../helpers/engines.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const INPUT = join(ROOT, 'fixtures/claude_code');

/** Every table of the sink's database, schema_migrations included, dropped. */
async function dropAll(sink: ClickHouseSink): Promise<void> {
  const tables = await sink.queryRows<{ name: string }>('SELECT name FROM system.tables WHERE database = currentDatabase()');
  for (const { name } of tables) await sink.client.command({ query: `DROP TABLE IF EXISTS \`${name}\` SYNC` });
}

/** The database as toolcanon at schema version `v` left it: migrations 1..v, one by one, recorded. */
async function buildVersion(sink: ClickHouseSink, v: number): Promise<void> {
  // The sink's own rebuild (a sorting-key change copies the table): what that version ran.
  const rebuild = (r: TableRebuild): Promise<void> => (sink as unknown as { rebuild(r: TableRebuild): Promise<void> }).rebuild(r);
  await sink.client.command({ query: SCHEMA_MIGRATIONS_DDL });
  for (const m of MIGRATIONS) {
    if (m.version > v) break;
    for (const statement of m.statements) await sink.client.command({ query: statement });
    for (const r of m.rebuilds ?? []) await rebuild(r);
    await sink.client.command({
      query: 'INSERT INTO schema_migrations (version, description) SELECT {version:UInt32}, {description:String}',
      query_params: { version: m.version, description: m.description },
    });
  }
}

await forEachEngine('test/sink/migrations-every-version.test.ts', (engine) => {
  describe('a database of every earlier schema version, opened by this version', () => {
    const versions = MIGRATIONS.map((m) => m.version).filter((v) => v < LATEST_SCHEMA_VERSION);

    it(`is migrated from each of versions ${versions.join(', ')} to the snapshot's tables, keeping its rows`, async () => {
      expect(versions).toHaveLength(MIGRATIONS.length - 1);
      const sink = await engine.openSink('migrations');
      const tally: string[] = [];
      for (const v of versions) {
        await dropAll(sink);
        await buildVersion(sink, v);
        // Rows of that version: the columns tool_calls and dead_letters had from version 1.
        await sink.client.command({
          query: `INSERT INTO tool_calls (event_id, ts, harness, namespace, session_id, tool_name, kind, status, raw_input, ingested_at)
            SELECT concat('v${v}-', toString(number)), '2026-12-02 10:00:00.000', 'codex', 'codex', concat('s', toString(number % 7)), 'shell', 'execute', 'ok', '{}', '2026-12-02 11:00:00.000' FROM numbers(50)`,
        });
        await sink.client.command({
          query: `INSERT INTO dead_letters (dead_letter_id, raw, raw_bytes, reason, detail, source, ingested_at)
            SELECT concat('d${v}-', toString(number)), 'not json', 8, 'invalid_json', 'x', concat('f:', toString(number)), '2026-12-02 11:00:00.000' FROM numbers(5)`,
        }).catch(async () =>
          // A version whose dead_letters keeps the raw bytes as base64 (raw_base64).
          sink.client.command({
            query: `INSERT INTO dead_letters (dead_letter_id, raw_base64, raw_bytes, reason, detail, source, ingested_at)
              SELECT concat('d${v}-', toString(number)), base64Encode('not json'), 8, 'invalid_json', 'x', concat('f:', toString(number)), '2026-12-02 11:00:00.000' FROM numbers(5)`,
          }),
        );

        await sink.migrate();

        const recorded = (await sink.queryRows<{ version: number }>('SELECT version FROM schema_migrations FINAL ORDER BY version')).map((r) => Number(r.version));
        expect({ from: v, recorded }).toEqual({ from: v, recorded: MIGRATIONS.map((m) => m.version) });
        expect({ from: v, tables: await sink.tableDefinitions() }).toEqual({ from: v, tables: SCHEMA_SNAPSHOT.tables });
        expect({ from: v, kept: await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE startsWith(event_id, 'v${v}-')`) }).toEqual({ from: v, kept: 50 });
        expect({ from: v, kept: await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL') }).toEqual({ from: v, kept: 5 });
        tally.push(`${v}->${LATEST_SCHEMA_VERSION}`);
      }
      expect(tally).toHaveLength(versions.length);

      // The last migrated database takes a replay as a new one does.
      const counts = await replayPaths([INPUT], sink);
      expect(counts.toolCallRows).toBeGreaterThan(10);
      expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE harness = 'claude_code'")).toBe(counts.toolCallRows);
    });
  });
});
