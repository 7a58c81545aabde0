// Which files under the given paths hold ACP captures. There is no default location: ACP is a
// wire protocol, and a capture is wherever a client, a proxy or a test recorded it.
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '../../source/file.ts';

/** No default: `toolcanon import acp` needs the captures named. */
export function defaultAcpPaths(): string[] {
  return [];
}

/** `*.jsonl` files under each directory (sorted); a path naming a file is read whatever its name. */
export function listAcpFiles(paths: readonly string[]): string[] {
  const out = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && entry.name.endsWith('.jsonl')) out.add(full);
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
