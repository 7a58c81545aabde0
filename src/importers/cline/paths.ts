// Where Cline keeps its task folders (VS Code's globalStorage of the extension, and the Cline
// CLI's data folder), which files under a path are task files, and the same globalStorage walk
// for the forks (Roo Code, Kilo Code), which keep their tasks in their own extension's folder.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { listFilesUnder } from '../files.ts';
import { API_HISTORY, UI_MESSAGES } from './parser.ts';

/** The editors built on VS Code whose user folder holds an extension's globalStorage. */
const VSCODE_APPS = ['Code', 'Code - Insiders', 'VSCodium', 'Cursor', 'Windsurf'] as const;

/**
 * An extension's globalStorage folders (`ExtensionContext.globalStorageUri`), one per editor
 * built on VS Code, in the order tried: `<user data>/User/globalStorage/<publisher.name>` where
 * the user data is `$XDG_CONFIG_HOME/<app>` (default `~/.config/<app>`) on Linux,
 * `~/Library/Application Support/<app>` on macOS and `%APPDATA%\<app>` on Windows; then the
 * remote server's `~/.vscode-server/data/User/globalStorage/<id>`.
 */
export function globalStorageDirs(extensionId: string, env: NodeJS.ProcessEnv = process.env, home: string = homedir(), platform: NodeJS.Platform = process.platform): string[] {
  const base = platform === 'darwin' ? join(home, 'Library', 'Application Support') : platform === 'win32' ? env['APPDATA'] || join(home, 'AppData', 'Roaming') : env['XDG_CONFIG_HOME'] || join(home, '.config');
  return [...VSCODE_APPS.map((app) => join(base, app, 'User', 'globalStorage', extensionId)), join(home, '.vscode-server', 'data', 'User', 'globalStorage', extensionId)];
}

/** The folders that exist among `candidates`, else the first (so a single import names where it looked). */
export function existingOrFirst(candidates: readonly string[], exists: (p: string) => boolean = existsSync): string[] {
  const found = candidates.filter((p) => exists(p));
  return found.length ? found : candidates.slice(0, 1);
}

/** Cline's extension id (cline/cline apps/vscode/package.json: publisher saoudrizwan, name claude-dev). */
export const CLINE_EXTENSION_ID = 'saoudrizwan.claude-dev';

/**
 * Cline's data folders: the CLI and JetBrains hosts write `$CLINE_DATA_DIR`, else
 * `$CLINE_DIR/data`, else `~/.cline/data` (apps/vscode/src/shared/storage/storage-context.ts
 * `resolveDataDirFromEnv`); the VS Code extension writes its globalStorage. `$CLINE_DATA_DIR`
 * alone is read when set.
 */
export function defaultClinePaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir(), platform: NodeJS.Platform = process.platform, exists: (p: string) => boolean = existsSync): string[] {
  const data = env['CLINE_DATA_DIR']?.trim();
  if (data) return [resolve(data)];
  const dir = env['CLINE_DIR']?.trim();
  return existingOrFirst([...globalStorageDirs(CLINE_EXTENSION_ID, env, home, platform), join(dir ? resolve(dir) : join(home, '.cline'), 'data')], exists);
}

/** True for a task file a directory walk reads: `tasks/<task id>/ui_messages.json` or `…/api_conversation_history.json`. */
export function isTaskFile(path: string): boolean {
  const name = basename(path);
  return (name === UI_MESSAGES || name === API_HISTORY) && basename(dirname(dirname(path))) === 'tasks';
}

/** The task files under the paths, sorted; a path naming a file is read whatever its name. */
export function listTaskFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (path) => isTaskFile(path));
}
