// Where Amp keeps its thread files, and which files under a path are threads.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { existingOrFirst, globalStorageDirs } from '../cline/paths.ts';
import { listFilesUnder } from '../files.ts';

/** Amp's editor extension id (VS Code marketplace `sourcegraph.amp`), whose globalStorage held threads before they moved. */
export const AMP_EXTENSION_ID = 'sourcegraph.amp';

/**
 * Amp's thread folders. Amp is closed source: the locations are those its readers use
 * (kenn-io/agentsview @ 53860074 internal/parser/types.go `.local/share/amp/threads`; ryoppippi/ccusage
 * @ 5816e640 rust/crates/ccusage/src/adapter/amp/paths.rs; jonathan-kellerai/cross_agent_session_resumer
 * @ ec0eab96 src/providers/amp.rs, the legacy editor storage): `$XDG_DATA_HOME/amp/threads`, else
 * `~/.local/share/amp/threads` (the XDG layout on macOS and Windows too), then the legacy
 * `<editor user dir>/User/globalStorage/sourcegraph.amp/threads3` of each VS Code-based editor.
 */
export function defaultAmpPaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir(), platform: NodeJS.Platform = process.platform, exists: (p: string) => boolean = existsSync): string[] {
  const xdg = env['XDG_DATA_HOME']?.trim();
  const data = join(xdg ? resolve(xdg) : join(home, '.local', 'share'), 'amp', 'threads');
  return existingOrFirst([data, ...globalStorageDirs(AMP_EXTENSION_ID, env, home, platform).map((d) => join(d, 'threads3'))], exists);
}

/** True for a thread file a directory walk reads: `threads/T-*.json` or `threads3/T-*.json`. */
export function isThreadFile(path: string): boolean {
  const name = basename(path);
  const dir = basename(dirname(path));
  return name.startsWith('T-') && name.endsWith('.json') && (dir === 'threads' || dir === 'threads3');
}

/** The thread files under the paths, sorted; a path naming a file is read whatever its name. */
export function listAmpFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (path) => isThreadFile(path));
}
