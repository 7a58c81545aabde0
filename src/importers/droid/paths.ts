// Where Factory Droid keeps its session transcripts, which files under a path are transcripts,
// and the settings file beside one (the session's token totals).
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { listFilesUnder } from '../files.ts';

/**
 * Droid's sessions folder: `~/.factory/sessions` on every OS (`os.homedir()`; Windows
 * `C:\Users\<u>\.factory\sessions`). Droid is closed source: the folder is the one Factory's own
 * session-navigation skill names (factory-ai/factory-plugins) and its readers use (ryoppippi/ccusage
 * @ 5816e640 rust/crates/ccusage/src/adapter/droid/paths.rs; jazzyalex/agent-sessions @ 651e854f
 * AgentSessions/Services/DroidSessionDiscovery.swift). No variable of Droid's moves it.
 */
export function defaultDroidPaths(home: string = homedir()): string[] {
  return [join(home, '.factory', 'sessions')];
}

/**
 * True for a transcript a directory walk reads: `<session id>.jsonl`, a name with no other dot
 * (its settings file is read beside it; other JSONL files a user keeps there, such as redirected
 * `droid exec` output named `*.stream.jsonl`, are not transcripts).
 */
export function isTranscript(path: string): boolean {
  const name = basename(path);
  return name.endsWith('.jsonl') && !name.slice(0, -'.jsonl'.length).includes('.');
}

/** The transcripts under the paths, sorted; a path naming a file is read whatever its name. */
export function listDroidFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (path) => isTranscript(path));
}

/** The settings file of a transcript: `<session>.jsonl` → `<session>.settings.json`. */
export function settingsPathOf(path: string): string {
  return path.replace(/\.jsonl$/, '') + '.settings.json';
}

/** A session id from the file name, for a transcript without a readable session_start. */
export function sessionOfFileName(path: string): string {
  const stem = basename(path).replace(/\.jsonl$/, '');
  return stem === '' ? 'unknown' : stem.slice(0, 256);
}
