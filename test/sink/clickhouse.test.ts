import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from '../../src/sink/ddl.ts';
import { ClickHouseSink, describeTarget, resolveSinkTarget } from '../../src/sink/clickhouse.ts';
import { makeTempDir } from '../helpers/db.ts';

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

describe('migrations', () => {
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
    expect(tables.map((t) => t.name)).toEqual(['dead_letters', 'import_files', 'schema_migrations', 'threshold_breaches', 'token_usage', 'tool_calls']);
  });
});
