#!/usr/bin/env node
// The owner's engine, reachable only through a Unix socket of mode 0600 (src/serve/owner.ts).
// Plain JavaScript, no build; started by the owner as
//
//   unshare -rn -- node scripts/engine-bridge.mjs --isolated --path DIR --port P --socket NAME
//   (as root: unshare -n --; without --isolated only when the owner was told --unguarded-engine)
//
// clickhouse-local's HTTP listener has no access management (any request is user `default`, a
// password is not checked), so it must not be reachable by other processes. In its own network
// namespace (`unshare -n`; `-r` makes that possible without root, through a user namespace that
// maps this user to root there) the engine's 127.0.0.1 is a loopback no other process shares:
// nothing outside can connect to it. This process lives in the same namespace and is the one way
// in: it serves a Unix socket in the data directory (a path in the file system, which every
// network namespace shares), created with mode 0600 so that only the directory's owner (and root)
// can connect, and pipes each connection to the engine's port.
//
// --isolated: bring up the namespace's loopback (`ip link set lo up`, else `ifconfig lo up`) and
//   refuse to run unless this process is in a network namespace of its own (not init's).
// The engine is scripts/clickhouse-server.mjs --serve, a child whose stdin this process holds:
// it serves until that pipe closes. This process stops it (and removes the socket) when its own
// stdin reaches EOF (the owner closed it, or died), or on SIGTERM/SIGINT/SIGHUP; a SIGKILL of this
// process closes the pipe too, so the engine never outlives it.
// stdout: one line `ready {"enginePid":N,"port":P,"socket":"…","netns":"net:[…]"}` once the engine
// answers /ping inside the namespace. stderr: the engine's log, and this script's lines prefixed
// `engine-bridge:`. Exit: the engine's exit code; 3 when the namespace cannot be set up.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, readlinkSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const LOOPBACK = '127.0.0.1';
const STOP_GRACE_MS = 20_000;
const ENGINE_SCRIPT = fileURLToPath(new URL('./clickhouse-server.mjs', import.meta.url));

function fail(message, code = 2) {
  process.stderr.write(`engine-bridge: ${message}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const opts = { isolated: false, path: undefined, port: undefined, socket: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => argv[++i] ?? fail(`${a} needs a value`);
    if (a === '--isolated') opts.isolated = true;
    else if (a === '--path') opts.path = value();
    else if (a === '--port') opts.port = value();
    else if (a === '--socket') opts.socket = value();
    else fail(`unknown argument ${a}`);
  }
  if (opts.path === undefined || opts.socket === undefined) fail('--path DIR and --socket PATH are required');
  if (!/^\d+$/.test(opts.port ?? '') || Number(opts.port) < 1 || Number(opts.port) > 65535) fail('--port P (1-65535) is required');
  return opts;
}

/** Brings up the loopback of this (new) network namespace: without it 127.0.0.1 is unreachable even from inside. */
function loopbackUp() {
  const tries = [
    ...['ip', '/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'].map((cmd) => [cmd, ['link', 'set', 'lo', 'up']]),
    ...['ifconfig', '/usr/sbin/ifconfig', '/sbin/ifconfig'].map((cmd) => [cmd, ['lo', 'up']]),
  ];
  const errors = [];
  for (const [cmd, args] of tries) {
    const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (r.error?.code === 'ENOENT') continue;
    if (r.status === 0) return;
    errors.push(`${cmd}: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`);
  }
  fail(`cannot bring up the loopback of the engine's network namespace (${errors.join('; ') || 'neither ip nor ifconfig is installed'})`, 3);
}

function netns(pid) {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}

function ping(port) {
  return new Promise((done) => {
    const req = request({ host: LOOPBACK, port, path: '/ping', timeout: 2_000 }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => done(res.statusCode === 200 && body.startsWith('Ok.')));
    });
    req.on('error', () => done(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

const opts = parseArgs(process.argv.slice(2));
const port = Number(opts.port);
if (opts.isolated) {
  const mine = netns('self');
  // The init namespace's link as seen by pid 1 (readable by root; for another user, EACCES: then
  // the user namespace is the proof that unshare ran, since -r and -n are made together).
  const init = netns(1);
  if (mine === undefined || (init !== undefined && init === mine)) fail(`not in a network namespace of its own (${mine ?? 'no /proc/self/ns/net'}): run it through unshare -n`, 3);
  loopbackUp();
}

const engine = spawn(process.execPath, [ENGINE_SCRIPT, '--serve', '--path', opts.path, '--port', opts.port, '--host', LOOPBACK], { stdio: ['pipe', 'ignore', 'inherit'] });
engine.stdin.on('error', () => {});
let engineExited = false;
let server;
let stopping = false;
const removeSocket = () => {
  try {
    if (lstatSync(opts.socket).isSocket()) rmSync(opts.socket, { force: true });
  } catch {
    // gone already
  }
};
engine.on('exit', (code, signal) => {
  engineExited = true;
  if (server !== undefined) server.close();
  removeSocket();
  if (!stopping) process.stderr.write(`engine-bridge: the engine stopped (${signal ?? `exit ${code}`})\n`);
  process.exit(code ?? 1);
});
const stop = (why) => {
  if (stopping) return;
  stopping = true;
  server?.close();
  removeSocket();
  engine.stdin.end();
  setTimeout(() => {
    process.stderr.write(`engine-bridge: engine still running ${STOP_GRACE_MS} ms after ${why}, SIGKILL\n`);
    engine.kill('SIGKILL');
  }, STOP_GRACE_MS).unref();
};
for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => stop(s));
// The owner holds this pipe: its end (close, or the owner's death) stops the engine.
process.stdin.on('end', () => stop('stdin closed'));
process.stdin.on('error', () => stop('stdin closed'));
process.stdin.resume();

while (!(await ping(port))) {
  if (engineExited || stopping) await new Promise(() => {});
  await new Promise((r) => setTimeout(r, 50));
}

// A socket left by a killed bridge is replaced (the owner holds the directory's start claim).
removeSocket();
if (existsSync(opts.socket)) fail(`${opts.socket} exists and is not a socket`);
// The socket is made 0600 as it is bound (umask 077 from here on; the engine, started before, keeps the one it was given).
process.umask(0o077);
server = createServer((client) => {
  const upstream = connect(port, LOOPBACK);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.pipe(upstream).pipe(client);
});
server.on('error', (error) => {
  process.stderr.write(`engine-bridge: cannot serve ${opts.socket}: ${error.message}\n`);
  stop('a socket error');
});
server.listen(opts.socket, () => {
  // Made under umask 077 already; said again so that no umask could have widened it.
  chmodSync(opts.socket, 0o600);
  if (stopping) return;
  process.stdout.write(`ready ${JSON.stringify({ enginePid: engine.pid, port, socket: opts.socket, netns: netns('self') ?? '' })}\n`);
});
