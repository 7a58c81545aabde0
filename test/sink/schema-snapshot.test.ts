// A new database is created from the schema snapshot (src/sink/schema-snapshot.ts) instead of
// running every migration: it must be exactly what the migrations make, and a database stopped
// between its tables and its migration records must still come out right.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from '../../src/sink/ddl.ts';
import { SCHEMA_SNAPSHOT } from '../../src/sink/schema-snapshot.ts';
import { makeTempDir } from '../helpers/db.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

describe('the schema snapshot', () => {
  it('equals the tables the migrations make one by one (else: npx tsx scripts/schema-snapshot.ts)', () => {
    // In a process of its own: the embedded engine takes one data directory per process.
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/schema-snapshot.ts'), '--check'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('src/sink/schema-snapshot.ts is up to date');
    expect(r.status).toBe(0);
    expect(SCHEMA_SNAPSHOT.version).toBe(LATEST_SCHEMA_VERSION);
    expect(SCHEMA_SNAPSHOT.tables.map((t) => t.name)).toEqual([
      'dead_letters', 'derivation_state', 'discovery_events', 'import_files', 'mcp_events', 'mcp_server_state', 'mcp_tool_registrations',
      'threshold_breaches', 'token_usage', 'tool_calls',
    ]);
  }, 120_000);
});

describe('a new database', () => {
  const tmp = makeTempDir('schema-snapshot');
  let sink: ClickHouseSink;
  const versions = async (): Promise<{ version: number; description: string }[]> =>
    (await sink.queryRows<{ version: number; description: string }>('SELECT version, description FROM schema_migrations FINAL ORDER BY version')).map((r) => ({
      version: Number(r.version),
      description: r.description,
    }));
  beforeAll(async () => {
    sink = await ClickHouseSink.open({ db: join(tmp.dir, 'db') });
  });
  afterAll(async () => {
    await sink.close();
    tmp.cleanup();
  });

  it('is created from the snapshot: its tables print as the snapshot, every migration recorded once', async () => {
    expect(await sink.tableDefinitions()).toEqual(SCHEMA_SNAPSHOT.tables);
    expect(await versions()).toEqual(MIGRATIONS.map((m) => ({ version: m.version, description: m.description })));
    await sink.migrate();
    expect(await versions()).toHaveLength(MIGRATIONS.length);
  });

  it('stopped between its tables and its records (one table missing, no record) is completed by the migrations to the same tables', async () => {
    await sink.client.command({ query: 'DROP TABLE tool_calls' });
    await sink.client.command({ query: 'TRUNCATE TABLE schema_migrations' });
    // Tables exist, so the snapshot is not used: each migration runs over tables already at the
    // latest layout, and makes tool_calls from migration 1 on.
    await sink.migrate();
    expect(await sink.tableDefinitions()).toEqual(SCHEMA_SNAPSHOT.tables);
    expect(await versions()).toEqual(MIGRATIONS.map((m) => ({ version: m.version, description: m.description })));
  });
});
