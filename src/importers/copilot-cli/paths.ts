// Where GitHub Copilot CLI keeps its session event logs, and which files under a path are logs.
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { listFilesUnder } from '../files.ts';

/**
 * `~/.copilot/session-state`, or `$COPILOT_CONFIG_DIR/session-state` (the override ccusage's
 * Copilot loader reads: ryoppippi/ccusage apps/copilot/src/data-loader.ts).
 */
export function defaultCopilotPaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string[] {
  const override = env['COPILOT_CONFIG_DIR']?.trim();
  return [join(override ? resolve(override) : join(home, '.copilot'), 'session-state')];
}

/**
 * True for a session log a directory walk reads: `session-state/<session id>/events.jsonl`, or
 * `session-state/<session id>.jsonl` (a flat log beside the session folders).
 */
export function isSessionLog(path: string): boolean {
  const name = basename(path);
  if (name === 'events.jsonl') return true;
  return name.endsWith('.jsonl') && basename(dirname(path)) === 'session-state';
}

/** The session logs under the paths, sorted; a path naming a file is read whatever its name. */
export function listCopilotFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (path) => isSessionLog(path));
}

/** The session a log belongs to: its folder's name (`<id>/events.jsonl`), else the file's stem. */
export function sessionOfPath(path: string): string {
  const name = basename(path);
  const id = name === 'events.jsonl' ? basename(dirname(path)) : name.replace(/\.jsonl$/, '');
  return id === '' ? 'unknown' : id.slice(0, 256);
}
