// The Hermes Agent importer: Hermes' state database ($HERMES_HOME/state.db or ~/.hermes/state.db,
// and its profiles'), read through chdb's sqlite() table function, as tool_call events and one
// usage event per session (Hermes keeps session totals only). The format is in README.md.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MAX_DOCUMENT_BYTES, type Importer } from '../types.ts';
import { mcpServersOf, parseHermesDb } from './parser.ts';
import { defaultHermesPaths, listHermesFiles } from './paths.ts';

/** The config.yaml beside a state.db (its MCP server names split `mcp_<server>_<tool>`), when readable. */
function configBeside(path: string): string | undefined {
  try {
    return readFileSync(join(dirname(path), 'config.yaml'), 'utf8');
  } catch {
    return undefined;
  }
}

export const hermesAgentImporter: Importer = {
  id: 'hermes-agent',
  harnesses: ['hermes_agent'],
  samples: { fixtures: ['test/importers/fixtures-hermes-agent'], corpus: [] },
  description: 'Hermes Agent state database ($HERMES_HOME or ~/.hermes, state.db, SQLite read through chdb): tool calls, and each session\'s token totals as one usage',
  defaultPaths: () => defaultHermesPaths(),
  listFiles: (paths) => listHermesFiles(paths),
  parseFile: (path, data) => parseHermesDb(path, data, mcpServersOf(configBeside(path))),
  readingOf: () => ({ kind: 'document', maxBytes: MAX_DOCUMENT_BYTES }),
};
