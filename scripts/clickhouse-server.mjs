#!/usr/bin/env node
// A ClickHouse HTTP server from the engine library that `npm ci` installs (chdb's libchdb, which
// contains clickhouse-local), for tests and local use. Started by scripts/clickhouse.sh; plain
// JavaScript so it needs no build, and no compiler: libchdb is called through ffi-rs's prebuilt
// binding (koffi cannot run this call: it fails with TOO_DEEP_RECURSION).
//
//   node scripts/clickhouse-server.mjs --path DIR --port P [--host 127.0.0.1] [--engine-pid-file F]
//
// --engine-pid-file: where the supervisor writes the engine process's pid (for tests that must
// kill the engine itself, e.g. `kill -9`, rather than shut it down cleanly through the supervisor).
//
// clickhouse-local serves ClickHouse's HTTP interface once it has run `SYSTEM START LISTEN HTTP`,
// for as long as its interactive loop is reading stdin; at EOF it says "Bye.", shuts down cleanly
// and chdb_query_cmdline returns. So this file runs as two processes:
//   supervisor (no --serve): spawns itself with --serve, holds the write end of the child's stdin
//     open and writes nothing to it. SIGTERM/SIGINT/SIGHUP close that pipe (a clean shutdown), and
//     SIGKILL the child if it has not exited within STOP_GRACE_MS. It exits with the child.
//     If the supervisor itself is killed, the pipe closes with it, so the child never outlives it.
//   server (--serve): loads libchdb and makes the blocking chdb_query_cmdline call.
//
// SECURITY: clickhouse-local's listener has no access management (user `default`, no password,
// CREATE USER is unavailable), so anyone who can connect can do anything. It is bound to the
// loopback address only; do not pass a --host that other machines can reach.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const STOP_GRACE_MS = 20_000;
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function parseArgs(argv) {
  const opts = { serve: false, path: undefined, port: undefined, host: '127.0.0.1', enginePidFile: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) fail(`${a} needs a value`);
      return v;
    };
    if (a === '--serve') opts.serve = true;
    else if (a === '--path') opts.path = resolve(value());
    else if (a === '--port') opts.port = value();
    else if (a === '--host') opts.host = value();
    else if (a === '--engine-pid-file') opts.enginePidFile = resolve(value());
    else fail(`unknown argument ${a}`);
  }
  if (opts.path === undefined) fail('--path DIR is required');
  if (opts.port === undefined || !/^\d+$/.test(opts.port) || Number(opts.port) < 1 || Number(opts.port) > 65535) {
    fail('--port P (1-65535) is required');
  }
  if (!LOOPBACK.has(opts.host)) fail(`refusing --host ${opts.host}: the listener has no authentication, loopback only`);
  return opts;
}

function fail(message) {
  process.stderr.write(`clickhouse-server.mjs: ${message}\n`);
  process.exit(2);
}

/** libchdb.so from chdb's per-platform package (the one chdb's own loader requires). */
function findLibchdb() {
  const require = createRequire(import.meta.url);
  const chdbDir = dirname(require.resolve('chdb/package.json'));
  const platform = { 'linux-x64': 'lib-linux-x64-gnu', 'linux-arm64': 'lib-linux-arm64-gnu', 'darwin-x64': 'lib-darwin-x64', 'darwin-arm64': 'lib-darwin-arm64' }[
    `${process.platform}-${process.arch}`
  ];
  if (platform === undefined) fail(`chdb has no engine library for ${process.platform}-${process.arch}`);
  let pkgDir;
  try {
    pkgDir = dirname(createRequire(join(chdbDir, 'package.json')).resolve(`@chdb/${platform}/package.json`));
  } catch {
    fail(`@chdb/${platform} is not installed (run npm ci)`);
  }
  const lib = readdirSync(pkgDir).find((f) => /^libchdb\.(so|dylib)$/.test(f));
  if (lib === undefined) fail(`no libchdb.so/.dylib in ${pkgDir}`);
  return join(pkgDir, lib);
}

async function serve(opts) {
  const ffi = await import('ffi-rs');
  const { open, load, DataType, isNullPointer } = ffi.default ?? ffi;
  open({ library: 'chdb', path: findLibchdb() });
  const call = (funcName, retType, paramsType, paramsValue) => load({ library: 'chdb', funcName, retType, paramsType, paramsValue });
  const argv = [
    'clickhouse',
    '--path',
    opts.path,
    `--http_port=${opts.port}`,
    `--listen_host=${opts.host}`,
    '--query=SYSTEM START LISTEN HTTP',
    '--interactive',
    '--logger.console=1',
    '--log-level=information',
  ];
  process.stderr.write(`clickhouse-server.mjs: pid ${process.pid}: ${argv.join(' ')}\n`);
  // chdb_result *chdb_query_cmdline(int argc, char **argv): blocks until stdin reaches EOF.
  const result = call('chdb_query_cmdline', DataType.External, [DataType.I32, DataType.StringArray], [argv.length, argv]);
  let code = 0;
  if (isNullPointer(result)) {
    process.stderr.write('clickhouse-server.mjs: chdb_query_cmdline returned NULL\n');
    code = 1;
  } else {
    const error = call('chdb_result_error', DataType.External, [DataType.External], [result]);
    if (!isNullPointer(error)) {
      const text = call('chdb_result_error', DataType.String, [DataType.External], [result]);
      process.stderr.write(`clickhouse-server.mjs: ${text}\n`);
      code = 1;
    }
  }
  process.stderr.write(`clickhouse-server.mjs: server stopped (exit ${code})\n`);
  process.exit(code);
}

function supervise(opts) {
  mkdirSync(opts.path, { recursive: true });
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [self, '--serve', '--path', opts.path, '--port', opts.port, '--host', opts.host], {
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  if (opts.enginePidFile !== undefined) writeFileSync(opts.enginePidFile, `${child.pid}\n`);
  // Writing nothing: the child's interactive loop just waits on this pipe until it is closed.
  child.stdin.on('error', () => {});
  let killTimer;
  const stop = (signal) => {
    if (killTimer !== undefined) return;
    process.stderr.write(`clickhouse-server.mjs: ${signal}: closing the server's stdin\n`);
    child.stdin.end();
    killTimer = setTimeout(() => {
      process.stderr.write(`clickhouse-server.mjs: still running after ${STOP_GRACE_MS} ms, SIGKILL\n`);
      child.kill('SIGKILL');
    }, STOP_GRACE_MS);
  };
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => stop(s));
  child.on('exit', (code, signal) => {
    if (killTimer !== undefined) clearTimeout(killTimer);
    if (opts.enginePidFile !== undefined) rmSync(opts.enginePidFile, { force: true });
    process.stderr.write(`clickhouse-server.mjs: server process exited (${signal ?? `code ${code}`})\n`);
    process.exit(code ?? 1);
  });
}

const opts = parseArgs(process.argv.slice(2));
if (!existsSync(dirname(opts.path))) fail(`parent of --path does not exist: ${dirname(opts.path)}`);
if (opts.serve) await serve(opts);
else supervise(opts);
