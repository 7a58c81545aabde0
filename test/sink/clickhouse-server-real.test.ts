// The sink's server path against a real ClickHouse server (scripts/clickhouse.sh: chdb's
// clickhouse-local serving ClickHouse's HTTP interface, or $TOOLCANON_TEST_CLICKHOUSE_URL), not
// the fake HTTP front of test/helpers/clickhouse-http.ts: the CLI replays the shipped fixtures into
// a fresh database on the server and, in another run, into an embedded data directory; every table
// has the same count (FINAL and plain), the same rows, and `report tools` prints the same table.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { cli, dumpAs, metrics } from '../helpers/faults.ts';
import { createTestDatabase, dropTestDatabase, ensureClickHouseServer, requireClickHouseServerOrSkip, serverQuery } from '../helpers/clickhouse-server.ts';
import { BIN, DUMP_SQL, ROOT } from '../helpers/worker.ts';

const tmp = makeTempDir('server-real');
const env = (): NodeJS.ProcessEnv => {
  const e = { ...process.env };
  for (const k of ['TOOLCANON_CLICKHOUSE_URL', 'TOOLCANON_CLICKHOUSE_USER', 'TOOLCANON_CLICKHOUSE_PASSWORD', 'TOOLCANON_CLICKHOUSE_PASSWORD_FILE', 'TOOLCANON_DB']) delete e[k];
  return e;
};

const server = requireClickHouseServerOrSkip(await ensureClickHouseServer(), 'test/sink/clickhouse-server-real.test.ts');
const databases: string[] = [];

afterAll(async () => {
  for (const url of databases) await dropTestDatabase(url);
  tmp.cleanup();
});

function jsonLines<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

describe.skipIf(server === null)('replay into a real ClickHouse server', () => {
  it('stores what the embedded replay stores: same tables, same counts (FINAL and plain), same rows, same report', async () => {
    const dbUrl = await createTestDatabase('replay_fixtures');
    databases.push(dbUrl);
    const fixtures = join(ROOT, 'fixtures');
    const viaServer = await cli(['replay', fixtures, '--clickhouse', dbUrl, '--format', 'json', '--no-progress'], env());
    expect(viaServer.code, viaServer.stderr).toBe(0);
    const embeddedDb = join(tmp.dir, 'embedded-db');
    const embedded = await cli(['replay', fixtures, '--db', embeddedDb, '--format', 'json', '--no-progress'], env());
    expect(embedded.code, embedded.stderr).toBe(0);

    const m = metrics(viaServer.stdout);
    expect(m['events_read']).toBeGreaterThan(300);
    expect(m['rows_written']! + m['dead_letters']!).toBe(m['events_read']);
    expect(metrics(embedded.stdout)).toMatchObject({ events_read: m['events_read'], rows_written: m['rows_written'], dead_letters: m['dead_letters'] });

    // The tables, as the server has them, and the same list from the embedded engine.
    const tablesSql = "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree' ORDER BY name";
    const serverTables = jsonLines<{ name: string }>(await serverQuery(dbUrl, `${tablesSql} FORMAT JSONEachRow`)).map((r) => r.name);
    const embeddedTables = await cli(['query', '--db', embeddedDb, '--format', 'json', tablesSql], env());
    expect(embeddedTables.code, embeddedTables.stderr).toBe(0);
    expect(serverTables).toContain('tool_calls');
    expect(jsonLines<{ name: string }>(embeddedTables.stdout).map((r) => r.name)).toEqual(serverTables);

    const countsSql = serverTables
      .map((t) => `SELECT '${t}' AS t, toString(count()) AS n, (SELECT toString(count()) FROM ${t}) AS plain FROM ${t} FINAL`)
      .join(' UNION ALL ');
    const toMap = (rows: Array<{ t: string; n: string; plain: string }>): Map<string, string> => new Map(rows.map((r) => [r.t, `${r.n} final, ${r.plain} plain`]));
    const serverCounts = toMap(jsonLines(await serverQuery(dbUrl, `${countsSql} FORMAT JSONEachRow`)));
    const embeddedCountsRun = await cli(['query', '--db', embeddedDb, '--format', 'json', countsSql], env());
    expect(embeddedCountsRun.code, embeddedCountsRun.stderr).toBe(0);
    const embeddedCounts = toMap(jsonLines(embeddedCountsRun.stdout));
    expect(serverCounts.size).toBe(serverTables.length);
    expect(serverCounts).toEqual(embeddedCounts);
    expect(Number(serverCounts.get('tool_calls')!.split(' ')[0])).toBe(m['rows_written.tool_calls']);

    // Every analytics row, as the other sink tests compare them (`toolcanon query` quotes 64-bit
    // integers in JSON; so does this read).
    const served = new Map<string, string[]>();
    for (const { t, r } of jsonLines<{ t: string; r: string }>(await serverQuery(dbUrl, `${DUMP_SQL} SETTINGS output_format_json_quote_64bit_integers = 1 FORMAT JSONEachRow`))) {
      const rows = served.get(t);
      if (rows === undefined) served.set(t, [r]);
      else rows.push(r);
    }
    for (const rows of served.values()) rows.sort();
    const reference = await dumpAs(embeddedDb, [process.execPath, BIN], env());
    expect(served.get('tool_calls')?.length).toBeGreaterThan(200);
    expect(served).toEqual(reference);

    // A second replay into the server stores nothing new.
    const again = await cli(['replay', fixtures, '--clickhouse', dbUrl, '--format', 'json', '--no-progress'], env());
    expect(again.code, again.stderr).toBe(0);
    expect(metrics(again.stdout)).toMatchObject({ events_read: m['events_read'], events_already_stored: m['events_read'] });

    // The reports read the server as they read the embedded engine.
    const reportServer = await cli(['report', 'tools', '--clickhouse', dbUrl], env());
    const reportEmbedded = await cli(['report', 'tools', '--db', embeddedDb], env());
    expect(reportServer.code, reportServer.stderr).toBe(0);
    expect(reportEmbedded.code, reportEmbedded.stderr).toBe(0);
    expect(reportServer.stdout).toContain('tool_name');
    expect(reportServer.stdout).toEqual(reportEmbedded.stdout);
  });
});
