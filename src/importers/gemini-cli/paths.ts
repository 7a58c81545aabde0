// Where Gemini CLI keeps its session files, and which files under a path are session files.
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { listFilesUnder } from '../files.ts';

/**
 * `~/.gemini/tmp`, the parent of every project's `chats/` folder. Gemini CLI takes its home
 * from `$GEMINI_CLI_HOME` when set (its `homedir()` helper), so the folder is then
 * `$GEMINI_CLI_HOME/.gemini/tmp`.
 */
export function defaultGeminiPaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string[] {
  const override = env['GEMINI_CLI_HOME']?.trim();
  return [join(override ? resolve(override) : home, '.gemini', 'tmp')];
}

/** True for a session file's name: `.jsonl` (0.2x on) or a legacy `.json` document. */
function isSessionName(name: string): boolean {
  return name.endsWith('.jsonl') || name.endsWith('.json');
}

/**
 * True for a file a directory walk reads: `…/chats/<name>.json[l]` (a main session,
 * `session-<time>-<id8>`) or `…/chats/<parent session id>/<id>.jsonl` (a subagent). The other
 * files of a project folder (`logs.json`, checkpoints, `tool-outputs/`) are not session files.
 */
export function isSessionFile(path: string): boolean {
  const name = basename(path);
  if (!isSessionName(name)) return false;
  const dir = dirname(path);
  return basename(dir) === 'chats' || basename(dirname(dir)) === 'chats';
}

/** The session files under the paths, sorted; a path naming a file is read whatever its name. */
export function listGeminiFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (path) => isSessionFile(path));
}

/**
 * The parent session of a subagent file `chats/<parent>/<id>.jsonl`, from its folder's name
 * (Gemini CLI names the folder after the parent's session id); undefined for a main session.
 */
export function parentSessionOf(path: string): string | undefined {
  const dir = dirname(path);
  return basename(dir) !== 'chats' && basename(dirname(dir)) === 'chats' ? basename(dir) : undefined;
}

/** The file's stem: the session's name when its metadata gives no id. */
export function fileStem(path: string): string {
  const stem = basename(path).replace(/\.jsonl?$/, '');
  return stem === '' ? 'unknown' : stem.slice(0, 256);
}
