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
//   --query="SYSTEM START LISTEN HTTP" --interactive`, through ffi-rs). It holds the directory's
//   lock (`status`) as the embedded engine does, so every other toolcanon process sees the
//   directory as in use.
// - That listener enforces no credential (any request is user `default`; a password is not
//   checked), so no other process may reach it. It runs in a network namespace of its own
//   (`unshare -rn`, or `unshare -n` as root: the 127.0.0.1 it listens on is a loopback no other
//   process shares), beside scripts/engine-bridge.mjs, the one way in: a Unix socket in the data
//   directory, DIR/toolcanon.engine.sock, made with mode 0600 (only the directory's owner, and
//   root, can connect; the file system is shared across network namespaces). The bridge is this
//   process's child and holds the engine's stdin: close() ends the bridge's stdin, the bridge ends
//   the engine's (a clean shutdown); the death of this process, even by SIGKILL, ends both pipes,
//   so the engine never outlives it. Where the namespace cannot be made (no `unshare`, user
//   namespaces disabled, not Linux) startOwner refuses in one line, unless `unguardedEngine` is
//   given: then the engine listens on the host's 127.0.0.1, where any local process can use it.
// - In front, a small Node proxy on 127.0.0.1 is what every client is given: every request must
//   carry the token (X-ClickHouse-Key, `Authorization: Bearer`, basic auth as user or password,
//   `?password=`/`?token=`, or the page's cookie); the proxy strips it and forwards the request
//   through the bridge's socket. This process's own writes and reads go through the proxy too,
//   with the token (`clickhouseUrl`).
// - The token is 32 random bytes (hex) in DIR/toolcanon.token, mode 0600: only the directory's
//   owner (and root) can read it. It is kept across restarts (dashboards keep working); delete the
//   file for a new one. The owner file DIR/toolcanon.owner.json (mode 0600) names the pid, the
//   engine's pid, the proxy's URL and the token file; it is removed on close() and on exit. One
//   whose process is gone, or whose engine does not hold the lock, is stale: ignored by
//   findOwner (src/serve/find.ts), replaced by the next startOwner.
// - The proxy also serves the HTML report at `/` (src/serve/page.ts, loaded on first request),
//   which reloads itself when the tables change.
// See docs/live.md ("What guards it").
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, writeSync } from 'node:fs';
import { createServer, request as httpRequest, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropImportMirrors } from '../pipeline/import-mirror.ts';
import { dropReportCache } from '../report/cache.ts';
import { claimEngineStart, DataDirError, lockHolder, prepareDataDir } from '../sink/datadir.ts';
import { findOwner, forgetServerCredentials, OWNER_FILE, processAlive, readOwnerFile, TOKEN_FILE, type OwnerFile } from './find.ts';
import { errorCode } from '../util/fs-error.ts';

export { findOwner, forgetServerCredentials, OWNER_FILE, TOKEN_FILE, type FoundOwner, type OwnerFile } from './find.ts';
/** The cookie the page's `/?token=…` sets, so that a browser needs the token once. */
export const TOKEN_COOKIE = 'toolcanon_token';
/** The bridge's Unix socket in the data directory (mode 0600): the only way to the engine. */
export const ENGINE_SOCKET = 'toolcanon.engine.sock';
const LOOPBACK = '127.0.0.1';
const STOP_GRACE_MS = 20_000;
const START_TIMEOUT_MS = 60_000;

export interface OwnerOptions {
  /** Port of the proxy on 127.0.0.1 (default 0: a free port). */
  readonly port?: number | undefined;
  /** The owning command, as the owner file and error messages name it (default `toolcanon serve`). */
  readonly command?: string | undefined;
  /** Called once when the engine stops without close() (killed, crashed); the owner file is removed first. */
  readonly onEngineExit?: ((line: string) => void) | undefined;
  /** How long the engine may take to answer /ping (default 60 s). */
  readonly startTimeoutMs?: number | undefined;
  /**
   * Run the engine without a network namespace of its own, where one cannot be made: its port on
   * the host's 127.0.0.1 then answers any local process, without a credential (default false:
   * refuse to start instead).
   */
  readonly unguardedEngine?: boolean | undefined;
}

export interface Owner {
  readonly dataDir: string;
  /** The proxy's base URL (http://127.0.0.1:PORT): for other processes, with the token. */
  readonly url: string;
  readonly token: string;
  readonly tokenFile: string;
  readonly ownerFile: string;
  /** The proxy's URL with the token as password: this process's own writes and reads (never print it). */
  readonly clickhouseUrl: string;
  /** The bridge's Unix socket (mode 0600) to the engine. */
  readonly engineSocket: string;
  readonly enginePid: number;
  /** True when the engine runs in a network namespace of its own (false only with unguardedEngine). */
  readonly isolated: boolean;
  /** The engine's log lines so far (its stderr, the last 200): where it says what it listens on. */
  engineLog(): string[];
  /** How long the start took (engine up, proxy listening, owner file written). */
  readonly startMs: number;
  /** Removes the owner file, closes the proxy, shuts the engine down (stdin closed; SIGKILL after 20 s). Idempotent. */
  close(): Promise<void>;
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

const BRIDGE_SCRIPT = fileURLToPath(new URL('../../scripts/engine-bridge.mjs', import.meta.url));

interface Engine {
  /** The bridge (scripts/engine-bridge.mjs): its exit is the engine's. */
  readonly child: ChildProcess;
  readonly enginePid: number;
  readonly port: number;
  readonly isolated: boolean;
  /** The engine's log lines (the last 200). */
  log(): string[];
  /** The last lines, for a failure's message. */
  tail(): string;
}

/** An engine that could not be put in a network namespace of its own: refused unless the caller allows it unguarded. */
export class EngineGuardError extends DataDirError {}

/** The unshare program ($TOOLCANON_UNSHARE, else on PATH, else the usual places), or undefined. */
function findUnshare(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env['TOOLCANON_UNSHARE'] !== undefined) return env['TOOLCANON_UNSHARE'] && existsSync(env['TOOLCANON_UNSHARE']) ? env['TOOLCANON_UNSHARE'] : undefined;
  const dirs = [...(env['PATH'] ?? '').split(delimiter).filter((d) => d !== ''), '/usr/bin', '/bin', '/usr/sbin', '/sbin'];
  return dirs.map((d) => join(d, 'unshare')).find((f) => existsSync(f));
}

function netnsOf(pid: number | 'self'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}

function refuseUnguarded(dir: string, why: string): EngineGuardError {
  return new EngineGuardError(
    `the engine for ${dir} cannot run in a network namespace of its own (${why}), and its HTTP port would answer any local process without a credential: not started; give --unguarded-engine to serve it on 127.0.0.1 anyway`,
  );
}

/** The engine's socket path as this process connects to it: a path too long for a socket address goes through an open descriptor of the directory. */
function connectPath(socket: string): { path: string; close(): void } {
  if (Buffer.byteLength(socket) <= 100 || process.platform !== 'linux') return { path: socket, close: () => {} };
  const fd = openSync(dirname(socket), 'r');
  return { path: `/proc/self/fd/${fd}/${basename(socket)}`, close: () => closeSync(fd) };
}

function ping(socketPath: string): Promise<boolean> {
  return new Promise((done) => {
    const req = httpRequest({ socketPath, path: '/ping', timeout: 2_000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => done(res.statusCode === 200 && body.startsWith('Ok.')));
    });
    req.on('error', () => done(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/**
 * Starts the engine on `dir` behind its bridge, in a network namespace of their own (without one
 * only when `unguarded` allows it and none can be made, or `isolate` is false), and waits for the bridge's ready line; undefined when an unguarded engine's port
 * was taken meanwhile (try another).
 */
async function startEngine(dir: string, socket: string, timeoutMs: number, unguarded: boolean, isolate = true): Promise<Engine | undefined> {
  const port = await freePort();
  const bridgeArgs = [BRIDGE_SCRIPT, '--path', dir, '--port', String(port), '--socket', socket];
  let command = process.execPath;
  let args = bridgeArgs;
  const unshare = isolate && process.platform === 'linux' ? findUnshare() : undefined;
  const isolated = unshare !== undefined;
  if (unshare !== undefined) {
    // As root, a network namespace alone (root keeps its file access); otherwise a user namespace
    // too, which is what lets an unprivileged user make one.
    command = unshare;
    args = [...(process.getuid?.() === 0 ? ['-n'] : ['-r', '-n']), '--', process.execPath, bridgeArgs[0] as string, '--isolated', ...bridgeArgs.slice(1)];
  } else if (!unguarded) {
    throw refuseUnguarded(dir, process.platform === 'linux' ? 'no unshare program: install util-linux' : `network namespaces are Linux's, this is ${process.platform}`);
  }
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  });
  child.stdin?.on('error', () => {});
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  const log = (): string[] => [...lines, partial].filter((l) => l.trim() !== '');
  const tail = (): string => log().slice(-8).join(' | ');
  const ready = await new Promise<{ enginePid: number; netns: string } | undefined>((done) => {
    let out = '';
    const timer = setTimeout(() => done(undefined), timeoutMs);
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const m = /^ready (\{.*\})$/m.exec(out);
      if (m === null) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      done(JSON.parse(m[1] as string) as { enginePid: number; netns: string });
    };
    child.stdout?.on('data', onData);
    child.once('exit', () => {
      clearTimeout(timer);
      done(undefined);
    });
  });
  if (ready === undefined) {
    const exited = child.exitCode !== null || child.signalCode !== null || spawnError !== undefined;
    if (!exited) {
      child.kill('SIGKILL');
      throw new DataDirError(`the engine on the data directory ${dir} did not answer within ${Math.round(timeoutMs / 1000)} s: ${tail() || 'no message'}`);
    }
    const why = spawnError?.message ?? tail();
    // unshare itself failed (user namespaces disabled, seccomp, a container without the capability), or the namespace could not be set up.
    if (isolated && (spawnError !== undefined || /^unshare:|engine-bridge: (?:not in a network namespace|cannot bring up)/m.test(log().join('\n')) || child.exitCode === 3)) {
      if (!unguarded) throw refuseUnguarded(dir, (why.replace(/.*?(?:unshare|engine-bridge): /, '') || 'unshare failed').trim());
      // Allowed unguarded: as where there is no unshare.
      return startEngine(dir, socket, timeoutMs, true, false);
    }
    if (!isolated && /Address already in use|bind/i.test(why)) return undefined;
    throw new DataDirError(`the engine could not start on the data directory ${dir}: ${why.replace(/.*DB::Exception: /, '') || 'it exited at once'}`);
  }
  if (isolated && (ready.netns === '' || ready.netns === netnsOf('self'))) {
    child.kill('SIGKILL');
    throw refuseUnguarded(dir, `the engine's network namespace is this process's own (${ready.netns || 'unknown'})`);
  }
  return { child, enginePid: ready.enginePid, port, isolated, log, tail };
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

/** The largest request head (URL and headers) the proxy reads: ClickHouse's own URI limit, and room for the headers. */
const PROXY_MAX_HEAD_BYTES = 1024 * 1024 + 64 * 1024;

function startProxy(port: number, token: string, tokenFile: string, engineSocket: string, pages: () => Promise<PageRoutes>): Promise<Server> {
  const secret = Buffer.from(token);
  // To the engine through the bridge's Unix socket only.
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  // Queries carry their parameters in the URL (the sink's lookups send up to 48 KiB a
  // parameter): Node's default limit of 16 KB for a request's head answered them 431 with an
  // empty body. ClickHouse's own limits are 1 MiB a URI and 128 KiB a value.
  const server = createServer({ maxHeaderSize: PROXY_MAX_HEAD_BYTES }, (req, res) => {
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
      const upstream = httpRequest({ socketPath: engineSocket, method: req.method, path: `${url.pathname}${url.search}`, headers, agent }, (answer) => {
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

/** How long a new owner waits for the engine of an owner that died to finish its shutdown. */
const ORPHAN_WAIT_MS = 30_000;

/**
 * When the owner file names an owner that is gone and an engine that still holds the directory,
 * that engine is shutting down (its stdin closed with its owner, through its bridge): a restart
 * right after a kill waits for it (at most ORPHAN_WAIT_MS) instead of failing on its lock.
 */
async function orphanGone(dir: string): Promise<void> {
  const info = readOwnerFile(dir);
  if (info === undefined || processAlive(info.pid)) return;
  const until = Date.now() + ORPHAN_WAIT_MS;
  while (processAlive(info.enginePid) && lockHolder(dir)?.pid === info.enginePid && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
}

/**
 * Makes this process the owner of `dataDir` (created when missing): starts the engine on it in a
 * network namespace of its own with its bridge (a 0600 Unix socket), the token-checking proxy in
 * front, and writes the owner file. Throws a DataDirError (one line) when another process holds
 * the directory (an owner, or any embedded engine) or the engine cannot start, and an
 * EngineGuardError when the engine cannot be isolated (unless `unguardedEngine`). The caller
 * writes and reads through `clickhouseUrl` (the server sink; it carries the token), and calls
 * close() when done (SIGINT/SIGTERM handling is the caller's). This process's ClickHouse server
 * credentials ($TOOLCANON_CLICKHOUSE_USER, _PASSWORD, _PASSWORD_FILE) are forgotten: the proxy
 * wants the token, and the engine takes no other credential.
 */
export async function startOwner(dataDir: string, opts: OwnerOptions = {}): Promise<Owner> {
  const started = performance.now();
  const dir = resolve(dataDir);
  const command = opts.command ?? 'toolcanon serve';
  prepareDataDir(dir);
  forgetServerCredentials();
  const current = findOwner(dir);
  if (current !== undefined) throw new DataDirError(`the data directory ${dir} is already served by process ${current.pid} (${current.command}) at ${current.url}: read through it, or stop it first`);
  const engineSocket = join(dir, ENGINE_SOCKET);
  await orphanGone(dir);
  // One process at a time starts an engine here; one that holds the directory is refused.
  const release = await claimEngineStart(dir);
  // What others send through this process may change import_files: the copies of the import
  // state (src/pipeline/import-mirror.ts) are not trusted after it, nor the reports kept
  // (src/report/cache.ts).
  dropImportMirrors(dir);
  dropReportCache(dir);
  let engine: Engine | undefined;
  try {
    for (let attempt = 0; engine === undefined; attempt++) {
      if (attempt === 3) throw new DataDirError(`the engine could not bind a free port on ${LOOPBACK} after 3 attempts`);
      engine = await startEngine(dir, engineSocket, opts.startTimeoutMs ?? START_TIMEOUT_MS, opts.unguardedEngine === true);
    }
  } finally {
    release();
  }
  const eng = engine;
  const ownerFile = join(dir, OWNER_FILE);
  const tokenFile = join(dir, TOKEN_FILE);
  const socket = connectPath(engineSocket);
  let closing = false;
  let pageRoutes: Promise<PageRoutes> | undefined;
  let clickhouseUrl = '';
  const pages = (): Promise<PageRoutes> => (pageRoutes ??= import('./page.ts').then((m) => m.pageRoutes(clickhouseUrl, dir)));
  const removeOwnerFile = (): void => {
    if (readOwnerFile(dir)?.pid === process.pid) rmSync(ownerFile, { force: true });
  };
  const onExit = (): void => removeOwnerFile();
  let server: Server | undefined;
  try {
    // The bridge said ready; the engine answers through the socket (this process can connect to it).
    if (!(await ping(socket.path))) throw new DataDirError(`the engine on the data directory ${dir} does not answer on its socket ${engineSocket}: ${eng.tail() || 'no message'}`);
    const token = ensureToken(tokenFile);
    server = await startProxy(opts.port ?? 0, token, tokenFile, socket.path, pages);
    const url = `http://${LOOPBACK}:${(server.address() as AddressInfo).port}`;
    const own = new URL(url);
    own.username = 'default';
    own.password = token;
    clickhouseUrl = own.toString().replace(/\/$/, '');
    const info: OwnerFile = { pid: process.pid, enginePid: eng.enginePid, url, tokenFile, command, startedAt: new Date().toISOString() };
    writePrivate(ownerFile, `${JSON.stringify(info, null, 2)}\n`);
    process.on('exit', onExit);
    const proxy = server;
    const engineGone = new Promise<void>((done) => eng.child.once('exit', () => done()));
    eng.child.once('exit', (code, signal) => {
      if (closing) return;
      removeOwnerFile();
      proxy.close();
      socket.close();
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
      // The bridge closes the engine's stdin in turn (and kills it after its own grace).
      eng.child.stdin?.end();
      const kill = setTimeout(() => eng.child.kill('SIGKILL'), STOP_GRACE_MS + 5_000);
      await engineGone;
      clearTimeout(kill);
      socket.close();
    };
    return {
      dataDir: dir, url, token, tokenFile, ownerFile, clickhouseUrl, engineSocket, enginePid: eng.enginePid, isolated: eng.isolated,
      engineLog: () => eng.log(), startMs: Math.round(performance.now() - started), close,
    };
  } catch (error) {
    process.off('exit', onExit);
    removeOwnerFile();
    server?.close();
    socket.close();
    eng.child.stdin?.end();
    throw error;
  }
}
