// Where Codex keeps its rollouts, and which files under the user's paths are rollouts.
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { InputError } from '../../source/file.ts';
import { byCodeUnits, walkFilesWithReal } from '../../util/walk.ts';

export const CODEX_HOME_ENV = 'CODEX_HOME';
export const SESSIONS_SUBDIR = 'sessions';

/**
 * `$CODEX_HOME/sessions`, or `~/.codex/sessions`. Only `sessions/` is read by default:
 * `archived_sessions/` holds copies of rollouts already under `sessions/` (same session ids,
 * so importing both would only deduplicate), and is read when named explicitly.
 */
export function defaultSessionsDir(env: Readonly<Record<string, string | undefined>> = process.env, home: string = homedir()): string {
  const codexHome = env[CODEX_HOME_ENV]?.trim();
  return join(codexHome ? resolve(codexHome) : join(home, '.codex'), SESSIONS_SUBDIR);
}

/**
 * The rollout files under `paths`, absolute and sorted (so sources and import order are
 * stable): every `*.jsonl` below a directory, or a file named directly whatever its name.
 */
export function listRolloutFiles(paths: readonly string[]): string[] {
  // Keyed by real path: a file reached twice (through a link) is read once, under its first path.
  const found = new Map<string, string>();
  const add = (file: string, real: string): void => {
    if (!found.has(real)) found.set(real, file);
  };
  const walk = (dir: string): void => {
    for (const f of walkFilesWithReal(dir, (_, name) => name.endsWith('.jsonl'))) add(f.path, f.real);
  };
  for (const p of paths) {
    const full = resolve(p);
    const kind = statKind(full);
    if (kind === 'missing') throw new InputError(`${p}: no such file or directory`);
    if (kind === 'dir') walk(full);
    else add(full, realpathSync.native(full));
  }
  return [...found.values()].sort(byCodeUnits);
}

function statKind(path: string): 'dir' | 'file' | 'other' | 'missing' {
  try {
    const s = statSync(path);
    return s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
  } catch {
    return 'missing';
  }
}
