// The Codex importer: rollouts under ~/.codex/sessions (or $CODEX_HOME/sessions) as tool_call
// and usage events. The raw format and its traps are described in README.md beside this file.
import type { Importer } from '../types.ts';
import { defaultSessionsDir, listRolloutFiles } from './paths.ts';
import { parseRollout, rolloutReading } from './parser.ts';

export const codexImporter: Importer = {
  id: 'codex',
  harnesses: ['codex'],
  samples: { fixtures: [], corpus: ['codex', 'samples/codex'] },
  description: 'Codex CLI rollouts ($CODEX_HOME/sessions, default ~/.codex/sessions): tool calls and token usage',
  defaultPaths: () => [defaultSessionsDir()],
  listFiles: (paths) => listRolloutFiles(paths),
  parseFile: (path, data) => parseRollout(path, data),
  // Streamed in two passes (see README.md).
  readingOf: (path) => ({ kind: 'lines', reading: rolloutReading(path) }),
};
