// The Amp importer: Amp's thread documents under ~/.local/share/amp/threads (or
// $XDG_DATA_HOME/amp/threads; the legacy editor extension's globalStorage sourcegraph.amp/threads3),
// T-*.json, as tool_call and usage events. The format and its traps are in README.md.
import { MAX_DOCUMENT_BYTES, type Importer } from '../types.ts';
import { parseThreadFile } from './parser.ts';
import { defaultAmpPaths, listAmpFiles } from './paths.ts';

export const ampImporter: Importer = {
  id: 'amp',
  harnesses: ['amp'],
  samples: { fixtures: ['test/importers/fixtures-amp'], corpus: [] },
  description: 'Amp threads (~/.local/share/amp/threads or $XDG_DATA_HOME/amp/threads, and the editor extension\'s globalStorage sourcegraph.amp/threads3; T-*.json): tool calls and API usage',
  defaultPaths: () => defaultAmpPaths(),
  listFiles: (paths) => listAmpFiles(paths),
  parseFile: (path, data) => parseThreadFile(path, data),
  readingOf: () => ({ kind: 'document', maxBytes: MAX_DOCUMENT_BYTES }),
};
