// File listing shared by the importers: the files under the given paths that an importer reads.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { InputError } from '../source/file.ts';
import { byCodeUnits, walkFiles } from '../util/walk.ts';

/**
 * The files under each directory whose path `accept` takes, sorted and without repeats; a path
 * naming a file is read whatever its name. A missing path is an InputError naming it.
 */
export function listFilesUnder(paths: readonly string[], accept: (path: string, name: string) => boolean): string[] {
  const out = new Set<string>();
  const walk = (dir: string): void => {
    for (const full of walkFiles(dir, accept)) out.add(full);
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
  return [...out].sort(byCodeUnits);
}
