// Where pi keeps its session files, and which files under a path are sessions.
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { listFilesUnder } from '../files.ts';

/**
 * The sessions folder (badlogic/pi-mono packages/coding-agent/src/config.ts `getSessionsDir`):
 * `$PI_CODING_AGENT_DIR/sessions` when set (a leading `~` expanded, as `getAgentDir` does), else
 * `~/.pi/agent/sessions` on every OS. Sessions are in `--<encoded cwd>--/` folders below it.
 */
export function defaultPiPaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string[] {
  const override = env['PI_CODING_AGENT_DIR']?.trim();
  if (override) {
    const dir = override === '~' ? home : override.startsWith('~/') ? join(home, override.slice(2)) : override;
    return [join(resolve(dir), 'sessions')];
  }
  return [join(home, '.pi', 'agent', 'sessions')];
}

/** True for a file a directory walk reads: any `*.jsonl` (the folder holds sessions only). */
export function isSessionFile(path: string): boolean {
  return basename(path).endsWith('.jsonl');
}

/** The session files under the paths, sorted; a path naming a file is read whatever its name. */
export function listPiFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (path) => isSessionFile(path));
}

/**
 * The session of a file without a readable header: `newSession` names the file
 * `<time>_<session uuid>.jsonl`, so the part after the last `_`, else the whole stem.
 */
export function sessionOfFileName(path: string): string {
  const stem = basename(path).replace(/\.jsonl$/, '');
  const cut = stem.lastIndexOf('_');
  const id = cut >= 0 && cut < stem.length - 1 ? stem.slice(cut + 1) : stem;
  return id === '' ? 'unknown' : id.slice(0, 256);
}
