// The ACP importer: captures of Agent Client Protocol traffic (session/update tool calls).
import { HARNESSES } from '../../canonical/meta.ts';
import { statSync } from 'node:fs';
import type { Importer } from '../types.ts';
import { acpReading, parseAcpFile } from './parser.ts';
import { defaultAcpPaths, listAcpFiles } from './paths.ts';

/** The file's modification time: the `ts` of tool calls in a capture whose lines carry no time. */
function mtimeMs(path: string): number | undefined {
  try {
    return Math.floor(statSync(path).mtimeMs);
  } catch {
    return undefined;
  }
}

export const acpImporter: Importer = {
  id: 'acp',
  // The harness is read from the data (any value it maps to).
  harnesses: HARNESSES,
  samples: { fixtures: ['test/importers/fixtures-acp'], corpus: [] },
  description: 'ACP captures (JSON-RPC session/update tool_call and tool_call_update lines, bare or in a {ts, msg} wrapper)',
  defaultPaths: () => defaultAcpPaths(),
  listFiles: (paths) => listAcpFiles(paths),
  parseFile(path, data) {
    const fallbackTimeMs = mtimeMs(path);
    return parseAcpFile(path, data, fallbackTimeMs !== undefined ? { fallbackTimeMs } : {});
  },
  // Streamed in two passes (see README.md).
  readingOf(path) {
    const fallbackTimeMs = mtimeMs(path);
    return { kind: 'lines', reading: acpReading(path, fallbackTimeMs !== undefined ? { fallbackTimeMs } : {}) };
  },
};
