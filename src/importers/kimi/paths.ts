// Where Kimi CLI and Kimi Code keep their wire logs, which files under a path are wire logs, and
// the session and agent a wire log belongs to (from its folders).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { existingOrFirst } from '../cline/paths.ts';
import { listFilesUnder } from '../files.ts';
import { MAX_ID_CHARS } from '../json.ts';

/** The wire log's file name in both generations. */
export const WIRE_FILE = 'wire.jsonl';

function expandHome(dir: string, home: string): string {
  return dir === '~' ? home : dir.startsWith('~/') ? join(home, dir.slice(2)) : resolve(dir);
}

/**
 * The session folders of both generations, the existing ones (else Kimi Code's, so a single
 * import names where it looked):
 * - Kimi Code: `$KIMI_CODE_HOME` else `~/.kimi-code` (MoonshotAI/kimi-code @ d723cc47
 *   apps/kimi-code/src/utils/paths.ts `getDataDir`), `sessions/` below it;
 * - Kimi CLI: `$KIMI_SHARE_DIR` else `~/.kimi` (MoonshotAI/kimi-cli @ 4a550eff src/kimi_cli/share.py
 *   `get_share_dir`), `sessions/` below it.
 * `os.homedir()` / `Path.home()` on every OS (Windows `C:\Users\<u>\.kimi-code`, `.kimi`).
 */
export function defaultKimiPaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir(), exists: (p: string) => boolean = existsSync): string[] {
  const code = env['KIMI_CODE_HOME']?.trim();
  const share = env['KIMI_SHARE_DIR']?.trim();
  return existingOrFirst([join(code ? expandHome(code, home) : join(home, '.kimi-code'), 'sessions'), join(share ? expandHome(share, home) : join(home, '.kimi'), 'sessions')], exists);
}

/** True for a file a directory walk reads: any `wire.jsonl` (context.jsonl and state.json are not read). */
export function isWireFile(path: string): boolean {
  return basename(path) === WIRE_FILE;
}

/** The wire logs under the paths, sorted; a path naming a file is read whatever its name. */
export function listKimiFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (path) => isWireFile(path));
}

/** Where a wire log sits: its session and, for a subagent, its agent id. */
export interface WirePlace {
  readonly sessionId: string;
  /** Undefined for the main agent. */
  readonly agentId?: string;
}

function clip(id: string): string {
  return id === '' || id === '.' || id === sep ? 'unknown' : id.slice(0, MAX_ID_CHARS);
}

/**
 * The session and agent of a wire log from its folders:
 * - Kimi Code `…/session_<uuid>/agents/<agentId>/wire.jsonl` (the agent `main`, or a subagent `agent-<n>`);
 * - Kimi CLI subagent `…/<session uuid>/subagents/<agent_id>/wire.jsonl` (src/kimi_cli/subagents/store.py);
 * - Kimi CLI `…/<md5 of the work dir>/<session uuid>/wire.jsonl`.
 */
export function placeOf(path: string): WirePlace {
  const agentDir = dirname(path);
  const parent = dirname(agentDir);
  const kind = basename(parent);
  if (kind === 'agents' || kind === 'subagents') {
    const session = basename(dirname(parent));
    const agent = basename(agentDir);
    const sessionId = clip(kind === 'agents' && session.startsWith('session_') ? session.slice('session_'.length) : session);
    return agent === 'main' ? { sessionId } : { sessionId, agentId: clip(agent) };
  }
  return { sessionId: clip(basename(agentDir)) };
}
