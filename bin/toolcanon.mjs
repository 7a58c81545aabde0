#!/usr/bin/env node
// Entry point. Runs the compiled JavaScript in dist/ when it is at least as new as every source
// file (npm ci builds it through the prepare script); otherwise loads the TypeScript sources
// through tsx, so an edited checkout never runs stale code.
import { existsSync, readdirSync, statSync } from 'node:fs';
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

const compiledIsFresh = existsSync(stamp) && statSync(stamp).mtimeMs >= newestMtimeMs(join(root, 'src'));
let run;
if (compiledIsFresh) {
  ({ run } = await import('../dist/cli/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ run } = await import('../src/cli/main.ts'));
}
await run(process.argv.slice(2));
