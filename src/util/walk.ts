// The one directory walker of the project: replay's JSONL listing and every importer's file
// listing go through it, so every command orders and follows files the same way.
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Orders strings by UTF-16 code units: the same on every machine (localeCompare depends on the locale). */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Every file below `dir` whose path and name `accept` takes, depth first, each directory's
 * entries in code-unit order. A symbolic link counts as what it points to (a config directory
 * on another disk, say); each directory is walked once by its real path, so a link back up the
 * tree ends. A dangling link, or an entry that vanishes while walking, is passed over.
 */
export function walkFiles(dir: string, accept: (path: string, name: string) => boolean): string[] {
  const out: string[] = [];
  walkAccepted(dir, accept, (path) => out.push(path));
  return out;
}

/**
 * walkFiles, each file with its real path (symbolic links resolved), found without a call per
 * file where no link is on the way: the real path of its directory joined with its name.
 */
export function walkFilesWithReal(dir: string, accept: (path: string, name: string) => boolean): { path: string; real: string }[] {
  const out: { path: string; real: string }[] = [];
  walkAccepted(dir, accept, (path, realDir, name, link) => {
    if (!link) out.push({ path, real: join(realDir, name) });
    else {
      try {
        out.push({ path, real: realpathSync.native(path) });
      } catch {
        // gone since: passed over
      }
    }
  });
  return out;
}

/** The walk of walkFiles: each accepted file, with its directory's real path and whether the entry is a link. */
function walkAccepted(dir: string, accept: (path: string, name: string) => boolean, found: (path: string, realDir: string, name: string, link: boolean) => void): void {
  const walked = new Set<string>();
  const walk = (d: string): void => {
    let real: string;
    try {
      real = realpathSync.native(d);
    } catch {
      return;
    }
    if (walked.has(real)) return;
    walked.add(real);
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => byCodeUnits(a.name, b.name))) {
      const full = join(d, entry.name);
      const link = entry.isSymbolicLink();
      const kind = link ? kindOf(full) : entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : 'other';
      if (kind === 'dir') walk(full);
      else if (kind === 'file' && accept(full, entry.name)) found(full, real, entry.name, link);
    }
  };
  walk(dir);
}

function kindOf(path: string): 'dir' | 'file' | 'other' {
  try {
    const s = statSync(path);
    return s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
  } catch {
    return 'other';
  }
}
