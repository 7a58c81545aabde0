// Where Codex keeps its rollouts, and which files under the user's paths are rollouts.
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { InputError } from '../../source/file.ts';

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
  const add = (file: string): void => {
    const real = realpathSync(file);
    if (!found.has(real)) found.set(real, file);
  };
  // Real paths of the directories walked: a link back up the tree is walked once, not forever.
  const walked = new Set<string>();
  const walk = (dir: string): void => {
    const real = realpathSync(dir);
    if (walked.has(real)) return;
    walked.add(real);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      // A symbolic link counts as what it points to (a CODEX_HOME on another disk, say).
      const kind = entry.isSymbolicLink() ? statKind(full) : entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : 'other';
      if (kind === 'dir') walk(full);
      else if (kind === 'file' && entry.name.endsWith('.jsonl')) add(full);
    }
  };
  for (const p of paths) {
    const full = resolve(p);
    const kind = statKind(full);
    if (kind === 'missing') throw new InputError(`${p}: no such file or directory`);
    if (kind === 'dir') walk(full);
    else add(full);
  }
  return [...found.values()].sort();
}

function statKind(path: string): 'dir' | 'file' | 'other' | 'missing' {
  try {
    const s = statSync(path);
    return s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
  } catch {
    return 'missing';
  }
}
