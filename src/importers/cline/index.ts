// The Cline importer: task folders under VS Code's globalStorage of saoudrizwan.claude-dev (or
// the Cline CLI's ~/.cline/data), tasks/<id>/ui_messages.json (usage) and
// api_conversation_history.json (tool calls). The raw format and its traps are in README.md.
import { MAX_DOCUMENT_BYTES, type Importer } from '../types.ts';
import { CLINE_FAMILY } from './family.ts';
import { parseTaskFile } from './parser.ts';
import { defaultClinePaths, listTaskFiles } from './paths.ts';

export const clineImporter: Importer = {
  id: 'cline',
  harnesses: ['cline'],
  samples: { fixtures: ['test/importers/fixtures-cline', 'test/importers/fixtures-cline-family'], corpus: [] },
  description: 'Cline task folders (VS Code globalStorage saoudrizwan.claude-dev, or $CLINE_DATA_DIR / ~/.cline/data; tasks/*/ui_messages.json and api_conversation_history.json): tool calls and API usage',
  defaultPaths: () => defaultClinePaths(),
  listFiles: (paths) => listTaskFiles(paths),
  parseFile: (path, data) => parseTaskFile(path, data, CLINE_FAMILY),
  readingOf: () => ({ kind: 'document', maxBytes: MAX_DOCUMENT_BYTES }),
};
