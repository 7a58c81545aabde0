// Issue 10, faults: `--clickhouse URL` with a server that is down, refuses the credentials, drops
// connections, or accepts and never answers. The servers are tiny node:http / node:net servers in
// this test (fault injection at the HTTP boundary, answering as ClickHouse does: a 401 with its
// exception text and code header); the CLI is the real one. Each failure is one line without
// user or password (set in the environment and looked for in everything printed), retried only
// where repeating is harmless, in a bounded time.
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { cli } from '../helpers/faults.ts';

const USER = 'alice-analyst';
const PASSWORD = 'Pw-7f3c9e1b-never-print';
const FILE_PASSWORD = 'file-pw-5d2a8c44';
const tmp = makeTempDir('ch-server');
const servers: Array<Server | NetServer> = [];
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  tmp.cleanup();
});

const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = { ...process.env, TOOLCANON_CLICKHOUSE_USER: USER, TOOLCANON_CLICKHOUSE_PASSWORD: PASSWORD };
  delete e['TOOLCANON_CLICKHOUSE_URL'];
  Object.assign(e, extra);
  for (const [k, v] of Object.entries(extra)) if (v === '') delete e[k];
  return e;
};

function listen<T extends Server | NetServer>(server: T): Promise<number> {
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** The output holds no credential of this test, in any form. */
function expectNoCredentials(r: { stdout: string; stderr: string }): void {
  for (const secret of [PASSWORD, FILE_PASSWORD, USER, Buffer.from(`${USER}:${PASSWORD}`).toString('base64')]) {
    expect(r.stdout, secret).not.toContain(secret);
    expect(r.stderr, secret).not.toContain(secret);
  }
}

function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  return lines[0] as string;
}

describe('a ClickHouse server that is down, refuses, drops or hangs', () => {
  it('down (connection refused): one line, retried (nothing reached the server), no credentials', async () => {
    const probe = createNetServer();
    const port = await listen(probe);
    await new Promise((r) => probe.close(r)); // nobody listens there now
    servers.splice(servers.indexOf(probe), 1);
    const r = await cli(['report', 'tools', '--clickhouse', `http://127.0.0.1:${port}/analytics`], env());
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe(`toolcanon: cannot reach the ClickHouse server at 127.0.0.1:${port} (connection refused, 3 attempts): is it running, and is --clickhouse right?`);
    expectNoCredentials(r);
  });

  it('401 (authentication failed, as ClickHouse answers it): one line naming the variables, not retried, no credentials even with --verbose', async () => {
    const seen: IncomingMessage[] = [];
    const server = createHttpServer((req, res) => {
      seen.push(req);
      req.resume();
      req.on('end', () => {
        res.writeHead(401, { 'Content-Type': 'text/plain; charset=UTF-8', 'X-ClickHouse-Exception-Code': '516' });
        res.end(`Code: 516. DB::Exception: ${USER}: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED) (version 25.8.1.1)\n`);
      });
    });
    const port = await listen(server);
    const expected = `toolcanon: the ClickHouse server at 127.0.0.1:${port} refused the credentials (authentication failed): set $TOOLCANON_CLICKHOUSE_USER and $TOOLCANON_CLICKHOUSE_PASSWORD (or $TOOLCANON_CLICKHOUSE_PASSWORD_FILE) to a user of that server`;
    for (const command of [['report', 'tools'], ['query', 'SELECT 1'], ['replay', join(process.cwd(), 'fixtures/codex')]]) {
      seen.length = 0;
      const r = await cli([...command, '--clickhouse', `http://127.0.0.1:${port}/analytics`], env());
      expect(r.code, command.join(' ')).toBe(1);
      expect(oneLine(r.stderr)).toBe(expected);
      expectNoCredentials(r);
      expect(seen).toHaveLength(1); // an authentication failure is not retried
      expect(seen[0]?.headers.authorization).toBe(`Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`);
    }
    const verbose = await cli(['report', 'tools', '--verbose', '--clickhouse', `http://127.0.0.1:${port}`], env());
    expect(verbose.stderr.split('\n')[0]).toBe(expected);
    expect(verbose.stderr).toMatch(/^\s+at /m); // the stack, asked for
    expectNoCredentials(verbose);

    // The password from a file; user and password in $TOOLCANON_CLICKHOUSE_URL (not argv) still work, never printed.
    const file = join(tmp.dir, 'ch-password');
    writeFileSync(file, `${FILE_PASSWORD}\n`, { mode: 0o600 });
    seen.length = 0;
    const fromFile = await cli(['report', 'tools', '--clickhouse', `http://127.0.0.1:${port}`], env({ TOOLCANON_CLICKHOUSE_PASSWORD: '', TOOLCANON_CLICKHOUSE_PASSWORD_FILE: file }));
    expect(oneLine(fromFile.stderr)).toBe(expected);
    expect(seen[0]?.headers.authorization).toBe(`Basic ${Buffer.from(`${USER}:${FILE_PASSWORD}`).toString('base64')}`);
    expectNoCredentials(fromFile);
    const fromEnvUrl = await cli(['report', 'tools'], env({ TOOLCANON_CLICKHOUSE_USER: '', TOOLCANON_CLICKHOUSE_PASSWORD: '', TOOLCANON_CLICKHOUSE_URL: `http://${USER}:${PASSWORD}@127.0.0.1:${port}/analytics` }));
    expect(oneLine(fromEnvUrl.stderr)).toBe(expected);
    expectNoCredentials(fromEnvUrl);
  });

  it('connections dropped before an answer: idempotent requests retried 3 times, then one line', async () => {
    let connections = 0;
    const server = createNetServer((socket) => {
      connections++;
      socket.once('data', () => socket.destroy()); // reads the request, closes without an answer
    });
    const port = await listen(server);
    const r = await cli(['report', 'tools', '--clickhouse', `http://127.0.0.1:${port}`], env());
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe(`toolcanon: the ClickHouse server at 127.0.0.1:${port} closed the connection before answering, 3 attempts: is this its HTTP port, and is it healthy? Run the command again (what is stored twice is kept once)`);
    expect(connections).toBe(3);
    expectNoCredentials(r);
  });

  it('accepts and never answers: one line after one timeout ($TOOLCANON_CLICKHOUSE_TIMEOUT_MS), not retried', async () => {
    let requests = 0;
    const server = createHttpServer((req) => {
      requests++;
      req.resume(); // and never answer
    });
    const port = await listen(server);
    const r = await cli(['replay', join(process.cwd(), 'fixtures/codex'), '--clickhouse', `http://127.0.0.1:${port}`], env({ TOOLCANON_CLICKHOUSE_TIMEOUT_MS: '1500' }));
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe(
      `toolcanon: the ClickHouse server at 127.0.0.1:${port} did not answer within 1.5 s: is it overloaded, or is this port not its HTTP interface (8123, or 8443 with https)? ($TOOLCANON_CLICKHOUSE_TIMEOUT_MS sets the wait)`,
    );
    expect(requests).toBe(1);
    expectNoCredentials(r);
  });
});

describe('credentials never on the command line, files read with clear errors', () => {
  it('--clickhouse with user:password@ is a usage error that does not repeat them, for every command', async () => {
    for (const command of [['report', 'tools'], ['replay', 'fixtures/codex'], ['consume', '--brokers', '127.0.0.1:1', '--topic', 't']]) {
      const r = await cli([...command, '--clickhouse', `https://${USER}:${PASSWORD}@ch.example:8443/analytics`], env());
      expect(r.code, command.join(' ')).toBe(2);
      expect(r.stderr.split('\n')[0]).toBe(
        'toolcanon: --clickhouse must not carry a user or password (the command line is visible to every user of this machine): give https://ch.example:8443/analytics and set $TOOLCANON_CLICKHOUSE_USER and $TOOLCANON_CLICKHOUSE_PASSWORD (or $TOOLCANON_CLICKHOUSE_PASSWORD_FILE)',
      );
      expectNoCredentials(r);
    }
    const broken = await cli(['report', 'tools', '--clickhouse', `http://${USER}:${PASSWORD}@@`], env());
    expect(broken.code).toBe(2);
    expectNoCredentials(broken);
  });

  it('a password file that is missing, a directory or empty, or given twice: one line, exit 2, before any request', async () => {
    const dir = join(tmp.dir, 'a-dir');
    mkdirSync(dir);
    const empty = join(tmp.dir, 'empty');
    writeFileSync(empty, '');
    const url = 'http://127.0.0.1:9'; // never reached: the settings are checked first
    const cases: Array<[Record<string, string>, string]> = [
      [{ TOOLCANON_CLICKHOUSE_PASSWORD: '', TOOLCANON_CLICKHOUSE_PASSWORD_FILE: join(tmp.dir, 'missing') }, `toolcanon: $TOOLCANON_CLICKHOUSE_PASSWORD_FILE: cannot read ${join(tmp.dir, 'missing')}: no such file`],
      [{ TOOLCANON_CLICKHOUSE_PASSWORD: '', TOOLCANON_CLICKHOUSE_PASSWORD_FILE: dir }, `toolcanon: $TOOLCANON_CLICKHOUSE_PASSWORD_FILE: cannot read ${dir}: it is a directory`],
      [{ TOOLCANON_CLICKHOUSE_PASSWORD: '', TOOLCANON_CLICKHOUSE_PASSWORD_FILE: empty }, `toolcanon: $TOOLCANON_CLICKHOUSE_PASSWORD_FILE: ${empty} is empty`],
      [{ TOOLCANON_CLICKHOUSE_PASSWORD_FILE: empty }, 'toolcanon: set $TOOLCANON_CLICKHOUSE_PASSWORD or $TOOLCANON_CLICKHOUSE_PASSWORD_FILE, not both'],
      [{ TOOLCANON_CLICKHOUSE_TIMEOUT_MS: 'soon' }, 'toolcanon: $TOOLCANON_CLICKHOUSE_TIMEOUT_MS must be a positive number of milliseconds, got "soon"'],
    ];
    for (const [extra, line] of cases) {
      const r = await cli(['report', 'tools', '--clickhouse', url], env(extra));
      expect(r.code, line).toBe(2);
      expect(oneLine(r.stderr)).toBe(line);
      expectNoCredentials(r);
    }
  });
});
