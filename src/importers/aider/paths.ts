// Where Aider writes its chat history, and which files under a path are one.
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../../source/file.ts';
import { byCodeUnits } from '../../util/walk.ts';

/** Aider's default chat history file name (Aider-AI/aider aider/args.py `--chat-history-file`). */
export const CHAT_HISTORY = '.aider.chat.history.md';

/**
 * Aider writes its history into each repository (`<git root or cwd>/.aider.chat.history.md`), not
 * into a folder of its own: there is no default location but a folder of projects the user names,
 * `$AIDER_DIR` (as agentsview reads it); without it, `import aider` needs paths and `import all`
 * passes Aider over.
 */
export function defaultAiderPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const dir = env['AIDER_DIR']?.trim();
  return dir ? [resolve(dir)] : [];
}

/** True for a chat history file: `.aider.chat.history.md`, or a name `--chat-history-file` gave ending `.chat.history.md`. */
export function isChatHistory(path: string): boolean {
  const name = basename(path);
  return name === CHAT_HISTORY || name.endsWith('.chat.history.md');
}

/** Folders a walk never enters: no project's history is there, and they can be huge. */
const SKIPPED = new Set(['node_modules', '__pycache__', 'venv', 'target', 'dist', 'build']);
/** How deep below a named folder a walk looks for histories (a folder of projects, their subprojects). */
export const MAX_WALK_DEPTH = 4;

function walk(dir: string, depth: number, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries.sort((a, b) => byCodeUnits(a.name, b.name))) {
    const full = join(dir, e.name);
    if (e.isFile() && isChatHistory(full)) out.push(full);
    else if (e.isDirectory() && depth < MAX_WALK_DEPTH && !e.name.startsWith('.') && !SKIPPED.has(e.name)) walk(full, depth + 1, out);
  }
}

/** The history files under the paths (hidden and dependency folders not entered), sorted; a path naming a file is read whatever its name. */
export function listAiderFiles(paths: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const full = resolve(p);
    let isDirectory: boolean;
    try {
      isDirectory = statSync(full).isDirectory();
    } catch {
      throw new InputError(`${p}: no such file or directory`);
    }
    if (!isDirectory) {
      out.add(full);
      continue;
    }
    const found: string[] = [];
    walk(full, 0, found);
    for (const f of found) out.add(f);
  }
  return [...out].sort(byCodeUnits);
}

/** The project a history belongs to: its folder's name. */
export function projectOf(path: string): string {
  return basename(dirname(path)) || 'project';
}
