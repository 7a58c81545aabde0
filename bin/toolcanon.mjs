#!/usr/bin/env node
// Entry point. Runs the compiled JavaScript in dist/ when it is at least as new as every source
// file (npm ci builds it through the prepare script); otherwise loads the TypeScript sources
// through tsx, so an edited checkout never runs stale code.
// node:child_process and node:os are imported only where needed: statusline runs on every
// prompt of Claude Code, and each costs it milliseconds.
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readdirSync, statSync } from 'node:fs';
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
// or worse, insert those bytes. So when stdin carries data, fd 0 is made /dev/null and our stdin
// is read from a copy of it instead (TOOLCANON_STDIN_FD): in place, through libc's dup3 and dup2
// (ffi-rs, a dependency already); where that cannot be done (or TOOLCANON_STDIN_CHILD=1), in a
// child whose fd 0 is /dev/null and which reads our stdin from fd 3. A child costs a second
// Node start (~70 ms here), which a script that runs toolcanon with a pipe for stdin (a
// scheduler, a hook, a benchmark harness) paid on every command. The Kafka commands never read
// stdin and keep their own signal handling: they run as they are.
const args = process.argv.slice(2);
function stdinCarriesData() {
  try {
    const s = fstatSync(0);
    return s.isFIFO() || s.isFile() || s.isSocket();
  } catch {
    return false;
  }
}

/**
 * fd 0 made /dev/null, its file kept on a new descriptor that no child process inherits
 * (returned); undefined when that cannot be done here (the caller then runs a child instead).
 */
async function moveStdinAside() {
  if (process.env.TOOLCANON_STDIN_CHILD === '1') return undefined;
  if (process.platform !== 'linux' && process.platform !== 'darwin') return undefined;
  let kept;
  let devNull;
  try {
    const { createRequire } = await import('node:module');
    const { open, load, DataType } = createRequire(import.meta.url)('ffi-rs');
    const library = 'toolcanon-self';
    open({ library, path: '' }); // the process itself: libc's functions, whichever libc it is
    const call = (funcName, types, values) => load({ library, funcName, retType: DataType.I32, paramsType: types, paramsValue: values });
    if (process.platform === 'linux') {
      // A descriptor number of our own (Node opens close-on-exec), then stdin copied onto it,
      // close-on-exec too: dup3 sets the flag as it copies.
      kept = openSync('/dev/null', 'r');
      if (call('dup3', [DataType.I32, DataType.I32, DataType.I32], [0, kept, 0o2000000 /* O_CLOEXEC */]) !== kept) throw new Error('dup3');
    } else {
      // No dup3 on macOS: dup, then FIOCLEX (an ioctl that takes no argument).
      const copy = call('dup', [DataType.I32], [0]);
      if (copy < 0) throw new Error('dup');
      kept = copy;
      if (call('ioctl', [DataType.I32, DataType.I64], [kept, 0x20006601 /* FIOCLEX */]) !== 0) throw new Error('ioctl');
    }
    devNull = openSync('/dev/null', 'r');
    if (call('dup2', [DataType.I32, DataType.I32], [devNull, 0]) !== 0) throw new Error('dup2');
    const moved = kept;
    kept = undefined;
    return moved;
  } catch {
    return undefined; // no ffi-rs for this platform, or a call refused: the child below
  } finally {
    if (kept !== undefined) closeSync(kept);
    if (devNull !== undefined) closeSync(devNull);
  }
}

// statusline loads no engine and reads its stdin itself.
if (process.env.TOOLCANON_STDIN_FD === undefined && args[0] !== 'consume' && args[0] !== 'produce' && args[0] !== 'statusline' && stdinCarriesData()) {
  const kept = await moveStdinAside();
  if (kept !== undefined) process.env.TOOLCANON_STDIN_FD = String(kept);
  else {
    const [{ spawn }, { constants: osConstants }] = await Promise.all([import('node:child_process'), import('node:os')]);
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...args], {
      stdio: ['ignore', 'inherit', 'inherit', 0],
      env: { ...process.env, TOOLCANON_STDIN_FD: '3' },
    });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
    const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? 128 + (osConstants.signals[signal] ?? 1))));
    process.exit(code);
  }
}

// statusline's bundle (scripts/bundle-statusline.mjs), when no source it was built from is newer.
let run;
if (args[0] === 'statusline') {
  const bundle = join(root, 'dist', 'statusline.mjs');
  const inputs = join(root, 'dist', 'statusline.inputs.json');
  let fresh = false;
  try {
    const built = statSync(bundle).mtimeMs;
    fresh = JSON.parse(readFileSync(inputs, 'utf8')).every((source) => statSync(join(root, source)).mtimeMs <= built);
  } catch {
    fresh = false; // not built, or a source moved: the usual way below
  }
  if (fresh) ({ run } = await import('../dist/statusline.mjs'));
}

if (run === undefined) {
  // statusline runs on every prompt of Claude Code: its own entry, without main.js's imports (~100 ms).
  const entry = args[0] === 'statusline' ? 'statusline-command' : 'main';
  const newestSource = newestMtimeMs(join(root, 'src'));
  const built = existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource;
  // Which code runs, for what it keeps between runs (a report's rows: src/report/cache.ts).
  process.env.TOOLCANON_CODE = built ? `dist:${readFileSync(stamp, 'utf8')}` : `src:${newestSource}`;
  if (built) {
    ({ run } = await import(`../dist/cli/${entry}.js`));
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    ({ run } = await import(`../src/cli/${entry}.ts`));
  }
}
await run(args);
