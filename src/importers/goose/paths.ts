// Where Goose keeps its sessions database, and which files under a path are one.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { existingOrFirst } from '../cline/paths.ts';
import { listFilesUnder } from '../files.ts';

/** The database's file name (block/goose crates/goose/src/session/session_manager.rs `SessionStorage::new`). */
export const SESSIONS_DB = 'sessions.db';

/**
 * Goose's sessions folders, the existing ones (else the first): `<data dir>/sessions/` where the
 * data dir is (block/goose crates/goose/src/config/paths.rs `Paths::data_dir`, etcetera's
 * `choose_app_strategy`, author Block, app goose) `$GOOSE_PATH_ROOT/data` when set, else
 * `$XDG_DATA_HOME/goose` or `~/.local/share/goose` (Linux and macOS), `%APPDATA%\Block\goose\data`
 * (Windows); then older builds' `~/Library/Application Support/goose` and `~/.local/share/Block/goose`.
 */
export function defaultGoosePaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir(), platform: NodeJS.Platform = process.platform, exists: (p: string) => boolean = existsSync): string[] {
  const root = env['GOOSE_PATH_ROOT']?.trim();
  if (root) return [join(resolve(root), 'data', 'sessions')];
  const xdg = env['XDG_DATA_HOME']?.trim();
  const main = platform === 'win32' ? join(env['APPDATA'] || join(home, 'AppData', 'Roaming'), 'Block', 'goose', 'data') : join(xdg ? resolve(xdg) : join(home, '.local', 'share'), 'goose');
  return existingOrFirst([main, join(home, 'Library', 'Application Support', 'goose'), join(home, '.local', 'share', 'Block', 'goose')].map((d) => join(d, 'sessions')), exists);
}

/** True for the database a directory walk reads: `sessions.db` (its -wal is read with it). */
export function isSessionsDb(path: string): boolean {
  return basename(path) === SESSIONS_DB;
}

export function listGooseFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (path) => isSessionsDb(path));
}
