// Where Qwen Code keeps its chat recordings, and which files under a path are recordings.
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { listFilesUnder } from '../files.ts';

/**
 * The runtime base directory Qwen Code writes sessions under (`Storage.getRuntimeBaseDir()` in
 * packages/core/src/config/storage.ts): `$QWEN_RUNTIME_DIR` when set, else `~/.qwen`. The
 * recordings are in `projects/<sanitised project root>/chats/` (older builds:
 * `tmp/<project hash>/chats/`), so the walk starts at the base and keeps the files in a
 * `chats/` folder.
 */
export function defaultQwenPaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string[] {
  const override = env['QWEN_RUNTIME_DIR']?.trim();
  if (override) return [resolve(override.startsWith('~/') ? join(home, override.slice(2)) : override)];
  return [join(home, '.qwen')];
}

/** True for a recording a directory walk reads: `…/chats/<session id>.jsonl`. */
export function isChatRecording(path: string): boolean {
  return basename(path).endsWith('.jsonl') && basename(dirname(path)) === 'chats';
}

/** The recordings under the paths, sorted; a path naming a file is read whatever its name. */
export function listQwenFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (path) => isChatRecording(path));
}

/** The file's stem (Qwen Code names the file after the session id): the session of a record without one. */
export function fileStem(path: string): string {
  const stem = basename(path).replace(/\.jsonl$/, '');
  return stem === '' ? 'unknown' : stem.slice(0, 256);
}
