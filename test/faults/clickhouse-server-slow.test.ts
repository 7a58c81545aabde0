// Issue 34 item 2, a slow ClickHouse server: the real server (scripts/clickhouse.sh, a database of
// this test's own) behind a TCP proxy of this test that holds back the server's answers. Every
// answer late by 50 ms: the replay completes and stores what a direct replay stores. An insert
// answered after toolcanon's timeout ($TOOLCANON_CLICKHOUSE_TIMEOUT_MS): the replay fails with one
// line, although the server went on and stored the insert; the rerun stores nothing twice and
// ends with the clean run's tables.
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYTICS_TABLE_NAMES } from '../../src/sink/clickhouse.ts';
import { createTestDatabase, dropTestDatabase, serverQuery } from '../helpers/clickhouse-server.ts';
import { cliEnv, engineServer } from '../helpers/engines.ts';
import { cli, metrics } from '../helpers/faults.ts';
import { DUMP_SQL, ROOT } from '../helpers/worker.ts';

const server = await engineServer('test/faults/clickhouse-server-slow.test.ts');
const FIXTURES = join(ROOT, 'fixtures');
const urls: string[] = [];
const proxies: Server[] = [];
afterAll(async () => {
  for (const p of proxies) await new Promise((r) => p.close(r));
  for (const u of urls) await dropTestDatabase(u);
});

/**
 * A proxy to the server whose answers to a request arrive `delayFor(request line)` ms late (the
 * request itself goes through at once). HTTP/1.1 without pipelining: one request at a time per
 * connection, so a late answer is never overtaken on its connection.
 */
async function slowProxy(target: string, delayFor: (requestLine: string) => number): Promise<{ port: number; requests: string[] }> {
  const { hostname, port: targetPort } = new URL(target);
  const requests: string[] = [];
  const proxy = createServer((client: Socket) => {
    const upstream = connect(Number(targetPort), hostname);
    let delay = 0;
    const later = (f: () => void): void => {
      if (delay === 0) f();
      else setTimeout(f, delay);
    };
    client.on('data', (chunk: Buffer) => {
      const line = chunk.toString('latin1', 0, Math.min(chunk.length, 4096)).split('\r\n')[0] ?? '';
      if (/^(GET|POST) \S+ HTTP\/1\.[01]$/.test(line)) {
        requests.push(line);
        delay = delayFor(line);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => later(() => client.destroyed || client.write(chunk)));
    upstream.on('end', () => later(() => client.end()));
    client.on('end', () => upstream.end());
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
  });
  proxies.push(proxy);
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return { port: (proxy.address() as AddressInfo).port, requests };
}

function jsonLines<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

async function dump(url: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(ANALYTICS_TABLE_NAMES.map((t) => [t, []]));
  for (const { t, r } of jsonLines<{ t: string; r: string }>(await serverQuery(url, `${DUMP_SQL} SETTINGS output_format_json_quote_64bit_integers = 1 FORMAT JSONEachRow`))) out.get(t)?.push(r);
  for (const rows of out.values()) rows.sort();
  return out;
}

async function plainAndFinal(url: string): Promise<Array<{ table: string; plain: string; final: string }>> {
  const sql = ANALYTICS_TABLE_NAMES.map((t) => `SELECT '${t}' AS table, toString((SELECT count() FROM ${t})) AS plain, toString(count()) AS final FROM ${t} FINAL`).join(' UNION ALL ');
  return jsonLines<{ table: string; plain: string; final: string }>(await serverQuery(url, `${sql} FORMAT JSONEachRow`)).sort((a, b) => a.table.localeCompare(b.table));
}

/** The database URL `url` names, reached through the proxy on `port`. */
const via = (url: string, port: number): string => {
  const u = new URL(url);
  u.port = String(port);
  return u.toString().replace(/\/$/, '');
};

describe.skipIf(server === null)('a slow ClickHouse server', () => {
  let cleanUrl: string;
  let reference: Map<string, string[]>;
  let total: number;

  beforeAll(async () => {
    cleanUrl = await createTestDatabase('slow_clean');
    urls.push(cleanUrl);
    const r = await cli(['replay', FIXTURES, '--clickhouse', cleanUrl, '--format', 'json', '--no-progress'], cliEnv());
    expect(r.code, r.stderr).toBe(0);
    total = metrics(r.stdout)['events_read'] as number;
    reference = await dump(cleanUrl);
  });

  it('every answer 50 ms late: the replay completes and stores what a direct replay stores', async () => {
    const url = await createTestDatabase('slow_late');
    urls.push(url);
    const proxy = await slowProxy(url, () => 50);
    const t0 = Date.now();
    const r = await cli(['replay', FIXTURES, '--clickhouse', via(url, proxy.port), '--format', 'json', '--no-progress'], cliEnv());
    console.log(`[slow server] replay of the fixtures with every answer 50 ms late: ${Date.now() - t0} ms, ${proxy.requests.length} requests`);
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.requests.length).toBeGreaterThan(10);
    expect(metrics(r.stdout)).toMatchObject({ events_read: total, events_already_stored: 0 });
    expect(await dump(url)).toEqual(reference);
  });

  it('an insert answered after the timeout: one line, exit 1; the server stored it anyway; the rerun stores nothing twice and equals the clean run', async () => {
    const url = await createTestDatabase('slow_timeout');
    urls.push(url);
    // Opening and the lookups answer at once; every INSERT (its query is in the URL) 2.5 s late.
    const proxy = await slowProxy(url, (line) => (/[?&]query=INSERT/i.test(line) ? 2_500 : 0));
    const r = await cli(['replay', FIXTURES, '--clickhouse', via(url, proxy.port), '--format', 'json', '--no-progress'], cliEnv({ TOOLCANON_CLICKHOUSE_TIMEOUT_MS: '1000' }));
    expect(r.code, r.stderr).toBe(1);
    const lines = r.stderr.trim().split('\n').filter((l) => !/^toolcanon: created the database |^Replaying /.test(l));
    expect(lines).toEqual([
      `toolcanon: the ClickHouse server at 127.0.0.1:${proxy.port} did not answer within 1 s: is it overloaded, or is this port not its HTTP interface (8123, or 8443 with https)? ($TOOLCANON_CLICKHOUSE_TIMEOUT_MS sets the wait)`,
    ]);
    // Not repeated: an insert sent once may have been stored.
    expect(proxy.requests.filter((l) => /[?&]query=INSERT/i.test(l))).toHaveLength(1);
    await new Promise((res) => setTimeout(res, 3_000));
    const left = await dump(url);
    const stored = [...left.values()].reduce((n, rows) => n + rows.length, 0);
    console.log(`[slow server] after the timed-out insert the server held ${stored} row(s)`);
    expect(stored, 'the server stored the insert it answered late').toBeGreaterThan(0);
    for (const [table, rows] of left) for (const row of rows) expect(reference.get(table), `${table}: a row the clean run does not have`).toContain(row);

    const again = await cli(['replay', FIXTURES, '--clickhouse', url, '--format', 'json', '--no-progress'], cliEnv());
    expect(again.code, again.stderr).toBe(0);
    expect(metrics(again.stdout)).toMatchObject({ events_read: total });
    expect(await dump(url)).toEqual(reference);
    expect(await plainAndFinal(url)).toEqual(await plainAndFinal(cleanUrl));
  });
});
