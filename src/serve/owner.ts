// The owner of an embedded data directory: the one process whose engine holds the directory,
// serving every other process through ClickHouse's own HTTP interface behind a token.
//
//   const owner = await startOwner(dir, { command: 'toolcanon watch' });
//   // this process writes and reads through owner.clickhouseUrl with the server sink:
//   const sink = await ClickHouseSink.open({ clickhouseUrl: owner.clickhouseUrl });
//   // other processes: findOwner(dir) -> { url, token }: ClickHouse's HTTP API, token as password
//   await owner.close(); // owner file removed, proxy closed, engine shut down cleanly
//
// How it works:
// - The engine is chdb's clickhouse-local, started by scripts/clickhouse-server.mjs in its
//   `--serve` mode (`chdb_query_cmdline` with `--path DIR --http_port P --listen_host=127.0.0.1
//   --query="SYSTEM START LISTEN HTTP" --interactive`, through ffi-rs) as a child of this process
//   that serves until its stdin closes. This process holds that stdin: close() ends it (a clean
//   shutdown), and so does this process's death, even by SIGKILL (the engine never outlives it).
//   The engine holds the directory's lock (`status`) as the embedded engine does, so every other
//   toolcanon process sees the directory as in use.
// - That listener enforces no credential, so it is bound to 127.0.0.1 on a free port and a small
//   Node proxy (also on 127.0.0.1) fronts it: every request must carry the token (X-ClickHouse-Key,
//   `Authorization: Bearer`, basic auth as user or password, `?password=`/`?token=`, or the page's
//   cookie); the proxy strips it before forwarding (the engine refuses a password it does not know).
// - The token is 32 random bytes (hex) in DIR/toolcanon.token, mode 0600: only the directory's
//   owner (and root) can read it. It is kept across restarts (dashboards keep working); delete the
//   file for a new one. The owner file DIR/toolcanon.owner.json (mode 0600) names the pid, the
//   engine's pid, the proxy's URL and the token file; it is removed on close() and on exit. One
//   whose process is gone, or whose engine does not hold the lock, is stale: ignored by
//   findOwner, replaced by the next startOwner.
// - The proxy also serves the HTML report at `/` (src/serve/page.ts, loaded on first request),
//   which reloads itself when the tables change.
//
// Limit: the engine's own port is on 127.0.0.1 and answers anyone who connects to it; the token
// guards the proxy's port, the one every client is given. See docs/live.md ("serve and readers").
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { createServer, request as httpRequest, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { claimEngineStart, DataDirError, lockHolder, prepareDataDir } from '../sink/datadir.ts';
import { errorCode } from '../util/fs-error.ts';

export const OWNER_FILE = 'toolcanon.owner.json';
export const TOKEN_FILE = 'toolcanon.token';
/** The cookie the page's `/?token=…` sets, so that a browser needs the token once. */
export const TOKEN_COOKIE = 'toolcanon_token';
const LOOPBACK = '127.0.0.1';
const STOP_GRACE_MS = 20_000;
const START_TIMEOUT_MS = 60_000;

/** What the owner file says (JSON, mode 0600). */
export interface OwnerFile {
  readonly pid: number;
  /** The engine process (holds the directory's lock). */
  readonly enginePid: number;
  /** The token-checking proxy: ClickHouse's HTTP API and the page at `/`. */
  readonly url: string;
  readonly tokenFile: string;
  /** e.g. `toolcanon serve`, `toolcanon watch`. */
  readonly command: string;
  readonly startedAt: string;
}

/** A live owner, as another process finds it. */
export interface FoundOwner extends OwnerFile {
  readonly token: string;
}

export interface OwnerOptions {
  /** Port of the proxy on 127.0.0.1 (default 0: a free port). */
  readonly port?: number | undefined;
  /** The owning command, as the owner file and error messages name it (default `toolcanon serve`). */
  readonly command?: string | undefined;
  /** Called once when the engine stops without close() (killed, crashed); the owner file is removed first. */
  readonly onEngineExit?: ((line: string) => void) | undefined;
  /** How long the engine may take to answer /ping (default 60 s). */
  readonly startTimeoutMs?: number | undefined;
}

export interface Owner {
  readonly dataDir: string;
  /** The proxy's base URL (http://127.0.0.1:PORT): for other processes, with the token. */
  readonly url: string;
  readonly token: string;
  readonly tokenFile: string;
  readonly ownerFile: string;
  /** The engine's own URL, without credential: for this process's writes and reads only (never hand it out). */
  readonly clickhouseUrl: string;
  readonly enginePid: number;
  /** How long the start took (engine up, proxy listening, owner file written). */
  readonly startMs: number;
  /** Removes the owner file, closes the proxy, shuts the engine down (stdin closed; SIGKILL after 20 s). Idempotent. */
  close(): Promise<void>;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

function readOwnerFile(dir: string): OwnerFile | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as Partial<OwnerFile>;
    if (typeof v.pid !== 'number' || typeof v.enginePid !== 'number' || typeof v.url !== 'string' || typeof v.tokenFile !== 'string') return undefined;
    return { pid: v.pid, enginePid: v.enginePid, url: v.url, tokenFile: v.tokenFile, command: String(v.command ?? 'toolcanon'), startedAt: String(v.startedAt ?? '') };
  } catch {
    return undefined;
  }
}

/** Whether the owner file's processes are alive and its engine holds the directory (not a reused pid). */
function isLive(dir: string, info: OwnerFile): boolean {
  if (!processAlive(info.pid) || !processAlive(info.enginePid)) return false;
  const holder = lockHolder(dir);
  if (holder !== undefined) return holder.pid === info.enginePid;
  // No lock on the status file: on Linux (/proc/locks) that means no engine holds the directory.
  return process.platform !== 'linux';
}

/**
 * The live owner of `dataDir`, with its token, or undefined: no owner file, a stale one (its
 * process is gone, or its engine does not hold the directory), or one this user cannot read.
 * Throws a DataDirError when an owner is live but its token file cannot be read (another user's
 * directory): the caller cannot read through it, and must not fall back to the locked engine.
 */
export function findOwner(dataDir: string): FoundOwner | undefined {
  const dir = resolve(dataDir);
  const info = readOwnerFile(dir);
  if (info === undefined || !isLive(dir, info)) return undefined;
  let token: string;
  try {
    token = readFileSync(info.tokenFile, 'utf8').trim();
  } catch (error) {
    throw new DataDirError(`the data directory ${dir} is served by process ${info.pid} (${info.command}), but its token file ${info.tokenFile} cannot be read (${errorCode(error) ?? 'error'}): only the directory's owner may read through it`, { cause: error });
  }
  return { ...info, token };
}

/**
 * Forgets this process's credentials for a ClickHouse server ($TOOLCANON_CLICKHOUSE_USER,
 * _PASSWORD, _PASSWORD_FILE): they win over a URL's, and a process whose target is an embedded
 * directory (no server URL) uses none, so an owner's engine (which refuses a password it does not
 * know) and its proxy (which wants its token) must not be sent them.
 */
export function forgetServerCredentials(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of ['TOOLCANON_CLICKHOUSE_USER', 'TOOLCANON_CLICKHOUSE_PASSWORD', 'TOOLCANON_CLICKHOUSE_PASSWORD_FILE']) delete env[name];
}

/** Writes `text` to `path` through a new file of mode 0600 renamed over it (never follows a link there). */
function writePrivate(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** The directory's token: the one in its token file when that is ours, 0600 and well-formed; else a new one. */
function ensureToken(path: string): string {
  try {
    const fd = openSync(path, 'r');
    try {
      const s = fstatSync(fd);
      const text = readFileSync(fd, 'utf8').trim();
      if (s.isFile() && (s.mode & 0o777) === 0o600 && s.uid === process.getuid?.() && /^[0-9a-f]{64}$/.test(text)) return text;
    } finally {
      closeSync(fd);
    }
  } catch {
    // missing or unreadable: a new one
  }
  const token = randomBytes(32).toString('hex');
  writePrivate(path, `${token}\n`);
  return token;
}

/** A port free on 127.0.0.1 now (the engine binds it a moment later; a lost race is retried). */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createNetServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, LOOPBACK, () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolvePort(port));
    });
  });
}

const ENGINE_SCRIPT = fileURLToPath(new URL('../../scripts/clickhouse-server.mjs', import.meta.url));

interface Engine {
  readonly child: ChildProcess;
  readonly port: number;
  /** The engine's last lines on stderr (its log), for a failure's message. */
  tail(): string;
}

function ping(port: number): Promise<boolean> {
  return new Promise((done) => {
    const req = httpRequest({ host: LOOPBACK, port, path: '/ping', timeout: 2_000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => done(res.statusCode === 200 && body.startsWith('Ok.')));
    });
    req.on('error', () => done(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Starts the engine on `dir` and waits for /ping; undefined when the port was taken meanwhile (try another). */
async function startEngine(dir: string, timeoutMs: number): Promise<Engine | undefined> {
  const port = await freePort();
  const child = spawn(process.execPath, [ENGINE_SCRIPT, '--serve', '--path', dir, '--port', String(port), '--host', LOOPBACK], { stdio: ['pipe', 'ignore', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  });
  child.stdin?.on('error', () => {});
  let exited = false;
  child.once('exit', () => (exited = true));
  const tail = (): string => [...lines, partial].filter((l) => l.trim() !== '').slice(-8).join(' | ');
  const deadline = Date.now() + timeoutMs;
  while (!exited) {
    if (await ping(port)) return { child, port, tail };
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new DataDirError(`the engine on the data directory ${dir} did not answer within ${Math.round(timeoutMs / 1000)} s: ${tail() || 'no message'}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const why = tail();
  if (/Address already in use|bind/i.test(why)) return undefined;
  throw new DataDirError(`the engine could not start on the data directory ${dir}: ${why.replace(/.*DB::Exception: /, '') || 'it exited at once'}`);
}

/** The token a request carries, wherever a ClickHouse client or the page puts it. */
function tokensOf(req: IncomingMessage, url: URL): string[] {
  const found: string[] = [];
  const key = req.headers['x-clickhouse-key'];
  if (typeof key === 'string') found.push(key);
  const auth = req.headers.authorization ?? '';
  const bearer = /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
  if (bearer !== undefined) found.push(bearer);
  const basic = /^Basic\s+(\S+)$/i.exec(auth)?.[1];
  if (basic !== undefined) {
    const text = Buffer.from(basic, 'base64').toString('utf8');
    const at = text.indexOf(':');
    // As the password (any user), or as the user name (a client that takes only one field).
    if (at >= 0) found.push(text.slice(at + 1), text.slice(0, at));
  }
  for (const p of ['password', 'token']) {
    const v = url.searchParams.get(p);
    if (v !== null) found.push(v);
  }
  const cookie = new RegExp(`(?:^|;\\s*)${TOKEN_COOKIE}=([0-9a-f]+)`).exec(req.headers.cookie ?? '')?.[1];
  if (cookie !== undefined) found.push(cookie);
  return found;
}

function matches(candidate: string, token: Buffer): boolean {
  const c = Buffer.from(candidate);
  return c.length === token.length && timingSafeEqual(c, token);
}

/** Headers and URL parameters that carry a credential: never forwarded to the engine. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-clickhouse-key', 'x-clickhouse-user', 'cookie', 'host', 'connection', 'keep-alive']);
const CREDENTIAL_PARAMS = ['user', 'password', 'token'];

/** What the proxy serves itself after the token check; a ClickHouse request goes to the engine. */
export interface PageRoutes {
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>;
  close(): Promise<void>;
}

function refuse(res: ServerResponse, tokenFile: string): void {
  res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Basic realm="toolcanon (password: the token file of the data directory)"' });
  res.end(`toolcanon: unauthorized: give the token in ${tokenFile} (X-ClickHouse-Key, Authorization: Bearer, basic auth password, or open /?token=… once in a browser)\n`);
}

function startProxy(port: number, token: string, tokenFile: string, enginePort: number, pages: () => Promise<PageRoutes>): Promise<Server> {
  const secret = Buffer.from(token);
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${LOOPBACK}`);
    if (!tokensOf(req, url).some((t) => matches(t, secret))) {
      req.resume();
      refuse(res, tokenFile);
      return;
    }
    // The page's first visit: the token goes into a cookie and out of the address bar.
    if (req.method === 'GET' && url.pathname === '/' && url.searchParams.has('token') && !url.searchParams.has('query')) {
      res.writeHead(303, { location: '/', 'set-cookie': `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`, 'cache-control': 'no-store' });
      res.end();
      return;
    }
    void (async () => {
      if (await (await pages()).handle(req, res, url)) return;
      for (const p of CREDENTIAL_PARAMS) url.searchParams.delete(p);
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !CREDENTIAL_HEADERS.has(name)) headers[name] = value;
      const upstream = httpRequest({ host: LOOPBACK, port: enginePort, method: req.method, path: `${url.pathname}${url.search}`, headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', (error) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`toolcanon: the engine did not answer (${errorCode(error) ?? error.message})\n`);
      });
      req.pipe(upstream);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`toolcanon: ${String((error as Error)?.message ?? error).split('\n')[0]}\n`);
    });
  });
  server.on('close', () => agent.destroy());
  return new Promise((resolveServer, reject) => {
    server.once('error', (error) => {
      reject(errorCode(error) === 'EADDRINUSE' ? new DataDirError(`port ${port} on ${LOOPBACK} is in use: give another --port (or none: a free one)`) : error);
    });
    server.listen(port, LOOPBACK, () => resolveServer(server));
  });
}

/**
 * Makes this process the owner of `dataDir` (created when missing): starts the engine on it,
 * the token-checking proxy in front, and writes the owner file. Throws a DataDirError (one line)
 * when another process holds the directory (an owner, or any embedded engine) or the engine
 * cannot start. The caller writes and reads through `clickhouseUrl` (the server sink), and calls
 * close() when done (SIGINT/SIGTERM handling is the caller's). This process's ClickHouse server
 * credentials ($TOOLCANON_CLICKHOUSE_USER, _PASSWORD, _PASSWORD_FILE) are forgotten: the engine
 * takes none and refuses a password it does not know.
 */
export async function startOwner(dataDir: string, opts: OwnerOptions = {}): Promise<Owner> {
  const started = performance.now();
  const dir = resolve(dataDir);
  const command = opts.command ?? 'toolcanon serve';
  prepareDataDir(dir);
  forgetServerCredentials();
  const current = findOwner(dir);
  if (current !== undefined) throw new DataDirError(`the data directory ${dir} is already served by process ${current.pid} (${current.command}) at ${current.url}: read through it, or stop it first`);
  // One process at a time starts an engine here; one that holds the directory is refused.
  const release = await claimEngineStart(dir);
  let engine: Engine | undefined;
  try {
    for (let attempt = 0; engine === undefined; attempt++) {
      if (attempt === 3) throw new DataDirError(`the engine could not bind a free port on ${LOOPBACK} after 3 attempts`);
      engine = await startEngine(dir, opts.startTimeoutMs ?? START_TIMEOUT_MS);
    }
  } finally {
    release();
  }
  const eng = engine;
  const ownerFile = join(dir, OWNER_FILE);
  const tokenFile = join(dir, TOKEN_FILE);
  const clickhouseUrl = `http://${LOOPBACK}:${eng.port}`;
  let closing = false;
  let pageRoutes: Promise<PageRoutes> | undefined;
  const pages = (): Promise<PageRoutes> => (pageRoutes ??= import('./page.ts').then((m) => m.pageRoutes(clickhouseUrl, dir)));
  const removeOwnerFile = (): void => {
    if (readOwnerFile(dir)?.pid === process.pid) rmSync(ownerFile, { force: true });
  };
  const onExit = (): void => removeOwnerFile();
  let server: Server | undefined;
  try {
    const token = ensureToken(tokenFile);
    server = await startProxy(opts.port ?? 0, token, tokenFile, eng.port, pages);
    const url = `http://${LOOPBACK}:${(server.address() as AddressInfo).port}`;
    const info: OwnerFile = { pid: process.pid, enginePid: eng.child.pid as number, url, tokenFile, command, startedAt: new Date().toISOString() };
    writePrivate(ownerFile, `${JSON.stringify(info, null, 2)}\n`);
    process.on('exit', onExit);
    const proxy = server;
    const engineGone = new Promise<void>((done) => eng.child.once('exit', () => done()));
    eng.child.once('exit', (code, signal) => {
      if (closing) return;
      removeOwnerFile();
      proxy.close();
      opts.onEngineExit?.(`the engine serving ${dir} stopped (${signal ?? `exit ${code}`}): ${eng.tail() || 'no message'}`);
    });
    const close = async (): Promise<void> => {
      if (closing) return engineGone;
      closing = true;
      process.off('exit', onExit);
      removeOwnerFile();
      proxy.closeAllConnections();
      await new Promise<void>((done) => proxy.close(() => done()));
      if (pageRoutes !== undefined) await (await pageRoutes).close().catch(() => undefined);
      eng.child.stdin?.end();
      const kill = setTimeout(() => eng.child.kill('SIGKILL'), STOP_GRACE_MS);
      await engineGone;
      clearTimeout(kill);
    };
    return { dataDir: dir, url, token, tokenFile, ownerFile, clickhouseUrl, enginePid: info.enginePid, startMs: Math.round(performance.now() - started), close };
  } catch (error) {
    process.off('exit', onExit);
    removeOwnerFile();
    server?.close();
    eng.child.stdin?.end();
    throw error;
  }
}
