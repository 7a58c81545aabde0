// The sink's server path end to end: the real CLI replays the shipped fixtures into a ClickHouse
// HTTP interface (test/helpers/clickhouse-http.ts: the embedded engine behind an HTTP server that
// answers as ClickHouse's does) and, in another run, into an embedded data directory. The
// migrations, the Native inserts (`INSERT … FORMAT Native` with the block as the body), the
// TabSeparated ones and the accounting's reads all go over HTTP; both runs store the same rows.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, dumpAs, metrics } from '../helpers/faults.ts';
import { makeTempDir } from '../helpers/db.ts';
import { startClickHouseHttp, type ClickHouseHttp } from '../helpers/clickhouse-http.ts';
import { BIN, DUMP_SQL, ROOT } from '../helpers/worker.ts';

const tmp = makeTempDir('server-http');
let server: ClickHouseHttp;
const env = (): NodeJS.ProcessEnv => {
  const e = { ...process.env };
  for (const k of ['TOOLCANON_CLICKHOUSE_URL', 'TOOLCANON_CLICKHOUSE_USER', 'TOOLCANON_CLICKHOUSE_PASSWORD', 'TOOLCANON_CLICKHOUSE_PASSWORD_FILE', 'TOOLCANON_DB']) delete e[k];
  return e;
};

beforeAll(async () => {
  server = await startClickHouseHttp(join(tmp.dir, 'server-db'));
}, 60_000);
afterAll(async () => {
  await server.close();
  tmp.cleanup();
});

function dumpOf(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const tab = line.indexOf('\t');
    const t = line.slice(0, tab);
    // TabSeparated escapes the JSON text's backslashes; undo it as the engine's TSV reader would.
    const r = line.slice(tab + 1).replace(/\\(.)/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', f: '\f' })[c] ?? c);
    const rows = out.get(t);
    if (rows === undefined) out.set(t, [r]);
    else rows.push(r);
  }
  for (const rows of out.values()) rows.sort();
  return out;
}

describe('replay into a ClickHouse server (HTTP)', () => {
  it('stores what the embedded replay stores, its analytics rows sent as Native blocks', async () => {
    const fixtures = join(ROOT, 'fixtures');
    const viaHttp = await cli(['replay', fixtures, '--clickhouse', server.url, '--format', 'json', '--no-progress'], env());
    expect(viaHttp.code, viaHttp.stderr).toBe(0);
    const embeddedDb = join(tmp.dir, 'embedded-db');
    const embedded = await cli(['replay', fixtures, '--db', embeddedDb, '--format', 'json', '--no-progress'], env());
    expect(embedded.code, embedded.stderr).toBe(0);

    const m = metrics(viaHttp.stdout);
    expect(m['events_read']).toBeGreaterThan(300);
    expect(m['rows_written']! + m['dead_letters']!).toBe(m['events_read']);
    expect(metrics(embedded.stdout)).toMatchObject({ events_read: m['events_read'], rows_written: m['rows_written'], dead_letters: m['dead_letters'] });

    const inserts = server.statements.filter((s) => /^\s*INSERT/i.test(s));
    // tool_calls: the block read through input() and left out where a stored copy says the same (issue 29 item 1).
    expect(inserts.some((s) => /^INSERT INTO tool_calls \(`event_id`, .*\) SELECT .* FROM input\('.*'\) AS _new[\s\S]*FORMAT Native$/.test(s))).toBe(true);
    expect(inserts.some((s) => /^INSERT INTO token_usage \(.*\) FORMAT Native$/.test(s))).toBe(true);
    // dead_letters: the raw bytes themselves into `raw` (no base64 text for the engine to decode).
    expect(inserts.some((s) => /^INSERT INTO dead_letters \(`dead_letter_id`, `raw`, .*\) FORMAT Native$/.test(s))).toBe(true);

    const served = dumpOf(server.query(DUMP_SQL));
    const reference = await dumpAs(embeddedDb, [process.execPath, BIN], env());
    expect(served.get('tool_calls')?.length).toBeGreaterThan(200);
    expect(served).toEqual(reference);
  });
});
