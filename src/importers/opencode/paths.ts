// Where opencode keeps its logs, which files under a path the importer reads, and where a
// storage part's message file lives.
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { listFilesUnder } from '../files.ts';

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
  return listFilesUnder(paths, (path, name) => name.endsWith('.jsonl') || storageKind(path) !== undefined);
}
