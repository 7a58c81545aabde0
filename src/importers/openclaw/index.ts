// The OpenClaw importer: session transcripts under ~/.openclaw (or $OPENCLAW_STATE_DIR),
// agents/*/sessions/*.jsonl, as tool_call and usage events. The raw format is pi's; what
// OpenClaw does differently is described in README.md.
import type { Importer } from '../types.ts';
import { defaultOpenclawPaths, listOpenclawFiles } from './paths.ts';
import { openclawReading, parseOpenclawFile } from './parser.ts';

export const openclawImporter: Importer = {
  id: 'openclaw',
  harnesses: ['openclaw'],
  samples: { fixtures: ['test/importers/fixtures-openclaw'], corpus: [] },
  description: 'OpenClaw session transcripts ($OPENCLAW_STATE_DIR or ~/.openclaw, agents/*/sessions/*.jsonl): tool calls and API usage',
  defaultPaths: () => defaultOpenclawPaths(),
  listFiles: (paths) => listOpenclawFiles(paths),
  parseFile: (path, data) => parseOpenclawFile(path, data),
  readingOf: (path) => ({ kind: 'lines', reading: openclawReading(path) }),
};
