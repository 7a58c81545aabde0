// Which files under the given paths hold ACP captures. There is no default location: ACP is a
// wire protocol, and a capture is wherever a client, a proxy or a test recorded it.
import { listFilesUnder } from '../files.ts';

/** No default: `toolcanon import acp` needs the captures named. */
export function defaultAcpPaths(): string[] {
  return [];
}

/** `*.jsonl` files under each directory (sorted); a path naming a file is read whatever its name. */
export function listAcpFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (_path, name) => name.endsWith('.jsonl'));
}
