#!/usr/bin/env node
// Entry point. Runs the compiled JavaScript in dist/ when it is at least as new as every source
// file (npm ci builds it through the prepare script); otherwise loads the TypeScript sources
// through tsx, so an edited checkout never runs stale code.
import { spawn } from 'node:child_process';
import { existsSync, fstatSync, readdirSync, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.build-stamp');

function newestMtimeMs(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtimeMs(path) : statSync(path).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

// The embedded engine (chdb) reads the process's fd 0 as data for every INSERT when it is a pipe,
// a file or a socket with data (chdb-io/chdb-core#239): `cat x | toolcanon replay -` would fail,
// or worse, insert those bytes. So when stdin carries data, the command runs in a child whose fd 0
// is /dev/null and which reads our stdin from fd 3 instead (TOOLCANON_STDIN_FD). The Kafka
// commands never read stdin and keep their own signal handling: they run in place.
const args = process.argv.slice(2);
function stdinCarriesData() {
  try {
    const s = fstatSync(0);
    return s.isFIFO() || s.isFile() || s.isSocket();
  } catch {
    return false;
  }
}
// statusline loads no engine and reads its stdin itself.
if (process.env.TOOLCANON_STDIN_FD === undefined && args[0] !== 'consume' && args[0] !== 'produce' && args[0] !== 'statusline' && stdinCarriesData()) {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 0],
    env: { ...process.env, TOOLCANON_STDIN_FD: '3' },
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? 128 + (osConstants.signals[signal] ?? 1))));
  process.exit(code);
}

const compiledIsFresh = existsSync(stamp) && statSync(stamp).mtimeMs >= newestMtimeMs(join(root, 'src'));
// statusline runs on every prompt of Claude Code: its own entry, without main.js's imports (~100 ms).
const entry = args[0] === 'statusline' ? 'statusline-command' : 'main';
let run;
if (compiledIsFresh) {
  ({ run } = await import(`../dist/cli/${entry}.js`));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ run } = await import(`../src/cli/${entry}.ts`));
}
await run(args);
