// The pi-agent importer: pi's session files under ~/.pi/agent/sessions (or
// $PI_CODING_AGENT_DIR/sessions), **/*.jsonl, as tool_call and usage events. The raw format and
// its traps are described in README.md.
import type { Importer } from '../types.ts';
import { defaultPiPaths, listPiFiles } from './paths.ts';
import { parsePiFile, piReading } from './parser.ts';

export const piAgentImporter: Importer = {
  id: 'pi-agent',
  harnesses: ['pi_agent'],
  samples: { fixtures: ['test/importers/fixtures-pi-agent'], corpus: [] },
  description: 'pi coding agent sessions ($PI_CODING_AGENT_DIR/sessions or ~/.pi/agent/sessions, **/*.jsonl): tool calls and API usage',
  defaultPaths: () => defaultPiPaths(),
  listFiles: (paths) => listPiFiles(paths),
  parseFile: (path, data) => parsePiFile(path, data),
  readingOf: (path) => ({ kind: 'lines', reading: piReading({ path }) }),
};
