// Test access to a real ClickHouse server over HTTP: scripts/clickhouse.sh's loopback server
// (chdb's clickhouse-local serving ClickHouse's HTTP interface; see that script), or any server
// named by $TOOLCANON_TEST_CLICKHOUSE_URL.
//
// ensureClickHouseServer() uses $TOOLCANON_TEST_CLICKHOUSE_URL when set (it must answer /ping);
// otherwise the default port (CLICKHOUSE_HTTP_PORT, else 18123) when /ping answers there;
// otherwise it starts the repo's server with `bash scripts/clickhouse.sh start` (idempotent,
// serialised by a lock, so parallel test files share one server). As with the Kafka broker, the
// server is left running after the tests: stop it with `bash scripts/clickhouse.sh stop`.
//
// requireClickHouseServerOrSkip() / serverUrl() turn that into a base URL or null/undefined
// (skip). Under CI=true a skip is an error: a suite that silently skipped its server tests must
// not pass CI. Locally a skip prints a loud banner.
//
// createTestDatabase(name) makes a fresh, uniquely named database on that server and returns the
// URL to give `--clickhouse` (http://127.0.0.1:18123/<database>).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type ClickHouseServerAvailability = { url: string } | { skip: string };

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = 'scripts/clickhouse.sh';
const START_TIMEOUT_MS = 120_000;
export const ENV_URL = 'TOOLCANON_TEST_CLICKHOUSE_URL';

/** The server's base URL without a trailing slash or path (a path names a database elsewhere). */
function baseOf(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.username !== '' ? `${u.username}${u.password !== '' ? `:${u.password}` : ''}@` : ''}${u.host}`;
}

async function pings(url: string, timeoutMs = 3_000): Promise<boolean> {
  try {
    const res = await fetch(`${baseOf(url)}/ping`, { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok && (await res.text()).startsWith('Ok.');
  } catch {
    return false;
  }
}

function run(file: string, args: string[], timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr: error !== null && stderr === '' ? error.message : stderr });
    });
  });
}

async function startLocalServer(): Promise<ClickHouseServerAvailability> {
  const port = process.env['CLICKHOUSE_HTTP_PORT'] ?? '18123';
  const local = `http://127.0.0.1:${port}`;
  if (await pings(local)) return { url: local };
  if (!existsSync(`${ROOT}node_modules/ffi-rs`) || !existsSync(`${ROOT}node_modules/chdb`)) {
    return { skip: `${ENV_URL} is not set, nothing answers ${local}/ping, and chdb/ffi-rs are not installed (npm ci)` };
  }
  const result = await run('bash', [SCRIPT, 'start'], START_TIMEOUT_MS);
  const line = result.stdout
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('CLICKHOUSE_URL='));
  if (result.code !== 0 || line === undefined) {
    const tail = result.stderr.trim().split('\n').slice(-15).join('\n');
    return { skip: `bash ${SCRIPT} start failed (exit ${result.code}):\n${tail}` };
  }
  return { url: line.slice('CLICKHOUSE_URL='.length) };
}

let pending: Promise<ClickHouseServerAvailability> | undefined;

/** The server to test against, or why there is none. Memoised per process. */
export function ensureClickHouseServer(): Promise<ClickHouseServerAvailability> {
  pending ??= (async (): Promise<ClickHouseServerAvailability> => {
    const fromEnv = process.env[ENV_URL]?.trim();
    if (fromEnv !== undefined && fromEnv !== '') {
      const url = baseOf(fromEnv);
      return (await pings(url, 10_000)) ? { url } : { skip: `${ENV_URL}=${fromEnv} does not answer ${url}/ping` };
    }
    return startLocalServer();
  })();
  return pending;
}

/**
 * The server's base URL, or null when the server tests should be skipped. Under CI=true a skip
 * throws instead (so the test file fails); locally it prints a loud warning banner.
 */
export function requireClickHouseServerOrSkip(result: ClickHouseServerAvailability, suite = 'ClickHouse server tests'): string | null {
  if ('url' in result) return result.url;
  if (process.env['CI'] === 'true') {
    throw new Error(`${suite} cannot run under CI=true: ${result.skip}`);
  }
  const bar = '!'.repeat(78);
  console.warn(
    `\n${bar}\n!! SKIPPING ${suite}: no ClickHouse server.\n!! ${result.skip.split('\n').join('\n!! ')}\n` +
      `!! Set ${ENV_URL}=http://host:port, or run: npm ci && bash ${SCRIPT} start\n${bar}\n`,
  );
  return null;
}

/** The server's base URL (http://127.0.0.1:PORT), or undefined (skip; an error under CI=true). */
export async function serverUrl(suite?: string): Promise<string | undefined> {
  return requireClickHouseServerOrSkip(await ensureClickHouseServer(), suite) ?? undefined;
}

/** Runs one statement on the server (base URL or a database URL) and returns the response body. */
export async function serverQuery(url: string, sql: string): Promise<string> {
  const u = new URL(url);
  const database = u.pathname.replace(/^\/+|\/+$/g, '');
  const target = new URL(`${baseOf(url)}/`);
  if (database !== '') target.searchParams.set('database', database);
  // A kept-alive connection the server closed while idle never carried the statement: sent
  // again, once, on a new connection. Seen on a loaded machine as "fetch failed" with cause
  // UND_ERR_SOCKET ("other side closed"), and as cause EPIPE ("write EPIPE": the request written
  // into the closed socket), e.g. when a file's server half starts after minutes of its embedded
  // half, on the connection its first /ping left open.
  const send = (): Promise<Response> => fetch(target, { method: 'POST', body: sql, signal: AbortSignal.timeout(60_000) });
  const res = await send().catch((error: unknown) => {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code === 'UND_ERR_SOCKET' || code === 'EPIPE') return send();
    throw error;
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse server ${baseOf(url)} answered ${res.status} to ${sql.slice(0, 200)}: ${text.trim()}`);
  return text;
}

let counter = 0;

/**
 * Creates a fresh database on the test server, named from `name` plus the pid, time and a
 * counter (so parallel test files and reruns never share one), and returns its URL for
 * `--clickhouse`. Throws when there is no server: call it only where the server is required.
 */
export async function createTestDatabase(name: string): Promise<string> {
  const result = await ensureClickHouseServer();
  if (!('url' in result)) throw new Error(`no ClickHouse server: ${result.skip}`);
  const stem = name.toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 40) || 'db';
  const database = `tc_test_${stem}_${process.pid}_${Date.now().toString(36)}_${++counter}`;
  await serverQuery(result.url, `DROP DATABASE IF EXISTS ${database}`);
  await serverQuery(result.url, `CREATE DATABASE ${database}`);
  return `${result.url}/${database}`;
}

/** Drops the database a createTestDatabase URL names (for afterAll; ignores a gone server). */
export async function dropTestDatabase(url: string): Promise<void> {
  const database = new URL(url).pathname.replace(/^\/+|\/+$/g, '');
  if (!/^[A-Za-z0-9_]+$/.test(database)) throw new Error(`not a test database URL: ${url}`);
  try {
    await serverQuery(baseOf(url), `DROP DATABASE IF EXISTS ${database} SYNC`);
  } catch {
    // The server may have been stopped already; its data directory is the script's to clean.
  }
}
