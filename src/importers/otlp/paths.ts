// Which files under the given paths hold OTLP/JSON exports. There is no default location:
// OTLP files are wherever a collector's `file` exporter (or a test harness) wrote them.
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '../../source/file.ts';

/** No default: `toolcanon import otlp` needs the files named. */
export function defaultOtlpPaths(): string[] {
  return [];
}

/** `*.json` and `*.jsonl` files under each directory (sorted); a path naming a file is read whatever its name. */
export function listOtlpFiles(paths: readonly string[]): string[] {
  const out = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && (entry.name.endsWith('.json') || entry.name.endsWith('.jsonl'))) out.add(full);
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
