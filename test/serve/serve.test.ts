// `toolcanon serve` and the readers of an owned data directory (issue 36 part 2), on the real
// engine (chdb's clickhouse-local behind src/serve/owner.ts's proxy), no mocks: the token is
// checked on every request (ClickHouse API and page), the token and owner files are 0600, a
// second process's report and query read through the running serve and answer as without it, a
// replay writes through it, a stale owner file is ignored and replaced, and the page in headless
// Chromium shows a row written after it loaded within 5 s, and a call appended to a file `watch`
// follows (writing through serve) within 5 s.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, mkdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { createClient } from '@clickhouse/client';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumOrSkip } from '../helpers/browser.ts';
import { makeTempDir } from '../helpers/db.ts';
import { eventLine } from '../helpers/events.ts';
import { Watch } from '../helpers/watch.ts';
import { buildHtmlReport } from '../../src/report/html.ts';
import { PriceTable } from '../../src/cost/prices.ts';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { ENGINE_SOCKET, findOwner, OWNER_FILE, startOwner, TOKEN_FILE } from '../../src/serve/owner.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const BIN = join(ROOT, 'bin/toolcanon.mjs');
// Made as the serve suite starts (a run filtered to another suite leaves nothing behind).
let tmp: ReturnType<typeof makeTempDir>;
let DB: string;
const executablePath = chromiumOrSkip('test/serve/serve.test.ts (the live page in Chromium)');

function toolcanon(args: string[], db = DB): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args, '--db', db], { cwd: dirname(db), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same without blocking this process (whose own owner must answer meanwhile). */
function toolcanonAsync(args: string[], db: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args, '--db', db], { cwd: dirname(db), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The TCP ports a process's network namespace listens on (its /proc/PID/net/tcp and tcp6, state 0A), with the address family. */
function listeningPorts(pid: number): { port: number; host: string }[] {
  const out: { port: number; host: string }[] = [];
  for (const [file, host] of [['tcp', '127.0.0.1'], ['tcp6', '::1']] as const) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${file}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A') out.push({ port: parseInt((f[1] ?? '').split(':').pop() ?? '', 16), host });
    }
  }
  return out;
}

/** What connecting from this process (another network namespace than the engine's) gives: 'connected' or the error code. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const c = connect({ host, port, timeout: 2_000 });
    c.once('connect', () => {
      c.destroy();
      resolve('connected');
    });
    c.once('timeout', () => {
      c.destroy();
      resolve('ETIMEDOUT');
    });
    c.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

/** GET /ping on the engine through its Unix socket, as uid (this process's when undefined): the status line, or the error code. */
function pingSocket(socket: string, uid?: number): string {
  const r = spawnSync(process.execPath, ['-e', `
    const req = require('node:http').request({ socketPath: process.argv[1], path: '/ping' }, (res) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => console.log(res.statusCode + ' ' + b.trim())); });
    req.on('error', (e) => console.log(e.code)); req.end();
  `, socket], { encoding: 'utf8', ...(uid === undefined ? {} : { uid, gid: uid }) });
  return r.stdout.trim() || r.stderr.trim();
}

/** The engine's own TCP listeners are not reachable from this process, on any port or family they use. */
async function expectEngineUnreachable(enginePid: number, logPorts: readonly number[] = []): Promise<{ port: number; host: string }[]> {
  expect(readlinkSync(`/proc/${enginePid}/ns/net`)).not.toBe(readlinkSync('/proc/self/ns/net'));
  const listening = listeningPorts(enginePid);
  expect(listening.length).toBeGreaterThan(0);
  for (const p of logPorts) expect(listening.map((l) => l.port)).toContain(p);
  for (const { port, host } of [...listening, ...logPorts.map((port) => ({ port, host: '127.0.0.1' }))]) {
    expect([`${host}:${port}`, await tryConnect(host, port)]).toEqual([`${host}:${port}`, 'ECONNREFUSED']);
  }
  return listening;
}

interface Served {
  child: ChildProcess;
  url: string;
  tokenFile: string;
  ownerFile: string;
  enginePid: number;
  isolated: boolean;
  startMs: number;
  stderr: string[];
}

/** Starts `toolcanon serve --db DB --format json` and waits for its address line. */
async function startServe(): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', '--db', DB, '--format', 'json'], { cwd: tmp.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr?.on('data', (c: Buffer) => stderr.push(c.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0] as string);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr.join('')}`)));
  });
  const o = JSON.parse(line) as { url: string; token_file: string; owner_file: string; engine_pid: number; engine_isolated: boolean; start_ms: number };
  return { child, url: o.url, tokenFile: o.token_file, ownerFile: o.owner_file, enginePid: o.engine_pid, isolated: o.engine_isolated, startMs: o.start_ms, stderr };
}

async function stopServe(s: Served): Promise<number | null> {
  if (s.child.exitCode !== null) return s.child.exitCode;
  const exited = new Promise<number | null>((resolve) => s.child.once('exit', (code) => resolve(code)));
  s.child.kill('SIGTERM');
  const code = await exited;
  // The engine stops with its owner; never left running by a test.
  const until = Date.now() + 25_000;
  while (alive(s.enginePid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  if (alive(s.enginePid)) process.kill(s.enginePid, 'SIGKILL');
  return code;
}

describe('toolcanon serve', () => {
  let served: Served;
  let token: string;
  const before: Record<string, string> = {};
  const USAGE = ['report', 'usage', '--format', 'json'];
  const TOOLS = ['report', 'tools', '--by', 'namespace', '--format', 'json'];
  const QUERY = ['query', 'SELECT harness, count() AS n, sum(input_bytes) AS b FROM tool_calls GROUP BY harness ORDER BY harness', '--format', 'json'];

  beforeAll(async () => {
    tmp = makeTempDir('serve');
    DB = join(tmp.dir, 'db');
    const replay = toolcanon(['replay', join(ROOT, 'fixtures'), '--format', 'json']);
    expect(replay.code, replay.stderr).toBe(0);
    // The answers without an owner: the embedded engine in the reading process.
    for (const [name, args] of [['usage', USAGE], ['tools', TOOLS], ['query', QUERY]] as const) {
      const r = toolcanon([...args]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/through process/);
      before[name] = r.stdout;
    }
    const html = toolcanon(['report', 'html', '--out', join(tmp.dir, 'before.html')]);
    expect(html.code, html.stderr).toBe(0);
    // Another user must be able to reach the files (only their modes guard them; see the test below).
    chmodSync(tmp.dir, 0o755);
    served = await startServe();
    token = readFileSync(served.tokenFile, 'utf8').trim();
  });

  afterAll(async () => {
    if (served !== undefined) await stopServe(served);
    tmp?.cleanup();
  });

  it('prints where it listens and where the token is, never the token; writes 0600 token and owner files', () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(served.tokenFile).toBe(join(DB, TOKEN_FILE));
    expect(served.ownerFile).toBe(join(DB, OWNER_FILE));
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(served.stderr.join('')).not.toContain(token);
    expect(statSync(served.tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(served.ownerFile).mode & 0o777).toBe(0o600);
    const owner = JSON.parse(readFileSync(served.ownerFile, 'utf8')) as Record<string, unknown>;
    expect(owner).toMatchObject({ pid: served.child.pid, url: served.url, tokenFile: served.tokenFile, command: 'toolcanon serve', enginePid: served.enginePid });
    expect(JSON.stringify(owner)).not.toContain(token);
    expect(findOwner(DB)).toMatchObject({ pid: served.child.pid, url: served.url, token });
  });

  it('refuses a missing or wrong token (401) on the ClickHouse API and the page; takes the right one however a client sends it', async () => {
    const q = `${served.url}/?query=${encodeURIComponent('SELECT count() FROM tool_calls')}`;
    const wrong = 'f'.repeat(64);
    const refused: [string, RequestInit][] = [
      [q, {}],
      [q, { headers: { 'X-ClickHouse-Key': wrong } }],
      [q, { headers: { Authorization: `Bearer ${wrong}` } }],
      [q, { headers: { Authorization: `Basic ${Buffer.from(`default:${wrong}`).toString('base64')}` } }],
      [q, { headers: { 'X-ClickHouse-Key': token.slice(0, 63) } }],
      [`${q}&password=${wrong}`, {}],
      [served.url, { method: 'POST', body: 'SELECT 1' }],
      [`${served.url}/`, {}],
      [`${served.url}/`, { headers: { cookie: `toolcanon_token=${wrong}` } }],
      [`${served.url}/?token=${wrong}`, { redirect: 'manual' }],
      [`${served.url}/toolcanon/state`, {}],
      [`${served.url}/ping`, {}],
    ];
    for (const [url, init] of refused) {
      const r = await fetch(url, init);
      expect(r.status, `${init.method ?? 'GET'} ${url.replace(served.url, '')} ${JSON.stringify(init.headers ?? {})}`).toBe(401);
      const body = await r.text();
      expect(body).toMatch(/^toolcanon: unauthorized: give the token in /);
      expect(body).not.toContain(token);
    }
    const count = (await (await fetch(q, { headers: { 'X-ClickHouse-Key': token } })).text()).trim();
    expect(Number(count)).toBeGreaterThan(0);
    for (const init of [
      { headers: { Authorization: `Bearer ${token}` } },
      { headers: { Authorization: `Basic ${Buffer.from(`default:${token}`).toString('base64')}` } },
      { headers: { Authorization: `Basic ${Buffer.from(`${token}:`).toString('base64')}` } },
    ]) {
      const r = await fetch(q, init);
      expect(r.status).toBe(200);
      expect((await r.text()).trim()).toBe(count);
    }
    expect((await (await fetch(`${q}&password=${token}`)).text()).trim()).toBe(count);
    const post = await fetch(served.url, { method: 'POST', body: 'SELECT count() FROM tool_calls', headers: { 'X-ClickHouse-Key': token } });
    expect((await post.text()).trim()).toBe(count);
    const page = await fetch(`${served.url}/`, { headers: { 'X-ClickHouse-Key': token } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
  });

  it('serves a ClickHouse client (@clickhouse/client) with the token as password, and refuses it without', async () => {
    const good = createClient({ url: served.url, password: token });
    const bad = createClient({ url: served.url, password: 'not-the-token' });
    try {
      const rows = (await (await good.query({ query: 'SELECT count() AS n FROM tool_calls FINAL', format: 'JSONEachRow' })).json()) as { n: string }[];
      expect(Number(rows[0]?.n)).toBeGreaterThan(0);
      await expect(bad.query({ query: 'SELECT 1', format: 'JSONEachRow' })).rejects.toThrow(/unauthorized/);
      // Parameters travel in the URL: the sink's lookups send up to 48 KiB a parameter (Node's
      // default 16 KB limit for a request head once answered 431 with an empty body: watch's
      // cycles failed with an empty message). Up to ClickHouse's own limit of a value (128 KiB).
      for (const n of [20_000, 100_000]) {
        const long = (await (await good.query({ query: 'SELECT length({p:String}) AS n', query_params: { p: 'x'.repeat(n) }, format: 'JSONEachRow' })).json()) as { n: string | number }[];
        expect(Number(long[0]?.n)).toBe(n);
      }
    } finally {
      await good.close();
      await bad.close();
    }
  });

  it('report usage, report tools and query in another process read through it and answer as without it', () => {
    for (const [name, args] of [['usage', USAGE], ['tools', TOOLS], ['query', QUERY]] as const) {
      const r = toolcanon([...args]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`through process ${served.child.pid} (toolcanon serve) at ${served.url}`);
      expect(r.stderr).not.toContain(token);
      expect(r.stdout, name).toBe(before[name]);
    }
    const html = toolcanon(['report', 'html', '--out', join(tmp.dir, 'through.html')]);
    expect(html.code, html.stderr).toBe(0);
    expect(html.stderr).toContain(`through process ${served.child.pid}`);
    const headline = (file: string): string | undefined => /"headline":\{[^}]*\}/.exec(readFileSync(file, 'utf8'))?.[0];
    expect(headline(join(tmp.dir, 'through.html'))).toBe(headline(join(tmp.dir, 'before.html')));
    expect(headline(join(tmp.dir, 'before.html'))).toMatch(/"tool_calls":[1-9]/);
  });

  it("the page's report, its queries run four at a time, is byte for byte the one they give one after another", async () => {
    const u = new URL(served.url);
    u.username = 'default';
    u.password = token;
    const sink = await ClickHouseSink.open({ clickhouseUrl: u.toString() }, { createDatabase: false });
    try {
      const options = { prices: new PriceTable(), source: 'test', generatedAt: new Date('2026-12-07T00:00:00Z') };
      const ms: Record<number, number> = {};
      const pages: Record<number, string> = {};
      for (const concurrency of [1, 4]) {
        const t = performance.now();
        pages[concurrency] = await buildHtmlReport(sink, { ...options, concurrency });
        ms[concurrency] = Math.round(performance.now() - t);
      }
      console.log(`serve page build: ${ms[1]} ms one query at a time, ${ms[4]} ms four at a time`);
      expect(pages[4]).toBe(pages[1]);
      expect(pages[1]).toContain('"tool_calls":');
    } finally {
      await sink.close();
    }
  });

  it('a second owner on the directory is refused in one line naming the first', () => {
    const r = spawnSync(process.execPath, [BIN, 'serve', '--db', DB], { cwd: tmp.dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(`toolcanon: the data directory ${DB} is already served by process ${served.child.pid} (toolcanon serve) at ${served.url}: read through it, or stop it first`);
  });

  it('another user cannot read the token or the owner file (mode 0600), so cannot pass the check', (ctx) => {
    // Switching users needs root; as another user this test has nothing to switch to.
    if (process.getuid?.() !== 0) ctx.skip();
    const asNobody = spawnSync(process.execPath, ['-e', `
      const fs = require('node:fs');
      for (const f of process.argv.slice(1)) { try { fs.readFileSync(f); console.log('read ' + f); } catch (e) { console.log(e.code + ' ' + f); } }
    `, served.tokenFile, served.ownerFile, join(DB, 'status')], { uid: 65534, gid: 65534, encoding: 'utf8' });
    expect(asNobody.status, asNobody.stderr).toBe(0);
    expect(asNobody.stdout.trim().split('\n')).toEqual([`EACCES ${served.tokenFile}`, `EACCES ${served.ownerFile}`, `read ${join(DB, 'status')}`]);
  });

  it('the engine is reachable only through its 0600 Unix socket: its own port is in another network namespace, the socket refuses another user', async (ctx) => {
    expect(served.isolated).toBe(true);
    const listening = await expectEngineUnreachable(served.enginePid);
    console.log(`serve: the engine listens on ${listening.map((l) => `${l.host}:${l.port}`).join(', ')} in its own network namespace; refused from here`);
    const socket = join(DB, ENGINE_SOCKET);
    const st = statSync(socket);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.uid).toBe(process.getuid?.());
    expect(pingSocket(socket)).toBe('200 Ok.');
    if (process.getuid?.() !== 0) ctx.skip();
    expect(pingSocket(socket, 65534)).toBe('EACCES');
  });

  it('a replay pointed at the directory writes through it; readers see the new row', () => {
    const file = join(tmp.dir, 'one.jsonl');
    writeFileSync(file, `${eventLine({ session_id: 'serve-write-1', call_id: 'sw-1', tool: 'Grep', input: { pattern: 'x' } })}\n`);
    const r = toolcanon(['replay', file, '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`served by process ${served.child.pid} (toolcanon serve): writing through it`);
    const q = toolcanon(['query', "SELECT count() AS n FROM tool_calls WHERE session_id = 'serve-write-1'", '--format', 'json']);
    expect(q.code, q.stderr).toBe(0);
    expect(q.stdout.trim()).toBe('{"n":1}');
  });

  describe.skipIf(executablePath === null)('the page at / in headless Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await chromium.launch({ executablePath: executablePath as string, args: ['--no-sandbox'] });
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('is refused without the token, and shows a row written after it loaded within 5 s', async () => {
      // Without the token: refused (headless Chromium cannot show the basic-auth prompt the 401 asks for).
      const stranger = await browser.newPage();
      await expect(stranger.goto(`${served.url}/`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
      expect((await stranger.request.get(`${served.url}/`)).status()).toBe(401);
      expect((await stranger.request.get(`${served.url}/toolcanon/state`)).status()).toBe(401);
      await stranger.close();

      const page = await browser.newPage();
      const consoleErrors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });
      await page.goto(`${served.url}/?token=${token}`);
      // The token went into a cookie and out of the address bar.
      expect(page.url()).toBe(`${served.url}/`);
      const calls = page.locator('[data-metric="tool_calls"]');
      const first = Number(await calls.getAttribute('data-value'));
      expect(first).toBeGreaterThan(0);

      const file = join(tmp.dir, 'live.jsonl');
      writeFileSync(file, `${eventLine({ session_id: 'serve-live-1', call_id: 'live-1', tool: 'Glob', input: { pattern: '*.ts' } })}\n`);
      const r = toolcanon(['replay', file, '--format', 'json']);
      expect(r.code, r.stderr).toBe(0);
      const written = performance.now();
      // Read again as the page reloads itself (a read during the reload retries).
      await expect.poll(async () => Number(await calls.getAttribute('data-value', { timeout: 1_000 }).catch(() => NaN)), { timeout: 5_000, interval: 100 }).toBe(first + 1);
      const shownMs = Math.round(performance.now() - written);
      console.log(`serve page: a row written showed on the page after ${shownMs} ms`);
      expect(shownMs).toBeLessThan(5_000);
      expect(consoleErrors).toEqual([]);
      await page.close();
    });
    it('shows a call appended to a file `watch` follows (writing through serve) within 5 s: the call and its result, then the next response begins', async () => {
      const logs = join(tmp.dir, 'watched');
      mkdirSync(join(logs, 'proj'), { recursive: true });
      const file = join(logs, 'proj', 'live-session.jsonl');
      const at = (ms: number): string => new Date(Date.now() + ms).toISOString();
      const common = { sessionId: 'serve-watch-1', isSidechain: false, cwd: '/work/repo', version: '2.1.30' };
      const usage = { input_tokens: 3, cache_creation_input_tokens: 120, cache_read_input_tokens: 20_000, output_tokens: 40 };
      const line = (o: object): string => `${JSON.stringify({ ...o, ...common })}\n`;
      writeFileSync(file, line({ type: 'user', uuid: 'u-0', timestamp: at(0), message: { role: 'user', content: 'list the files' } }));
      const w = new Watch(['claude-code', logs, '--db', DB]);
      try {
        await w.waitFor(/caught up: following/);
        expect(w.lines.join('\n')).toMatch(/through process \d+/);
        const page = await browser.newPage();
        await page.goto(`${served.url}/?token=${token}`);
        const calls = page.locator('[data-metric="tool_calls"]');
        const first = Number(await calls.getAttribute('data-value'));
        // A response with a tool call, its result, and the first line of the next response (which
        // says the first is written out: watch holds a response while it may still be streamed).
        appendFileSync(
          file,
          line({ type: 'assistant', uuid: 'a-1', timestamp: at(1), requestId: 'req_1', message: { model: 'claude-opus-4-6', id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_live_1', name: 'Bash', input: { command: 'ls' } }], usage } }) +
            line({ type: 'user', uuid: 'r-1', timestamp: at(2), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_live_1', content: 'a.ts b.ts' }] } }) +
            line({ type: 'assistant', uuid: 'a-2', timestamp: at(3), requestId: 'req_2', message: { model: 'claude-opus-4-6', id: 'msg_2', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'two files' }], usage } }),
        );
        const appended = performance.now();
        await expect.poll(async () => Number(await calls.getAttribute('data-value', { timeout: 1_000 }).catch(() => NaN)), { timeout: 5_000, interval: 100 }).toBe(first + 1);
        const shownMs = Math.round(performance.now() - appended);
        console.log(`serve page: a call appended to a watched file showed after ${shownMs} ms`);
        expect(shownMs).toBeLessThan(5_000);
        await page.close();
      } finally {
        w.kill('SIGTERM');
        expect(await w.exited).toBe(0);
      }
    });
  });

  it('SIGTERM: exit 0, owner file removed, engine stopped; the directory is then the embedded engine\'s again', async () => {
    console.log(`serve: started in ${served.startMs} ms`);
    const code = await stopServe(served);
    expect(code).toBe(0);
    expect(served.stderr.join('')).toContain(`stopped serving ${DB}`);
    expect(() => statSync(served.ownerFile)).toThrow();
    expect(alive(served.enginePid)).toBe(false);
    expect(findOwner(DB)).toBeUndefined();
    const r = toolcanon([...QUERY]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/through process/);
  });
});

describe('a stale owner file', () => {
  let stale: ReturnType<typeof makeTempDir>;
  let dir: string;
  beforeAll(() => {
    stale = makeTempDir('serve-stale');
    dir = join(stale.dir, 'db');
  });
  afterAll(() => stale?.cleanup());

  it('naming a process that is gone, or one whose engine does not hold the directory, is ignored and then replaced', async () => {
    const r = toolcanon(['replay', join(ROOT, 'fixtures/claude_code'), '--format', 'json'], dir);
    expect(r.code, r.stderr).toBe(0);
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(gone.stdout);
    expect(alive(deadPid)).toBe(false);
    const file = join(dir, OWNER_FILE);
    const write = (pid: number, enginePid: number): void =>
      writeFileSync(file, JSON.stringify({ pid, enginePid, url: 'http://127.0.0.1:9', tokenFile: join(dir, TOKEN_FILE), command: 'toolcanon serve', startedAt: '2026-12-01T00:00:00Z' }), { mode: 0o600 });
    // Dead pid; then a live pid (this process) that holds no lock on the directory (a reused pid).
    for (const [pid, enginePid] of [[deadPid, deadPid], [process.pid, process.pid]] as const) {
      write(pid, enginePid);
      expect(findOwner(dir)).toBeUndefined();
      const q = toolcanon(['query', 'SELECT count() AS n FROM tool_calls', '--format', 'json'], dir);
      expect(q.code, q.stderr).toBe(0);
      expect(q.stderr).toBe(`database: embedded ClickHouse at ${dir}\n`);
    }
    write(deadPid, deadPid);
    const owner = await startOwner(dir, { command: 'test owner' });
    try {
      // Where the engine says it listens (its own log), and every port its namespace listens on: none reachable from here.
      expect(owner.isolated).toBe(true);
      const logPorts = owner.engineLog().flatMap((l) => [.../Listening for \w+:\/\/[^\s]*:(\d+)/.exec(l)?.slice(1) ?? []]).map(Number);
      expect(logPorts.length, owner.engineLog().join('\n')).toBeGreaterThan(0);
      await expectEngineUnreachable(owner.enginePid, logPorts);
      expect(pingSocket(owner.engineSocket)).toBe('200 Ok.');
      if (process.getuid?.() === 0) expect(pingSocket(owner.engineSocket, 65534)).toBe('EACCES');
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, enginePid: owner.enginePid, url: owner.url, command: 'test owner' });
      expect(findOwner(dir)).toMatchObject({ pid: process.pid, url: owner.url, token: owner.token });
      const q = await toolcanonAsync(['query', 'SELECT count() AS n FROM tool_calls', '--format', 'json'], dir);
      expect(q.code, q.stderr).toBe(0);
      expect(q.stderr).toContain(`through process ${process.pid} (test owner)`);
    } finally {
      await owner.close();
    }
    expect(() => statSync(file)).toThrow();
    expect(() => statSync(owner.engineSocket)).toThrow();
    expect(alive(owner.enginePid)).toBe(false);
  });
});

describe('where the engine cannot get a network namespace of its own', () => {
  let bare: ReturnType<typeof makeTempDir>;
  let dir: string;
  beforeAll(() => {
    bare = makeTempDir('serve-unguarded');
    dir = join(bare.dir, 'db');
  });
  afterAll(() => bare?.cleanup());
  // No unshare: $TOOLCANON_UNSHARE names the program, here one that does not exist.
  const env = { ...process.env, TOOLCANON_UNSHARE: join('/nonexistent', 'unshare') };

  it('serve refuses in one line (no engine started, no owner file), and --unguarded-engine serves, saying what it means', async () => {
    const r = spawnSync(process.execPath, [BIN, 'serve', '--db', dir], { cwd: bare.dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(
      `toolcanon: the engine for ${dir} cannot run in a network namespace of its own (no unshare program: install util-linux), and its HTTP port would answer any local process without a credential: not started; give --unguarded-engine to serve it on 127.0.0.1 anyway`,
    );
    expect(() => statSync(join(dir, OWNER_FILE))).toThrow();

    const child = spawn(process.execPath, [BIN, 'serve', '--db', dir, '--unguarded-engine', '--format', 'json'], { cwd: bare.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const stderr: string[] = [];
    child.stderr?.on('data', (c: Buffer) => stderr.push(c.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0] as string);
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr.join('')}`)));
    });
    const o = JSON.parse(line) as { url: string; engine_pid: number; engine_isolated: boolean };
    const s: Served = { child, url: o.url, tokenFile: join(dir, TOKEN_FILE), ownerFile: join(dir, OWNER_FILE), enginePid: o.engine_pid, isolated: o.engine_isolated, startMs: 0, stderr };
    try {
      expect(o.engine_isolated).toBe(false);
      expect(stderr.join('')).toContain('toolcanon: WARNING: --unguarded-engine: the engine listens on 127.0.0.1 without a network namespace of its own; any local process that finds its port can read and write the tables without the token');
      // Still a 0600 socket and a token in front.
      expect(statSync(join(dir, ENGINE_SOCKET)).mode & 0o777).toBe(0o600);
      expect((await fetch(`${o.url}/?query=SELECT+1`)).status).toBe(401);
    } finally {
      expect(await stopServe(s)).toBe(0);
    }
  });
});
