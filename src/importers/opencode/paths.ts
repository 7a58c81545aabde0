// Where opencode keeps its logs, which files under a path the importer reads, and where a
// storage part's message file lives.
import { readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../../source/file.ts';

/** `$XDG_DATA_HOME/opencode/storage`, by default `~/.local/share/opencode/storage`. */
export function defaultOpencodePaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const dataHome = env['XDG_DATA_HOME'] || join(homedir(), '.local', 'share');
  return [join(dataHome, 'opencode', 'storage')];
}

/** A storage file: `<storage>/message/<sessionID>/<messageID>.json` or `<storage>/part/<messageID>/<partID>.json`. */
export function storageKind(path: string): 'message' | 'part' | undefined {
  if (!path.endsWith('.json')) return undefined;
  const kind = basename(dirname(dirname(path)));
  return kind === 'message' || kind === 'part' ? kind : undefined;
}

/** The storage root of a storage file (three levels up). */
export function storageRoot(path: string): string {
  return dirname(dirname(dirname(path)));
}

/**
 * The files the importer reads under `paths`, sorted: storage message and part files, and JSONL
 * files (`opencode run --format json` captures, bus event logs). A path naming a file is read
 * whatever its name. The storage's `session/`, `project/`, `todo/` and other folders are skipped.
 */
export function listOpencodeFiles(paths: readonly string[]): string[] {
  const out = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && (entry.name.endsWith('.jsonl') || storageKind(full) !== undefined)) out.add(full);
    }
  };
  for (const p of paths) {
    const full = resolve(p);
    let isDirectory: boolean;
    try {
      isDirectory = statSync(full).isDirectory();
    } catch {
      throw new InputError(`${p}: no such file or directory`);
    }
    if (isDirectory) walk(full);
    else out.add(full);
  }
  return [...out].sort();
}
