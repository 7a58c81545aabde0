// The GitHub Copilot CLI importer: session logs under ~/.copilot/session-state (or
// $COPILOT_CONFIG_DIR/session-state), <session id>/events.jsonl, as tool_call and usage events.
// The raw format and its traps are described in README.md beside this file.
import type { Importer } from '../types.ts';
import { copilotReading, parseCopilotFile } from './parser.ts';
import { defaultCopilotPaths, listCopilotFiles } from './paths.ts';

export const copilotCliImporter: Importer = {
  id: 'copilot-cli',
  harnesses: ['copilot_cli'],
  samples: { fixtures: ['test/importers/fixtures-copilot-cli'], corpus: [] },
  description: 'GitHub Copilot CLI session logs ($COPILOT_CONFIG_DIR or ~/.copilot, session-state/*/events.jsonl): tool calls and session usage',
  defaultPaths: () => defaultCopilotPaths(),
  listFiles: (paths) => listCopilotFiles(paths),
  parseFile: (path, data) => parseCopilotFile(path, data),
  readingOf: (path) => ({ kind: 'lines', reading: copilotReading({ path }) }),
};
