// Where Hermes Agent keeps its state database, and which files under a path are one.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { listFilesUnder } from '../files.ts';

/** The database's file name (NousResearch/hermes-agent hermes_state.py `DEFAULT_DB_PATH`). */
export const STATE_DB = 'state.db';

/**
 * Hermes' home: `$HERMES_HOME`, else `~/.hermes` on every OS (hermes_constants.py `get_hermes_home`,
 * `Path.home()`); its `state.db`, and the profiles' (`profiles/<name>/state.db`) found by the walk.
 */
export function defaultHermesPaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string[] {
  const h = env['HERMES_HOME']?.trim();
  return [h ? (h === '~' ? home : h.startsWith('~/') ? join(home, h.slice(2)) : resolve(h)) : join(home, '.hermes')];
}

/** True for a database a directory walk reads: `state.db` (not under sessions/: transcripts hold the same conversations). */
export function isStateDb(path: string): boolean {
  return basename(path) === STATE_DB;
}

export function listHermesFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths.filter((p) => existsSync(p)), (path) => isStateDb(path));
}
