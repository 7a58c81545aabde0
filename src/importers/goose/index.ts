// The Goose importer: Goose's sessions database (~/.local/share/goose/sessions/sessions.db, or
// $GOOSE_PATH_ROOT/data/sessions, %APPDATA%\Block\goose\data\sessions), read through chdb's
// sqlite() table function, as tool_call and usage events. The format is in README.md.
import { MAX_DOCUMENT_BYTES, type Importer } from '../types.ts';
import { parseGooseDb } from './parser.ts';
import { defaultGoosePaths, listGooseFiles } from './paths.ts';

export const gooseImporter: Importer = {
  id: 'goose',
  harnesses: ['goose'],
  samples: { fixtures: ['test/importers/fixtures-goose'], corpus: [] },
  description: 'Goose sessions database ($GOOSE_PATH_ROOT/data/sessions or ~/.local/share/goose/sessions, sessions.db, SQLite read through chdb): tool calls and API usage',
  defaultPaths: () => defaultGoosePaths(),
  listFiles: (paths) => listGooseFiles(paths),
  parseFile: (path, data) => parseGooseDb(path, data),
  readingOf: () => ({ kind: 'document', maxBytes: MAX_DOCUMENT_BYTES }),
};
