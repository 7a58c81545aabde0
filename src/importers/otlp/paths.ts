// Which files under the given paths hold OTLP/JSON exports. There is no default location:
// OTLP files are wherever a collector's `file` exporter (or a test harness) wrote them.
import { listFilesUnder } from '../files.ts';

/** No default: `toolcanon import otlp` needs the files named. */
export function defaultOtlpPaths(): string[] {
  return [];
}

/** `*.json` and `*.jsonl` files under each directory (sorted); a path naming a file is read whatever its name. */
export function listOtlpFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (_path, name) => name.endsWith('.json') || name.endsWith('.jsonl'));
}
